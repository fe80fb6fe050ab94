"""Booking an allocation result: reservations, proposals and reasons.

Called inside ``services.allocations.allocation_create``'s transaction, with the cluster's
row and the pending requests locked.

Proposals are stable across passes: while a request waits for a decision, the
pending proposal is kept as it is as long as it still works (its chip eligible,
its victims still on it, and their eviction enough to place the request), even
when a pass finds another plan (an admin may be reading it). It is superseded,
with the reason, when it no longer works (a new one replaces it), when the
request fits without preemption, or when it no longer needs one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from django.conf import settings

from apps.audit.services import audit_record
from apps.inventory.hami.messages import N_, Message
from apps.inventory.models import Cluster
from apps.scheduling import allocator as alloc
from apps.scheduling import notify
from apps.scheduling.access import priority_refusal
from apps.scheduling.allocator import reasons as alloc_reasons
from apps.scheduling.choices import ProposalState, RequestState, WaitClass
from apps.scheduling.models import PreemptionProposal, Request, Reservation
from apps.scheduling.pods import pod_name_for
from apps.scheduling.progress import progress_fields
from apps.scheduling.snapshot import SliceRow, Snapshot
from apps.scheduling.texts import set_text, stored_message

# decisions.approve_now: (proposal, request, *, actor, reason, auto, now) -> None
Approver = Callable[..., None]


def reserve(
    request: Request,
    *,
    chip_id: int,
    chip_uuid: str,
    node: str,
    template: str | None,
    memory: int,
    aicore: int,
    aicpu: int,
    proposal: PreemptionProposal | None,
    now: datetime,
    reason: str,
    caveat: str = "",
) -> Reservation:
    """Book room on a chip for a pending request and make it Reserved.

    The pod name is fixed here (from the id and the attempt), before the pod
    exists, so that whoever creates it later, after a crash too, uses that name.
    """
    Reservation.objects.filter(request=request).delete()  # never two bookings
    reservation = Reservation.objects.create(
        request=request,
        cluster_id=request.cluster_id,
        chip_id=chip_id,
        template=template or "",
        memory=memory,
        aicore=aicore,
        aicpu=aicpu,
        proposal=proposal,
        caveat=caveat,
    )
    request.state = RequestState.RESERVED
    request.reserved_at = now
    request.chip_id = chip_id
    request.chip_uuid = chip_uuid
    request.node = node
    request.template_booked = template or ""
    request.memory_booked = memory
    request.pod_name = pod_name_for(request.pk, request.attempts)
    set_text(request, "reason", with_caveat(reason, caveat))
    request.save(
        update_fields=[
            "state",
            "reserved_at",
            "chip",
            "chip_uuid",
            "node",
            "template_booked",
            "memory_booked",
            "pod_name",
            "reason",
            "reason_message",
            "updated_at",
        ]
    )
    notify.request_changed(request)
    return reservation


def persist_result(
    cluster: Cluster,
    result: alloc.AllocationResult,
    pending: Mapping[int, Request],
    snap: Snapshot,
    now: datetime,
    *,
    actor: Any = None,
    approve: Approver | None = None,
) -> dict[str, list[int]]:
    """Write one pass's decisions; returns request ids per outcome.

    ``approve`` carries out a proposal the policy approves at once
    (``decisions.approve_now``; passed in because decisions books room
    through this module). Without it, every proposal waits for an admin.
    """
    open_proposals = {
        p.request_id: p
        for p in PreemptionProposal.objects.filter(
            request_id__in=list(pending), state=ProposalState.PENDING
        )
    }
    decided: dict[str, list[int]] = {
        "reserved": [],
        "proposed": [],
        "failed": [],
        "waiting": [],
    }
    for placement in result.placements:
        request = pending[int(placement.request_id)]
        _supersede(open_proposals.pop(request.pk, None), "placed without preemption")
        _reserve_placement(request, placement, snap, now)
        decided["reserved"].append(request.pk)

    for planned in result.proposals:
        request = pending[int(planned.request_id)]
        proposal = _proposal(
            cluster, request, planned, snap, now, open_proposals.pop(request.pk, None)
        )
        outcome = _approve_or_ask(request, proposal, actor, approve, now)
        decided[outcome].append(request.pk)

    for waiting in result.waiting:
        request = pending[int(waiting.request_id)]
        _supersede(
            open_proposals.pop(request.pk, None), f"no longer needed: {waiting.reason}"
        )
        decided[_fail_or_wait(request, waiting, snap, now)].append(request.pk)
    return decided


def _reserve_placement(
    request: Request, placement: alloc.Placement, snap: Snapshot, now: datetime
) -> None:
    """Book the room the allocator placed the request in."""
    uuid, node = snap.chip_rows[int(placement.chip_id)]
    shown = placement.template or N_("a whole card")
    reserve(
        request,
        chip_id=int(placement.chip_id),
        chip_uuid=uuid,
        node=node,
        template=placement.template,
        memory=placement.memory,
        aicore=placement.ai_core,
        aicpu=placement.ai_cpu,
        proposal=None,
        now=now,
        reason=N_(
            "room reserved for %(shape)s on chip %(chip)s of %(node)s; creating the pod",
            shape=shown,
            chip=uuid,
            node=node,
        ),
        caveat=_caveat_text(placement.caveat, snap),
    )


def _approve_or_ask(
    request: Request,
    proposal: PreemptionProposal,
    actor: Any,
    approve: Approver | None,
    now: datetime,
) -> str:
    """Approve the proposal at once if the policy allows, else ask an admin.

    Returns:
        ``"reserved"`` (approved: the request has its room) or ``"proposed"``.
    """
    if approve is not None and _auto_approves(request, proposal):
        gap = request.priority - proposal.max_victim_priority
        approve(
            proposal,
            request,
            actor=actor,
            reason=N_(
                "auto-approved: priority gap %(gap)s >= "
                "PREEMPTION_AUTO_APPROVE_PRIORITY_GAP %(setting)s",
                gap=gap,
                setting=settings.PREEMPTION_AUTO_APPROVE_PRIORITY_GAP,
            ),
            auto=True,
            now=now,
        )
        return "reserved"
    _set_reason(
        request,
        N_(
            "waiting for an admin to approve preemption proposal %(proposal)s: "
            "evict %(victims)s from chip %(chip)s of %(node)s",
            proposal=proposal.pk,
            victims=_victim_list(proposal.victims),
            chip=proposal.chip_uuid,
            node=proposal.node,
        ),
        WaitClass.AWAITING_APPROVAL,
    )
    return "proposed"


def _fail_or_wait(
    request: Request, waiting: alloc.Waiting, snap: Snapshot, now: datetime
) -> str:
    """Fail a request that can never be served; otherwise say why it waits.

    Returns:
        ``"failed"`` or ``"waiting"``.
    """
    if waiting.code == alloc.WaitReason.INVALID:
        # It can never be served under the cluster's current device config.
        request.state = RequestState.FAILED
        request.finished_at = now
        set_text(request, "reason", N_("cannot be served: %(why)s", why=waiting.reason))
        request.save(
            update_fields=[
                "state",
                "finished_at",
                "reason",
                "reason_message",
                "updated_at",
            ]
        )
        notify.request_changed(request)
        return "failed"
    reason = waiting.reason
    if waiting.code == alloc.WaitReason.UNGUARANTEED:
        reason = N_(
            "%(caveat)s (PLACE_UNGUARANTEED is off)", caveat=_caveat_text(reason, snap)
        )
    _set_reason(request, _with_rejection(request, reason), WaitClass(waiting.code))
    return "waiting"


def _auto_approves(request: Request, proposal: PreemptionProposal) -> bool:
    gap = getattr(settings, "PREEMPTION_AUTO_APPROVE_PRIORITY_GAP", None)
    return (
        gap is not None
        and proposal.state == ProposalState.PENDING
        and request.priority - proposal.max_victim_priority >= gap
        # A priority its queue no longer allows wins nothing without an admin.
        and priority_refusal(request.queue, request.priority_class, request.priority)
        is None
    )


def _with_rejection(request: Request, reason: str) -> str:
    """``reason``, and why the request no longer asks for preemption (an admin
    said no) if it does not."""
    if request.allow_preemption:
        return reason
    rejected = (
        PreemptionProposal.objects.filter(request=request, state=ProposalState.REJECTED)
        .select_related("decided_by")
        .order_by("-decided_at", "-pk")
        .first()
    )
    if rejected is None:
        return reason
    who = rejected.decided_by.get_username() if rejected.decided_by else N_("an admin")
    return N_(
        "%(reason)s (preemption proposal %(proposal)s was rejected by %(who)s: %(why)s)",
        reason=reason,
        proposal=rejected.pk,
        who=who,
        why=rejected.reason,
    )


def _victim_list(victims: list[dict[str, Any]]) -> str:
    pods = [("/".join((v["namespace"], v["pod"])), v["priority"]) for v in victims]
    names = [
        N_("%(pod)s (priority %(priority)s)", pod=pod, priority=priority)
        for pod, priority in pods
    ]
    shown = alloc_reasons.joined(names[:5])
    if len(names) <= 5:
        return shown
    return N_("%(victims)s and %(count)s more", victims=shown, count=len(names) - 5)


def with_caveat(reason: str, caveat: str) -> str:
    """A reason followed by what is not guaranteed, when something is not."""
    return (
        N_("%(reason)s; %(caveat)s", reason=reason, caveat=caveat) if caveat else reason
    )


def _caveat_text(caveat: str | None, snap: Snapshot) -> str:
    # The allocator names chips by their row ids (reasons.hazard's "chip <id>,
    # which"); people know them by UUID and index.
    if not caveat:
        return ""
    if isinstance(caveat, Message):
        return _relabelled(caveat, snap)
    return re.sub(
        r"\bchip (\d+), which",
        lambda m: f"chip {snap.chip_labels.get(int(m.group(1)), m.group(1))}, which",
        caveat,
    )


def _relabelled(message: Message, snap: Snapshot) -> Message:
    """``message`` with each chip row id among its values (``%(chip)s``) named
    as people know the chip."""
    params: dict[str, object] = {}
    for name, value in message.params.items():
        if isinstance(value, Message):
            value = _relabelled(value, snap)
        elif name == "chip" and str(value).isdigit():
            value = snap.chip_labels.get(int(str(value)), value)
        params[name] = value
    return Message(message.text, params)


def _proposal_caveat(caveat: str | None, chip_id: int, snap: Snapshot) -> str:
    """A proposal's caveat, naming the chip its victims free: the proposals on
    one node share the node's hazards, and this is what tells them apart."""
    text = _caveat_text(caveat, snap)
    if not text:
        return ""
    return f"{text}, instead of chip {snap.chip_labels[chip_id]} that its victims free"


