"""Celery tasks of the inventory: thin wrappers around the sync engine and services."""

from __future__ import annotations

from typing import Any

from celery import shared_task
from celery.signals import worker_process_shutdown
from django.conf import settings

from apps.inventory.deviceconfig.refresh import (
    config_loaded_refresh_all,
    config_loaded_refresh_register,
)
from apps.inventory.kube import remove_ca_files
from apps.inventory.nodeconfig.policy import isolation_policy_run
from apps.inventory.selectors import connected_cluster_ids
from apps.inventory.services import usage_samples_record
from apps.inventory.sync.engine import sync_run


@worker_process_shutdown.connect
def remove_ca_files_on_shutdown(**_: Any) -> None:
    """A prefork child ends without running atexit: remove its CA files here."""
    remove_ca_files()


@shared_task(acks_late=True, ignore_result=True)
def sync_cluster_task(cluster_id: int) -> dict[str, Any]:
    """Mirror one cluster for SYNC_TASK_SECONDS (watches whose locks this worker gets)."""
    stats = sync_run(cluster_id, seconds=settings.SYNC_TASK_SECONDS)
    return {
        key: {"events": s.events, "lists": s.lists, "errors": s.errors}
        for key, s in stats.items()
    }


@shared_task(ignore_result=True)
def sync_all_clusters_task() -> int:
    """Make sure every connected cluster has its watchers (extra tasks exit at once)."""
    ids = connected_cluster_ids()
    for cluster_id in ids:
        sync_cluster_task.delay(cluster_id)
    return len(ids)


@shared_task(ignore_result=True)
def record_usage_samples_task() -> int:
    """Store one usage sample per cluster and chip type; drop samples past retention."""
    return usage_samples_record()


@shared_task(ignore_result=True)
def config_loaded_refresh_task(cluster_id: int | None = None) -> int:
    """Read when each connected cluster's scheduler started (the config it loaded).

    A cluster that cannot be reached keeps what was last read; the others go on.
    """
    return config_loaded_refresh_all(cluster_id)


@shared_task(ignore_result=True, soft_time_limit=120)
def isolation_policy_task() -> dict[str, int]:
    """Beat: isolate and restore chips by the health rules, where a site turned them on."""
    report = isolation_policy_run()
    return {
        "acted": len(report.acted),
        "refused": len(report.refused),
        "failed": len(report.failed),
    }


# How a publish or a scheduler rollout seen by sync starts a refresh
# (apps.inventory.deviceconfig.refresh cannot import this module: it runs it).
config_loaded_refresh_register(
    lambda cluster_id: config_loaded_refresh_task.delay(cluster_id)
)
