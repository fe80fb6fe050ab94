"""The scheduling app's metric families (registered in ``SchedulingConfig.ready``):
the request queue, and the conditions that need a person (docs/alerts.md):
proposals waiting for an admin, requests pending long and why, queues near
their quota, bind timeouts and released node locks.

Labels are bounded: clusters, queues and chip types are rows an admin made
(a request's chip type is checked against them when it is submitted), the
pending reason is a ``WaitClass``.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

from django.db.models import Count, Min
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from apps.audit.selectors import audit_action_counts
from apps.common.metrics_sources import ClusterNames
from apps.common.metrics_sources import age_seconds as _age
from apps.scheduling.choices import ProposalState, RequestState
from apps.scheduling.models import PreemptionProposal, Queue, Request
from apps.scheduling.nodelocks import LOCK_RELEASE_ACTION
from apps.scheduling.reconcile import BIND_TIMEOUT_ACTION
from apps.scheduling.selectors import queue_usage

#: ``wait_class`` of a pending request no pass has looked at yet.
UNCLASSIFIED = "unclassified"
#: Quota resources: the QueueQuota limit and the queue_usage figure of each.
_QUOTA = {
    "memory": ("memory_limit", "memory_used"),
    "slots": ("slots_limit", "slots_used"),
}


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


def attention_families(now: datetime, names: ClusterNames) -> Iterator[Metric]:
    """What needs a person (docs/alerts.md): a source of its own, so that the
    queue's figures above stay when one of these cannot be read."""
    yield from _pending_families(now, names)
    yield from _proposal_families(now, names)
    yield from _quota_families(names)
    yield from _counted_families(names)


def _pending_families(now: datetime, names: ClusterNames) -> Iterator[Metric]:
    """Pending requests and the oldest one's age, by queue, chip type and why."""
    labels = ["cluster", "queue", "chip_type", "reason"]
    count = GaugeMetricFamily(
        "vnpu_requests_pending",
        "Pending requests by queue, chip type and reason class (WaitClass; "
        "unclassified: no scheduling pass has looked at it yet).",
        labels=labels,
    )
    age = GaugeMetricFamily(
        "vnpu_request_pending_age_seconds",
        "Age of the oldest pending request, by queue, chip type and reason class.",
        labels=labels,
    )
    rows = (
        Request.objects.filter(state=RequestState.PENDING)
        .order_by()
        .values_list("cluster_id", "queue__name", "common_word", "wait_class")
        .annotate(n=Count("id"), first=Min("created_at"))
    )
    for cluster_id, queue, chip_type, wait_class, n, first in rows:
        key = [names.get(cluster_id, str(cluster_id)), queue, chip_type]
        key.append(wait_class or UNCLASSIFIED)
        count.add_metric(key, n)
        age.add_metric(key, _age(now, first) or 0.0)
    yield from (count, age)


def _proposal_families(now: datetime, names: ClusterNames) -> Iterator[Metric]:
    """Preemption proposals waiting for an admin, and for how long, per queue."""
    count = GaugeMetricFamily(
        "vnpu_preemption_proposals_pending",
        "Preemption proposals waiting for an admin's decision.",
        labels=["cluster", "queue"],
    )
    age = GaugeMetricFamily(
        "vnpu_preemption_proposal_oldest_pending_age_seconds",
        "Seconds the oldest proposal waiting for an admin has waited.",
        labels=["cluster", "queue"],
    )
    rows = (
        PreemptionProposal.objects.filter(state=ProposalState.PENDING)
        .order_by()
        .values_list("cluster_id", "request__queue__name")
        .annotate(n=Count("id"), first=Min("created_at"))
    )
    for cluster_id, queue, n, first in rows:
        key = [names.get(cluster_id, str(cluster_id)), queue]
        count.add_metric(key, n)
        age.add_metric(key, _age(now, first) or 0.0)
    yield from (count, age)


def _quota_families(names: ClusterNames) -> Iterator[Metric]:
    """Each limited quota (queue, chip type, memory or slots): limit, use, ratio."""
    labels = ["cluster", "queue", "chip_type", "resource"]
    limit = GaugeMetricFamily(
        "vnpu_queue_quota_limit",
        "A queue's quota for one chip type (memory in MB, slots in vNPUs).",
        labels=labels,
    )
    used = GaugeMetricFamily(
        "vnpu_queue_quota_used",
        "What the queue holds against that quota (running and reserved).",
        labels=labels,
    )
    ratio = GaugeMetricFamily(
        "vnpu_queue_quota_used_ratio",
        "Used divided by the limit (a limit of 0 is left out).",
        labels=labels,
    )
    queues = list(
        Queue.objects.filter(quotas__isnull=False).distinct().prefetch_related("quotas")
    )
    usage = queue_usage(queues)
    for queue in queues:
        held = {row["chip_type"]: row for row in usage.get(queue.pk, [])}
        for quota in queue.quotas.all():
            figures = held.get(quota.common_word, {})
            for resource, (limit_field, used_field) in _QUOTA.items():
                value = getattr(quota, limit_field)
                if value is None:
                    continue  # unlimited
                key = [
                    names.get(queue.cluster_id, str(queue.cluster_id)),
                    queue.name,
                    quota.common_word,
                    resource,
                ]
                limit.add_metric(key, value)
                used.add_metric(key, figures.get(used_field, 0))
                if value > 0:
                    ratio.add_metric(key, figures.get(used_field, 0) / value)
    yield from (limit, used, ratio)


def _counted_families(names: ClusterNames) -> Iterator[Metric]:
    """Bind timeouts and released node locks, counted from the audit log (0 for
    every cluster without one, so that Prometheus sees the first increase)."""
    families = {
        BIND_TIMEOUT_ACTION: CounterMetricFamily(
            "vnpu_bind_timeouts",
            "Pods not bound within REQUEST_BIND_TIMEOUT_SECONDS (deleted; their "
            "request was tried again).",
            labels=["cluster"],
        ),
        LOCK_RELEASE_ACTION: CounterMetricFamily(
            "vnpu_node_lock_releases",
            "Leaked scheduler node locks the portal released.",
            labels=["cluster"],
        ),
    }
    counts = audit_action_counts(list(families))
    for cluster_id, name in sorted(names.items(), key=lambda item: item[1]):
        for action, family in families.items():
            family.add_metric([name], counts.get((cluster_id, action), 0))
    yield from families.values()
