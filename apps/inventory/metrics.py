"""The inventory's metric families: sync health per cluster and stream, and
capacity and use per chip type (registered in ``InventoryConfig.ready``)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

from django.db.models import Count, Q, Sum
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from apps.common.metrics_sources import ClusterNames
from apps.common.metrics_sources import age_seconds as _age
from apps.inventory.choices import ConnectionKind
from apps.inventory.models import Chip, Cluster, SyncCursor

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


def cluster_names() -> dict[int, str]:
    """Cluster id -> name (metrics are labelled by name)."""
    return dict(Cluster.objects.values_list("id", "name"))


def sync_families(now: datetime, names: ClusterNames) -> Iterator[Metric]:
    """Sync state and lag per cluster; age, failures, restarts, relists per stream."""
    state = GaugeMetricFamily(
        "vnpu_cluster_sync_state",
        "1 for the cluster's current sync state (ok, stale, error, never).",
        labels=["cluster", "state"],
    )
    for cluster_id, sync_state in Cluster.objects.values_list("id", "sync_state"):
        state.add_metric([names[cluster_id], str(sync_state)], 1)
    yield state
    yield from _stream_families(now, names)


def _stream_families(now: datetime, names: ClusterNames) -> Iterator[Metric]:
    """Per stream (one resource of one cluster), from the SyncCursor rows; and
    each cluster's lag, from its least recently confirmed stream."""
    lag = GaugeMetricFamily(
        "vnpu_cluster_sync_lag_seconds",
        "Seconds since the least recently confirmed stream of the cluster was in "
        "step with the API server (grows while a watch is down).",
        labels=["cluster"],
    )
    per_stream = _stream_family_set()
    counters = ("restarts", "crashes", "relists", "events")
    oldest: dict[int, datetime | None] = {}
    # A cluster no longer connected keeps its cursors, and a resource the API
    # server does not serve never succeeds: neither is a stream that lags.
    cursors = SyncCursor.objects.exclude(
        cluster__connection=ConnectionKind.NONE
    ).values(
        "cluster_id",
        "resource",
        "last_success_at",
        "last_error",
        "last_error_at",
        "served",
        *counters,
    )
    for cursor in cursors:
        cluster_id, success = cursor["cluster_id"], cursor["last_success_at"]
        labels = [names.get(cluster_id, str(cluster_id)), cursor["resource"]]
        age = _age(now, success)
        if age is not None and cursor["served"]:
            per_stream["age"].add_metric(labels, age)
        error_at = cursor["last_error_at"]
        failing = bool(cursor["last_error"]) and (
            success is None or (error_at is not None and error_at > success)
        )
        per_stream["failing"].add_metric(labels, int(failing))
        for counter in counters:
            per_stream[counter].add_metric(labels, cursor[counter])
        if not cursor["served"]:
            continue
        # A stream that never succeeded leaves the cluster without a lag value.
        previous = oldest.get(cluster_id, now)
        oldest[cluster_id] = (
            None if success is None or previous is None else min(previous, success)
        )
    for cluster_id, since in oldest.items():
        if since is not None and cluster_id in names:
            lag.add_metric([names[cluster_id]], _age(now, since) or 0.0)
    yield lag
    yield from per_stream.values()


def _stream_family_set() -> dict[str, Any]:
    """The per-stream families, by the SyncCursor field (or figure) each reports."""
    labels = ["cluster", "resource"]
    return {
        "age": GaugeMetricFamily(
            "vnpu_sync_stream_last_success_age_seconds",
            "Seconds since one stream (list+watch of one resource) last succeeded.",
            labels=labels,
        ),
        "failing": GaugeMetricFamily(
            "vnpu_sync_stream_failing",
            "1 when the stream's last error is newer than its last success.",
            labels=labels,
        ),
        "restarts": CounterMetricFamily(
            "vnpu_sync_watch_restarts",
            "Watchers that resumed a stream from its stored resourceVersion (a "
            "worker handed over, restarted or died).",
            labels=labels,
        ),
        "crashes": CounterMetricFamily(
            "vnpu_sync_watcher_crashes",
            "Watchers of the stream that died of an unexpected error and were "
            "restarted (each is logged once with its traceback).",
            labels=labels,
        ),
        "relists": CounterMetricFamily(
            "vnpu_sync_relists",
            "Full relists after the API server expired the resourceVersion (410).",
            labels=labels,
        ),
        "events": CounterMetricFamily(
            "vnpu_sync_events",
            "Watch events applied to the database.",
            labels=labels,
        ),
    }


def usage_families(now: datetime, names: ClusterNames) -> Iterator[Metric]:
    """Capacity and use per cluster and chip type, summed from the Chip rows."""
    sums = {key: Sum(key) for key in _USAGE if key != "chips"}
    # An isolated chip the device plugin no longer registers is no capacity.
    rows = (
        Chip.objects.order_by()
        .filter(registered=True)
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


def chip_health_families(now: datetime, names: ClusterNames) -> Iterator[Metric]:
    """Chips their device plugin reports unhealthy: one series per such chip
    (bounded by the chips; a healthy chip has none), and a count per chip type."""
    per_chip = GaugeMetricFamily(
        "vnpu_chip_unhealthy",
        "1 for each chip its device plugin registers as unhealthy.",
        labels=["cluster", "node", "chip", "chip_type"],
    )
    counts = GaugeMetricFamily(
        "vnpu_chips_unhealthy",
        "Chips registered as unhealthy, per cluster and chip type.",
        labels=["cluster", "chip_type"],
    )
    # Isolating the chip is the remedy: once the plugin no longer registers
    # it, it is not reported (its last registered health stays on the row).
    sick = Chip.objects.filter(healthy=False, registered=True).order_by()
    for cluster_id, node, uuid, chip_type in sick.values_list(
        "cluster_id", "node__name", "uuid", "common_word"
    ):
        per_chip.add_metric(
            [names.get(cluster_id, str(cluster_id)), node, uuid, chip_type], 1
        )
    rows = (
        Chip.objects.order_by()
        .values_list("cluster_id", "common_word")
        .annotate(n=Count("id", filter=Q(healthy=False, registered=True)))
    )
    for cluster_id, chip_type, n in rows:
        counts.add_metric([names.get(cluster_id, str(cluster_id)), chip_type], n)
    yield from (per_chip, counts)