def missing_namespace_reason(namespace: str) -> str:
    """Why a request waits whose namespace the cluster does not have."""
    return N_(
        'namespace "%(namespace)s" does not exist in the cluster', namespace=namespace
    )


def hold_for_namespace(requests: list[Request]) -> list[int]:
    """Keep requests whose namespace is missing pending, saying so; no room is booked.

    Creating their pod would fail for good (the API server answers 404), so
    they are left out of the allocation until the namespace exists. A pending
    preemption proposal of such a request no longer holds: it is superseded.
    """
    return hold([(r, missing_namespace_reason(r.namespace)) for r in requests])


def hold(waiting: list[tuple[Request, str]]) -> list[int]:
    """Keep requests pending with the reason given for each; no room is booked.

    For a cause outside the allocator (a missing namespace, a Volcano queue
    that is missing or not Open): a pending preemption proposal of such a
    request no longer holds and is superseded.
    """
    if not waiting:
        return []
    open_proposals = {
        p.request_id: p
        for p in PreemptionProposal.objects.filter(
            request_id__in=[r.pk for r, _ in waiting], state=ProposalState.PENDING
        )
    }
    for request, reason in waiting:
        _supersede(open_proposals.pop(request.pk, None), reason)
        _set_reason(request, reason, WaitClass.CLUSTER_SETUP)
    return [r.pk for r, _ in waiting]


