"""The metric families read at scrape time: database rows, task records, the broker.

Each function yields prometheus-client metric families built from what is
stored *now*, so every web replica reports the same values whichever process
did the work (see ``apps.common.metrics``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db.models import Count, Min, Sum
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from apps.common.ids import is_ascii_digits

log = logging.getLogger(__name__)

_USAGE = {
    # Chip column -> (metric name, help)
    "chips": ("vnpu_chips", "Physical chips."),
    "memory": ("vnpu_memory_megabytes", "Device memory HAMi offers (devmem), MB."),
    "memory_used": ("vnpu_memory_used_megabytes", "Device memory held by slices, MB."),
    "slots": ("vnpu_slots", "vNPU slots (count)."),
    "slots_used": ("vnpu_slots_used", "vNPU slots held."),
    "aicore": ("vnpu_aicore", "AICores."),
    "aicore_used": ("vnpu_aicore_used", "AICores held."),
    "aicpu": ("vnpu_aicpu", "AICPUs."),
    "aicpu_used": ("vnpu_aicpu_used", "AICPUs held."),
}


def _age(now: datetime, then: datetime | None) -> float | None:
    return (now - then).total_seconds() if then else None


def cluster_names() -> dict[int, str]:
    """Cluster id -> name (metrics are labelled by name)."""
    from apps.inventory.models import Cluster

    return dict(Cluster.objects.values_list("id", "name"))


def sync_families(now: datetime, names: dict[int, str]) -> Iterator[Metric]:
    """Sync state and lag per cluster; age, failures, restarts, relists per stream."""
    from apps.inventory.models import Cluster, SyncCursor

    state = GaugeMetricFamily(
        "vnpu_cluster_sync_state",
        "1 for the cluster's current sync state (ok, stale, error, never).",
        labels=["cluster", "state"],
    )
    for cluster_id, sync_state in Cluster.objects.values_list("id", "sync_state"):
        state.add_metric([names[cluster_id], str(sync_state)], 1)
    lag = GaugeMetricFamily(
        "vnpu_cluster_sync_lag_seconds",
        "Seconds since the least recently confirmed stream of the cluster was in "
        "step with the API server (grows while a watch is down).",
        labels=["cluster"],
    )
    per_stream: dict[str, Any] = {
        "age": GaugeMetricFamily(
            "vnpu_sync_stream_last_success_age_seconds",
            "Seconds since one stream (list+watch of one resource) last succeeded.",
            labels=["cluster", "resource"],
        ),
        "failing": GaugeMetricFamily(
            "vnpu_sync_stream_failing",
            "1 when the stream's last error is newer than its last success.",
            labels=["cluster", "resource"],
        ),
        "restarts": CounterMetricFamily(
            "vnpu_sync_watch_restarts",
            "Watchers that resumed a stream from its stored resourceVersion (a "
            "worker handed over, restarted or died).",
            labels=["cluster", "resource"],
        ),
        "relists": CounterMetricFamily(
            "vnpu_sync_relists",
            "Full relists after the API server expired the resourceVersion (410).",
            labels=["cluster", "resource"],
        ),
        "events": CounterMetricFamily(
            "vnpu_sync_events",
            "Watch events applied to the database.",
            labels=["cluster", "resource"],
        ),
    }
    oldest: dict[int, datetime | None] = {}
    cursors = SyncCursor.objects.values_list(
        "cluster_id",
        "resource",
        "last_success_at",
        "last_error",
        "last_error_at",
        "restarts",
        "relists",
        "events",
    )
    for (
        cluster_id,
        resource,
        success,
        error,
        error_at,
        restarts,
        relists,
        events,
    ) in cursors:
        labels = [names.get(cluster_id, str(cluster_id)), resource]
        age = _age(now, success)
        if age is not None:
            per_stream["age"].add_metric(labels, age)
        failing = bool(error) and (
            success is None or (error_at is not None and error_at > success)
        )
        per_stream["failing"].add_metric(labels, int(failing))
        per_stream["restarts"].add_metric(labels, restarts)
        per_stream["relists"].add_metric(labels, relists)
        per_stream["events"].add_metric(labels, events)
        # A stream that never succeeded leaves the cluster without a lag value.
        previous = oldest.get(cluster_id, now)
        oldest[cluster_id] = (
            None if success is None or previous is None else min(previous, success)
        )
    for cluster_id, since in oldest.items():
        if since is not None and cluster_id in names:
            lag.add_metric([names[cluster_id]], _age(now, since) or 0.0)
    yield state
    yield lag
    yield from per_stream.values()


def usage_families(names: dict[int, str]) -> Iterator[Metric]:
    """Capacity and use per cluster and chip type, summed from the Chip rows."""
    from apps.inventory.models import Chip

    sums = {key: Sum(key) for key in _USAGE if key != "chips"}
    rows = (
        Chip.objects.order_by()
        .values("cluster_id", "common_word")
        .annotate(chips=Count("id"), **sums)
    )
    families = {
        key: GaugeMetricFamily(name, text, labels=["cluster", "chip_type"])
        for key, (name, text) in _USAGE.items()
    }
    for row in rows:
        labels = [
            names.get(row["cluster_id"], str(row["cluster_id"])),
            row["common_word"],
        ]
        for key, family in families.items():
            family.add_metric(labels, float(row[key] or 0))
    yield from families.values()


def scheduling_families(now: datetime, names: dict[int, str]) -> Iterator[Metric]:
    """The request queue: requests per cluster and state, and the oldest pending one."""
    from apps.scheduling.choices import RequestState
    from apps.scheduling.models import Request

    by_state = GaugeMetricFamily(
        "vnpu_requests",
        "Scheduling requests per cluster and state (state=pending is the queue).",
        labels=["cluster", "state"],
    )
    rows = (
        Request.objects.order_by()
        .values_list("cluster_id", "state")
        .annotate(n=Count("id"))
    )
    for cluster_id, state, count in rows:
        by_state.add_metric([names.get(cluster_id, str(cluster_id)), state], count)
    oldest = GaugeMetricFamily(
        "vnpu_request_oldest_pending_age_seconds",
        "Age of the oldest request still waiting for capacity, per cluster.",
        labels=["cluster"],
    )
    pending = (
        Request.objects.filter(state=RequestState.PENDING)
        .order_by()
        .values_list("cluster_id")
        .annotate(first=Min("created_at"))
    )
    for cluster_id, first in pending:
        oldest.add_metric(
            [names.get(cluster_id, str(cluster_id))], _age(now, first) or 0.0
        )
    yield from (by_state, oldest)


def task_families(names: dict[int, str]) -> Iterator[Metric]:
    """Task runs and durations from every worker (``apps.common.task_metrics``)."""
    from apps.common.task_metrics import snapshot

    runs = CounterMetricFamily(
        "vnpu_task_runs", "Celery task runs finished.", labels=["task", "cluster"]
    )
    failures = CounterMetricFamily(
        "vnpu_task_failures",
        "Celery task runs that did not succeed.",
        labels=["task", "cluster"],
    )
    seconds = CounterMetricFamily(
        "vnpu_task_seconds",
        "Total time spent in the task.",
        labels=["task", "cluster"],
    )
    last = GaugeMetricFamily(
        "vnpu_task_last_duration_seconds",
        "Duration of the task's most recent run.",
        labels=["task", "cluster"],
    )
    allocator = GaugeMetricFamily(
        "vnpu_allocator_pass_seconds",
        "Duration of the most recent scheduling pass (reconcile, reserve, admit).",
        labels=["cluster"],
    )
    for task, cluster, values in snapshot():
        cluster_label = (
            names.get(int(cluster), cluster) if is_ascii_digits(cluster) else ""
        )
        labels = [task, cluster_label]
        runs.add_metric(labels, values.get("runs", 0))
        failures.add_metric(labels, values.get("failures", 0))
        seconds.add_metric(labels, values.get("sum", 0.0))
        last.add_metric(labels, values.get("last", 0.0))
        if task.endswith("allocate_cluster_task") and cluster_label:
            allocator.add_metric([cluster_label], values.get("last", 0.0))
    yield from (runs, failures, seconds, last, allocator)


def broker_families() -> Iterator[Metric]:
    """Tasks waiting in the Celery broker (Redis only), per queue."""
    url = str(getattr(settings, "CELERY_BROKER_URL", "") or "")
    if not url.startswith(("redis://", "rediss://")):
        return
    up = GaugeMetricFamily("vnpu_broker_up", "1 when the Celery broker answered.")
    depth = GaugeMetricFamily(
        "vnpu_task_queue_length",
        "Celery tasks waiting in the broker, per queue.",
        labels=["queue"],
    )
    try:
        import redis

        client = redis.Redis.from_url(url, socket_connect_timeout=1, socket_timeout=1)
        try:
            queue = str(getattr(settings, "CELERY_TASK_DEFAULT_QUEUE", "") or "celery")
            depth.add_metric([queue], client.llen(queue))
        finally:
            client.close()
    except Exception as exc:  # a dead broker is a value, not a failed scrape
        log.warning("metrics: the broker did not answer: %s", type(exc).__name__)
        up.add_metric([], 0)
        yield up
        return
    up.add_metric([], 1)
    yield from (up, depth)
