"""Guarded state changes of requests: compare-and-set in one UPDATE.

Passes, reconciliation, eviction and the API may all touch one request
(a cancel can arrive while a pass creates its pod). Every change says which
states it moves from; the UPDATE matches only if the request is still in one
of them, so the loser of a race changes nothing and can undo its side effect
(for example, delete the pod it just created).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from apps.scheduling import notify
from apps.scheduling.choices import CARRIED_OUT_STATES, ProposalState, RequestState
from apps.scheduling.models import PreemptionProposal, Request, Reservation
from apps.scheduling.texts import text_fields

#: Fields cleared when a request goes back to Pending.
UNBOOKED: dict[str, Any] = {
    "chip": None,
    "chip_uuid": "",
    "node": "",
    "template_booked": "",
    "memory_booked": None,
    "pod_name": "",
    "reserved_at": None,
    "admitted_at": None,
    # Why it waited before is no longer known: the next pass classes it again.
    "wait_class": "",
}


def request_move(
    request_id: int,
    *,
    from_states: Iterable[RequestState],
    to: RequestState,
    drop_reservation: bool = False,
    **fields: Any,
) -> bool:
    """Move a request to ``to`` if it is in ``from_states``; True when it moved.

    Args:
        request_id: The request.
        from_states: The states it may be in for the move to happen.
        to: The new state.
        drop_reservation: Also delete its Reservation (same transaction).
        **fields: Other columns to set with the move. A ``reason`` is saved
            with its message (``reason_message``, :mod:`apps.scheduling.texts`).
    """
    if "reason" in fields and "reason_message" not in fields:
        fields.update(text_fields("reason", fields["reason"]))
    with transaction.atomic():
        moved = (
            Request.objects.filter(pk=request_id, state__in=list(from_states)).update(
                state=to, updated_at=timezone.now(), **fields
            )
            == 1
        )
        if moved:
            if drop_reservation:
                Reservation.objects.filter(request_id=request_id).delete()
            notify.request_changed(Request.objects.get(pk=request_id))
    return moved


def request_requeue(
    request_id: int, *, from_states: Iterable[RequestState], reason: str, **fields: Any
) -> bool:
    """Send a request back to Pending for another attempt with a new pod (its
    booking dropped, ``attempts`` + 1 so the next pod gets a new name while the
    old one may still terminate). True when it moved."""
    return request_move(
        request_id,
        from_states=from_states,
        to=RequestState.PENDING,
        drop_reservation=True,
        **UNBOOKED,
        attempts=F("attempts") + 1,
        reason=reason,
        **fields,
    )


def proposals_supersede(
    request_id: int,
    why: str,
    *,
    states: Iterable[ProposalState] = (ProposalState.PENDING, *CARRIED_OUT_STATES),
) -> int:
    """Mark the request's open proposals superseded (they are no longer needed)."""
    open_ = list(
        PreemptionProposal.objects.filter(request_id=request_id, state__in=list(states))
    )
    for proposal in open_:
        proposal.state = ProposalState.SUPERSEDED
        proposal.reason = str(why)
        proposal.save(update_fields=["state", "reason", "updated_at"])
        notify.proposal_changed(proposal)
    return len(open_)