def _set_reason(request: Request, reason: str, wait_class: WaitClass) -> None:
    # Passes run every few seconds: write (and broadcast) only what changed.
    if (
        request.reason != reason
        or request.reason_message != stored_message(reason)
        or request.wait_class != wait_class
    ):
        set_text(request, "reason", reason)
        request.wait_class = wait_class
        request.save(
            update_fields=["reason", "reason_message", "wait_class", "updated_at"]
        )
        notify.request_changed(request)


def _supersede(proposal: PreemptionProposal | None, why: str) -> None:
    if proposal is None:
        return
    proposal.state = ProposalState.SUPERSEDED
    proposal.reason = why
    proposal.save(update_fields=["state", "reason", "updated_at"])
    notify.proposal_changed(proposal)


def _victim(row: SliceRow, now: datetime) -> dict[str, Any]:
    started = row.started_at
    return {
        "namespace": row.namespace,
        "pod": row.pod,
        "slice_id": row.id,
        "priority": row.priority,
        "priority_class": row.priority_class,
        "started_at": started.isoformat() if started else None,
        "lost_seconds": round(max(0.0, (now - started).total_seconds()), 1)
        if started
        else 0.0,
        "template": row.template,
        "memory": row.memory,
        "queue": row.queue,
        "request": row.request_id,
    }


