"""The request queue's metric families (registered in ``SchedulingConfig.ready``)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

from django.db.models import Count, Min
from prometheus_client.core import GaugeMetricFamily, Metric

from apps.common.metrics_sources import ClusterNames
from apps.common.metrics_sources import age_seconds as _age
from apps.scheduling.choices import RequestState
from apps.scheduling.models import Request


def scheduling_families(now: datetime, names: ClusterNames) -> Iterator[Metric]:
    """The request queue: requests per cluster and state, and the oldest pending one."""
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
