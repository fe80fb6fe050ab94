"""One scheduling pass over a cluster: reconcile, reserve, admit.

A pass holds the lock ``allocate:<cluster id>`` (PostgreSQL advisory lock, or
flock): however many workers run, one pass per cluster runs at a time, and a
killed worker's lock dies with it. A pass that finds the lock taken does
nothing itself but leaves its wish (``PassWanted``), and the running pass runs
once more when it sees it: the work is never left to the next beat.

1. reconcile: requests and proposals follow what sync shows; the portal's
   Volcano Queues are created or corrected (``volcano.volcano_queues_ensure``);
2. reserve (``services.allocations.allocation_create``): one transaction books room,
   leaving out (pending, with the reason) requests whose namespace the
   cluster's namespace list lacks;
3. admit (``admission.requests_admit``): pods are created for the booked
   requests, outside any transaction.

A worker killed between 2 and 3 leaves Reserved requests with their room held
and their pod names fixed; the next pass creates the pods (step 3 runs for
every Reserved request, not only this pass's).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime

from apps.common import locks
from apps.common.crashpoints import crash_point
from apps.inventory.models import Cluster
from apps.scheduling import kube, selectors
from apps.scheduling.admission import requests_admit
from apps.scheduling.allocator import InvalidSnapshot
from apps.scheduling.models import PassWanted
from apps.scheduling.reconcile import ReconcileReport, requests_reconcile
from apps.scheduling.services import allocations
from apps.scheduling.volcano import volcano_queues_ensure

log = logging.getLogger(__name__)


@dataclass
class PassReport:
    """What one pass did."""

    reconciled: ReconcileReport | None = None
    allocation: allocations.AllocationOutcome = field(
        default_factory=allocations.AllocationOutcome
    )
    admitted: list[int] = field(default_factory=list)


def lock_name(cluster_id: int) -> str:
    """The lock every scheduling pass of a cluster holds."""
    return f"allocate:{cluster_id}"


def _namespaces(ops: kube.ClusterOps) -> set[str] | None:
    """The cluster's namespaces (one LIST per pass), or None when it cannot answer.

    None leaves every request in the allocation: an unreachable API server
    fails the pod creation transiently anyway, and the next pass tries again.
    """
    try:
        return ops.namespaces()
    except kube.KubeError as exc:
        log.warning("cannot list namespaces: %s", exc)
        return None


# A pass that ends with another one wanted runs again, at most this many
# times in a row (a steady stream of wishes is then left to beat).
RERUNS_MAX = 5


def scheduling_pass(
    cluster_id: int, *, only_if_freed: bool = False, now: datetime | None = None
) -> PassReport | None:
    """Reconcile, then reserve and admit, for one cluster.

    The wish for a pass is written before the lock is tried, and a pass
    clears it as it starts: a pass that finds the lock taken leaves its wish
    to the running one, which looks again after it released the lock and
    runs once more. What a skipped pass would have seen (a pod bound while
    the running pass admitted it) is thus never lost.

    Args:
        cluster_id: The cluster.
        only_if_freed: Stop after reconciling unless it freed room or readied
            a request (the sync hook's cheap path).
        now: "Now" (tests).

    Returns:
        The report of the last pass this call ran, or None when another pass
        held the cluster's lock (it runs again for this call's wish).
    """
    PassWanted.objects.bulk_create(
        [PassWanted(cluster_id=cluster_id)], ignore_conflicts=True
    )
    report = None
    for _ in range(1 + RERUNS_MAX):
        ran = _pass_once(cluster_id, only_if_freed=only_if_freed, now=now)
        if ran is None:
            return report
        report = ran
        if not PassWanted.objects.filter(cluster_id=cluster_id).exists():
            return report
        # Someone asked while it ran: a whole pass this time, whatever they
        # wanted (the wish does not say).
        only_if_freed = False
    return report


def _pass_once(
    cluster_id: int, *, only_if_freed: bool, now: datetime | None
) -> PassReport | None:
    """One pass under the cluster's lock; None when another pass holds it."""
    with locks.held(lock_name(cluster_id)) as lock:
        if lock is None:
            return None
        PassWanted.objects.filter(cluster_id=cluster_id).delete()
        cluster = Cluster.objects.filter(pk=cluster_id).first()
        if cluster is None:
            return None
        report = PassReport()
        ops = kube.ops_for(cluster)
        try:
            report.reconciled = requests_reconcile(cluster, ops=ops, now=now)
            if only_if_freed and not report.reconciled.freed:
                return report
            volcano_queues_ensure(cluster, ops=ops)
            try:
                # The namespace LIST only when something may be placed.
                namespaces = (
                    _namespaces(ops) if selectors.has_pending(cluster_id) else None
                )
                report.allocation = allocations.allocation_create(
                    cluster_id=cluster_id, namespaces=namespaces, now=now
                )
            except InvalidSnapshot:
                # Rows that contradict each other (a bug or a half-synced
                # cluster): nothing was booked; admit what is booked already.
                log.exception("cluster %s: allocation skipped", cluster_id)
            crash_point("after_reserve")
            report.admitted = requests_admit(cluster, ops=ops, now=now)
        finally:
            ops.close()
        return report
