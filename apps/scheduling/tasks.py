"""Celery tasks of scheduling: thin wrappers around passes and eviction.

They take ids only and are safe to run any number of times, concurrently too:
passes hold the cluster's lock, evictions the proposal's (or drain's), and every state
change is guarded. In tests and the embedded mode Celery runs them eagerly
(inside ``transaction.on_commit`` callbacks), which is why none of them needs
its caller's transaction.
"""

from __future__ import annotations

from typing import Any

from celery import shared_task
from django.db.models import Q
from django.utils import timezone

from apps.common.queueing import enqueue
from apps.inventory.models import Cluster
from apps.scheduling import kube, triggers
from apps.scheduling.choices import (
    ACTIVE_STATES,
    EVICTING_DRAIN_STATES,
    ProposalState,
)
from apps.scheduling.drain.evict import drain_evict
from apps.scheduling.eviction import victims_evict
from apps.scheduling.models import Drain, PreemptionProposal, Request
from apps.scheduling.passes import scheduling_pass
from apps.scheduling.volcano import volcano_queues_ensure


@shared_task(ignore_result=True, soft_time_limit=120)
def allocate_cluster_task(cluster_id: int) -> dict[str, Any] | None:
    """One scheduling pass (reconcile, reserve, admit) for a cluster."""
    report = scheduling_pass(cluster_id)
    if report is None:
        return None
    return {
        "reserved": report.allocation.reserved,
        "proposed": report.allocation.proposed,
        "admitted": report.admitted,
    }


@shared_task(ignore_result=True, soft_time_limit=120)
def reconcile_requests_task(cluster_id: int) -> bool:
    """Reconcile a cluster's requests; reserve and admit too if room was freed."""
    return scheduling_pass(cluster_id, only_if_freed=True) is not None


@shared_task(ignore_result=True, soft_time_limit=120)
def ensure_volcano_queues_task(cluster_id: int) -> dict[str, Any] | None:
    """Keep the cluster's Volcano Queues in step; then a pass if requests are pending."""
    cluster = Cluster.objects.filter(pk=cluster_id).first()
    if cluster is None:
        return None
    ops = kube.ops_for(cluster)
    try:
        report = volcano_queues_ensure(cluster, ops=ops)
    finally:
        ops.close()
    if Request.objects.filter(cluster_id=cluster_id, state__in=ACTIVE_STATES).exists():
        allocate_cluster_task.delay(cluster_id)
    return {"created": report.created, "updated": report.updated}


@shared_task(ignore_result=True, soft_time_limit=120)
def evict_victims_task(proposal_id: int) -> str | None:
    """Evict the victims of an approved proposal (retried by beat when a PDB says not now)."""
    report = victims_evict(proposal_id)
    return None if report is None else report.state


@shared_task(ignore_result=True, soft_time_limit=120)
def evict_drain_task(drain_id: int) -> str | None:
    """Evict the pods a drain may evict now (retried by beat when a PDB says not now)."""
    report = drain_evict(drain_id)
    return None if report is None else report.state


@shared_task(ignore_result=True)
def schedule_clusters_task() -> int:
    """Beat: a pass for each cluster with work, and the evictions that are due.

    Returns the number of passes enqueued.
    """
    busy = (
        Request.objects.filter(Q(state__in=ACTIVE_STATES) | Q(pod_cleanup=True))
        .order_by()
        .values_list("cluster_id", flat=True)
        .distinct()
    )
    cluster_ids = sorted(set(busy))
    for cluster_id in cluster_ids:
        allocate_cluster_task.delay(cluster_id)
    # Approved ones whose task was lost, and victims a PDB held back, when due.
    # (Evicting ones without a retry time are only waiting for their victims to go.)
    due = PreemptionProposal.objects.filter(
        Q(state=ProposalState.APPROVED)
        | Q(state=ProposalState.EVICTING, next_attempt_at__lte=timezone.now())
    )
    for proposal_id in due.values_list("pk", flat=True):
        evict_victims_task.delay(proposal_id)
    # Drains with pods left to evict (drain_evict returns at once when none is
    # approved and due), and those a PDB held back, when due.
    drains = Drain.objects.filter(state__in=EVICTING_DRAIN_STATES).filter(
        Q(next_attempt_at__isnull=True) | Q(next_attempt_at__lte=timezone.now())
    )
    for drain_id in drains.values_list("pk", flat=True):
        evict_drain_task.delay(drain_id)
    return len(cluster_ids)


# How services, decisions and the sync hooks start these (apps.scheduling.triggers):
# through ``enqueue``, so a broker that is down is logged, not raised.
triggers.register("pass", lambda cluster_id: enqueue(allocate_cluster_task, cluster_id))
triggers.register(
    "reconcile", lambda cluster_id: enqueue(reconcile_requests_task, cluster_id)
)
triggers.register("evict", lambda proposal_id: enqueue(evict_victims_task, proposal_id))
triggers.register("drain", lambda drain_id: enqueue(evict_drain_task, drain_id))