def _problem_of(existing: PreemptionProposal, snap: Snapshot) -> str | None:
    """Why the pending proposal no longer works on the snapshot's cluster (None: it does)."""
    chip = next((c for c in snap.chips if c.id == str(existing.chip_id)), None)
    shape = alloc.SliceShape(
        template=existing.template or None,
        memory=existing.memory,
        ai_core=existing.aicore,
        ai_cpu=existing.aicpu,
    )
    victims = {(v["namespace"], v["pod"]) for v in existing.victims}
    return alloc.proposal_problem(chip, snap.running, victims, shape)


def _proposal(
    cluster: Cluster,
    request: Request,
    planned: alloc.PreemptionProposal,
    snap: Snapshot,
    now: datetime,
    existing: PreemptionProposal | None,
) -> PreemptionProposal:
    """The pending proposal for this plan: the existing one if it is the same plan."""
    victims = []
    seen: set[tuple[str, str]] = set()
    for slice_id in planned.victims:
        row = snap.slices[slice_id]
        # One pod may hold several slices; it is evicted (and listed) once.
        if (row.namespace, row.pod) not in seen:
            seen.add((row.namespace, row.pod))
            victims.append(_victim(row, now))
    chip_id = int(planned.chip_id)
    problem = None
    if existing is not None:
        # The allocator proposes a standing proposal again while it works
        # (alloc.StandingProposal): the same plan keeps the row an admin may
        # be reading; another plan replaces it, saying why.
        same = (
            existing.chip_id == chip_id
            and {(v["namespace"], v["pod"]) for v in existing.victims} == seen
        )
        if same:
            return existing
        problem = _problem_of(existing, snap) or (
            "a request served before it now needs its chip's room or its victims"
        )
    uuid, node = snap.chip_rows[chip_id]
    proposal = PreemptionProposal.objects.create(
        cluster=cluster,
        request=request,
        chip_id=chip_id,
        chip_uuid=uuid,
        node=node,
        template=planned.template or "",
        memory=planned.memory,
        aicore=planned.ai_core,
        aicpu=planned.ai_cpu,
        victims=victims,
        max_victim_priority=planned.max_victim_priority,
        lost_seconds=round(planned.lost_seconds, 1),
        caveat=_proposal_caveat(planned.caveat, chip_id, snap),
        **progress_fields(N_("waiting for an admin's decision")),
    )
    if existing is not None:
        _supersede(existing, f"replaced by proposal {proposal.pk}: {problem}")
    audit_record(
        actor=None,
        actor_name="allocator",
        action="preemption.propose",
        target=proposal,
        cluster=cluster,
        after={
            "request": request.pk,
            "chip": uuid,
            "victims": [f"{v['namespace']}/{v['pod']}" for v in victims],
            "max_victim_priority": planned.max_victim_priority,
            "lost_seconds": proposal.lost_seconds,
        },
    )
    notify.proposal_changed(proposal)
    return proposal
