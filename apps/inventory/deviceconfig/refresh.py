"""Reading when the cluster's scheduler started, so the version in effect is known.

A service (it writes the cluster's ``config_loaded_*`` fields), run by a beat
task, after a scheduler rollout that sync sees, and after a publish. The rule
it feeds is in :mod:`apps.inventory.deviceconfig.in_effect`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from apps.common.exceptions import ClusterUnavailable, NotFound
from apps.inventory.deviceconfig.in_effect import oldest_running_start
from apps.inventory.deviceconfig.restarts import restart_component_get, restart_states
from apps.inventory.deviceconfig.versions import (
    cluster_components,
    first_of,
    kind_by_name,
)
from apps.inventory.models import Cluster
from apps.inventory.scheduler import scheduler_in_effect
from apps.inventory.selectors import connected_cluster_ids

log = logging.getLogger(__name__)

#: How a refresh starts in the background: ``apps.inventory.tasks`` registers
#: its task here when imported (``InventoryConfig.ready`` imports it, as the
#: worker's autodiscovery does). The task runs this module's services, so this
#: module cannot import the tasks; the same turn as ``apps.scheduling.triggers``.
_background: Callable[[int], Any] | None = None


def config_loaded_refresh_register(start: Callable[[int], Any]) -> None:
    """Say how a refresh of one cluster starts in the background (the tasks do)."""
    global _background
    _background = start


def _start_in_background(cluster_id: int) -> None:
    if _background is None:
        # Only when apps.inventory.tasks was never imported; beat's periodic
        # refresh still reads it, late.
        log.error("no background refresh registered for cluster %s", cluster_id)
        return
    _background(cluster_id)


def config_loaded_refresh(cluster: Cluster) -> datetime | None:
    """Read when the cluster's scheduler started, and store it.

    The scheduler is the one requests go to (``scheduler_in_effect``); see
    :func:`~apps.inventory.deviceconfig.in_effect.oldest_running_start` for
    which of its pods counts. Nothing is stored when the cluster cannot be
    reached (the last known start stays).

    Raises:
        ClusterUnavailable: The cluster could not be reached.
    """
    kind = scheduler_in_effect(cluster).kind
    name = _scheduler_workload(cluster, kind)
    try:
        component = restart_component_get(name)
    except NotFound:
        return None
    (row,) = restart_states(cluster, only=component)["components"]
    started = oldest_running_start(row["pods"])
    Cluster.objects.filter(pk=cluster.pk).update(
        config_loaded_at=started,
        config_loaded_by=name,
        config_loaded_checked_at=timezone.now(),
    )
    cluster.config_loaded_at, cluster.config_loaded_by = started, name
    return started


def _scheduler_workload(cluster: Cluster, kind: str) -> str:
    """The name of the watched Deployment that runs the scheduler of ``kind``:
    the one sync saw by its image, else the one named as the guide names it."""
    seen = first_of(cluster_components(cluster), kind)  # type: ignore[arg-type]
    if seen is not None and seen.workload.startswith("Deployment "):
        return seen.workload.split("/", 1)[1]
    for ref in settings.WATCHED_DEPLOYMENTS:
        name = ref.split("/", 1)[1]
        if kind_by_name(name) == kind:
            return name
    return ""


def config_loaded_refresh_soon(cluster_id: int) -> None:
    """Read the scheduler's start again once the current transaction commits.

    Called when it may have changed or matter at once: a scheduler Deployment
    event seen by sync (a rollout moves its status as pods start and go), a
    publish (the start must be known before a request is placed by it).
    """
    transaction.on_commit(lambda: _start_in_background(cluster_id))


def config_loaded_refresh_all(cluster_id: int | None = None) -> int:
    """:func:`config_loaded_refresh` for one or every connected cluster; how many were read."""
    ids = [cluster_id] if cluster_id is not None else connected_cluster_ids()
    read = 0
    for cluster in Cluster.objects.filter(pk__in=ids):
        try:
            config_loaded_refresh(cluster)
        except ClusterUnavailable as error:
            log.info("config in effect of %s not read: %s", cluster.name, error)
            continue
        read += 1
    return read
