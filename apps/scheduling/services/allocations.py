"""The allocator adapter: ``allocation_create`` books one allocation pass.

One transaction locks the cluster's row and the pending requests in
primary-key order, converts rows to the allocator's dataclasses, calls
``allocate``, persists reservations and proposals, and enqueues follow-ups on
commit. Creating pods is not done here: it talks to the cluster, which never
happens inside a transaction (see ``apps.scheduling.admission``).
"""

from __future__ import annotations

from collections.abc import Container, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from apps.inventory.models import Cluster
from apps.inventory.scheduler import scheduler_in_effect
from apps.scheduling import allocator as alloc
from apps.scheduling.allocation import hold, hold_for_namespace, persist_result
from apps.scheduling.choices import RequestState
from apps.scheduling.decisions import approve_now
from apps.scheduling.models import Request
from apps.scheduling.snapshot import build_snapshot
from apps.scheduling.volcano import hold_reason, volcano_queues


@dataclass
class AllocationOutcome:
    """What one allocation transaction decided (request ids)."""

    reserved: list[int] = field(default_factory=list)
    proposed: list[int] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)
    waiting: list[int] = field(default_factory=list)


def allocation_create(
    *,
    cluster_id: int,
    request_ids: Sequence[int] | None = None,
    requested_by: Any = None,
    namespaces: Container[str] | None = None,
    now: datetime | None = None,
) -> AllocationOutcome:
    """Run the allocator on the cluster's pending requests and book the result.

    Capacity is booked as Reservation rows in the same transaction that reads
    the usage, and every writer of reservations first locks the cluster's row
    (``SELECT ... FOR NO KEY UPDATE``, which does not block sync's inserts), so
    two passes never book the same room: the second waits, then reads the
    first one's reservations. Pending requests are locked in primary-key order.
    On SQLite (no row locks) the IMMEDIATE transaction serialises writers.

    Args:
        cluster_id: The cluster.
        request_ids: Only these pending requests (default: all of the cluster's).
        requested_by: Who asked (None for the scheduler); kept for the audit
            of auto-approved preemptions.
        namespaces: The cluster's namespaces, when the pass could list them:
            a request whose namespace is not among them stays pending with
            the reason, before any room is booked (None: not checked).
        now: "Now" (tests).

    Returns:
        The requests reserved, proposed for, failed (invalid) and left waiting.
    """
    now = now or timezone.now()
    with transaction.atomic():
        cluster = (
            Cluster.objects.select_for_update(no_key=True).filter(pk=cluster_id).first()
        )
        if cluster is None:
            return AllocationOutcome()
        pending = _pending_locked(cluster, request_ids)
        pending, held = _hold_unschedulable(cluster, pending, namespaces)
        if not pending:
            return AllocationOutcome(waiting=held)
        snap = build_snapshot(cluster, pending, now)
        # Volcano binds to any fitting chip of the node the portal names: there,
        # only what the node places under every chip choice is sent (volcano_room).
        result = alloc.allocate_for_volcano(
            snap.requests,
            snap.chips,
            snap.rules,
            policy=_policy(cluster),
            quotas=snap.quotas,
            running=snap.running,
            now_s=now.timestamp(),
            unbound=snap.unbound,
        )
        decided = persist_result(
            cluster,
            result,
            {r.pk: r for r in pending},
            snap,
            now,
            actor=requested_by,
            approve=approve_now,
        )
        decided["waiting"].extend(held)
    return AllocationOutcome(**decided)


def _pending_locked(
    cluster: Cluster, request_ids: Sequence[int] | None
) -> list[Request]:
    """The cluster's pending requests (only ``request_ids`` if given), locked in
    primary-key order so that concurrent passes never wait on each other in a loop."""
    pending_qs = Request.objects.filter(cluster=cluster, state=RequestState.PENDING)
    if request_ids is not None:
        pending_qs = pending_qs.filter(pk__in=list(request_ids))
    return list(
        pending_qs.select_for_update(of=("self",))
        .select_related("queue")
        .order_by("pk")
    )


def _hold_unschedulable(
    cluster: Cluster, pending: list[Request], namespaces: Container[str] | None
) -> tuple[list[Request], list[int]]:
    """Hold, with the reason, the requests whose pod could not run anyway.

    Returns:
        The requests left to allocate, and the ids of those held.
    """
    held: list[int] = []
    if namespaces is not None:
        held = hold_for_namespace([r for r in pending if r.namespace not in namespaces])
        pending = [r for r in pending if r.pk not in held]
    # A pod sent into a Volcano queue that is missing or not Open is never
    # scheduled: such requests wait, saying why, until sync sees it Open.
    mirror = volcano_queues(cluster.pk)
    held += hold(
        [
            (r, why)
            for r in pending
            if (why := hold_reason(r.queue.name, mirror)) is not None
        ]
    )
    return [r for r in pending if r.pk not in held], held


def _policy(cluster: Cluster) -> alloc.Policy:
    """The allocator's policy for the cluster, from the settings and its scheduler."""
    return alloc.Policy(
        strategy=alloc.Strategy(getattr(settings, "ALLOCATOR_STRATEGY", "binpack")),
        preemption=getattr(settings, "PREEMPTION_ENABLED", True),
        scheduler_picks_chip=not scheduler_in_effect(cluster).honours_pins,
        place_unguaranteed=settings.PLACE_UNGUARANTEED,
    )
