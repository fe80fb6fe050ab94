"""The portal's own gauges derived from usage: idle and over-memory slices,
and the month's cost so far per queue, for a site's dashboards.

Computing them asks Prometheus, which a scrape of ``/metrics`` must not wait
for: the periodic refresh stores them in the shared cache and a scrape reads
what is there (every web replica reports the same values).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

from django.conf import settings
from django.core.cache import cache
from prometheus_client.core import GaugeMetricFamily, Metric

from apps.common.metrics_sources import ClusterNames
from apps.inventory.models import Cluster
from apps.metering.selectors import slice_counts, usage_report

CACHE_KEY = "vnpu:metering:gauges"


def month_start(now: datetime) -> datetime:
    return now.replace(day=1, hour=0, minute=0, second=0, microsecond=0)


def gauges_refresh(*, now: datetime) -> dict[str, Any]:
    """Compute the gauges of every cluster and store them for the scrapes."""
    clusters: dict[str, Any] = {}
    for cluster in Cluster.objects.all():
        status, counts = slice_counts(cluster)
        # Cost needs bookings and prices only: Prometheus is not asked for it.
        _, report = usage_report(
            cluster, start=month_start(now), end=now, group_by="queue", measure=False
        )
        clusters[str(cluster.id)] = {
            "available": status.available,
            "idle": counts.get("idle", 0),
            "over_memory": counts.get("over_memory", 0),
            "cost": {r.group: float(r.cost) for r in report.rows if r.cost is not None},
        }
    # Kept for three refreshes: a stopped worker's figures go away, not stay.
    cache.set(CACHE_KEY, clusters, timeout=settings.METERING_REFRESH_SECONDS * 3)
    return clusters


def metering_families(now: datetime, names: ClusterNames) -> Iterator[Metric]:
    """The cached gauges (none before the first refresh)."""
    stored = cache.get(CACHE_KEY) or {}
    idle = GaugeMetricFamily(
        "vnpu_idle_slices",
        "Slices whose AICore use stayed at or under IDLE_SLICE_PERCENT for "
        "IDLE_SLICE_AFTER_SECONDS (from Prometheus).",
        labels=["cluster"],
    )
    over = GaugeMetricFamily(
        "vnpu_over_memory_slices",
        "Slices using more device memory than they booked (from Prometheus).",
        labels=["cluster"],
    )
    cost = GaugeMetricFamily(
        "vnpu_cost_month_to_date",
        "Cost of the slices each queue booked since the month began (by the "
        "part of the card each slice booked and its chip type's price).",
        labels=["cluster", "queue", "currency"],
    )
    for cluster_id, figures in stored.items():
        name = names.get(int(cluster_id))
        if name is None:
            continue
        if figures["available"]:
            idle.add_metric([name], figures["idle"])
            over.add_metric([name], figures["over_memory"])
        for queue, amount in figures["cost"].items():
            cost.add_metric([name, queue, settings.COST_CURRENCY], amount)
    yield idle
    yield over
    yield cost
