"""Decisions on preemption proposals: approve (hold the room, evict) or reject.

An approval books the request's room on the proposal's chip at once, in the
same transaction and under the same cluster-row lock as allocation passes, so
no pass can give that room away while the victims leave; the victims are
evicted after commit (``evict_victims_task``) and the request's pod is created
once they are all gone.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, TypeVar

from django.db import models, transaction
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from apps.audit.services import audit_record
from apps.common.exceptions import NotFound, ValidationFailed
from apps.inventory.hami.messages import N_
from apps.inventory.models import Cluster
from apps.scheduling import notify, triggers
from apps.scheduling.allocation import reserve
from apps.scheduling.choices import ProposalState, RequestState
from apps.scheduling.errors import ChipGone, ProposalDecided, RequestNotPending
from apps.scheduling.models import PreemptionProposal, Request
from apps.scheduling.progress import set_progress
from apps.scheduling.texts import text_fields

Decided = TypeVar("Decided", bound=models.Model)


def proposal_approve(
    *,
    proposal: PreemptionProposal,
    actor: Any,
    reason: str,
    now: datetime | None = None,
) -> PreemptionProposal:
    """Approve a pending proposal: hold the room for the request, evict the victims.

    The request's capacity is reserved on the proposal's chip at once (so no
    pass gives it away), the victims are evicted by ``evict_victims_task``
    after commit, and the request's pod is created once they are all gone.

    Raises:
        ValidationFailed: No reason given.
        Conflict: The proposal was already decided or superseded, or its
            request is no longer pending.
    """
    reason = reason_required(reason)
    with transaction.atomic():
        Cluster.objects.select_for_update(no_key=True).filter(
            pk=proposal.cluster_id
        ).first()
        current = _open_proposal(proposal.pk)
        request = Request.objects.select_for_update().get(pk=current.request_id)
        if request.state != RequestState.PENDING:
            raise RequestNotPending(
                _("request %(request)s is %(state)s, no longer waiting")
                % {"request": request.pk, "state": request.state}
            )
        approve_now(current, request, actor=actor, reason=reason, auto=False, now=now)
    return PreemptionProposal.objects.get(pk=proposal.pk)


def approve_now(
    proposal: PreemptionProposal,
    request: Request,
    *,
    actor: Any,
    reason: str,
    auto: bool,
    now: datetime | None = None,
) -> None:
    """Inside a transaction holding the cluster lock: book and start the eviction."""
    now = now or timezone.now()
    if proposal.chip_id is None:
        raise ChipGone(
            _("chip %(chip)s of proposal %(proposal)s no longer exists")
            % {"chip": proposal.chip_uuid, "proposal": proposal.pk}
        )
    proposal.state = ProposalState.APPROVED
    proposal.decided_by = actor if getattr(actor, "pk", None) else None
    proposal.decided_at = now
    proposal.reason = reason
    set_progress(
        proposal,
        N_("approved; %(count)d victim(s) to evict", count=len(proposal.victims)),
    )
    proposal.auto_approved = auto
    proposal.save()
    reserve(
        request,
        chip_id=proposal.chip_id,
        chip_uuid=proposal.chip_uuid,
        node=proposal.node,
        template=proposal.template,
        memory=proposal.memory,
        aicore=proposal.aicore,
        aicpu=proposal.aicpu,
        proposal=proposal,
        now=now,
        reason=N_(
            "preemption approved (proposal %(proposal)s); room held on chip "
            "%(chip)s of %(node)s while %(count)s pod(s) are evicted",
            proposal=proposal.pk,
            chip=proposal.chip_uuid,
            node=proposal.node,
            count=len(proposal.victims),
        ),
    )
    audit_record(
        actor=actor,
        actor_name="" if getattr(actor, "pk", None) else "preemption policy",
        action="preemption.approve",
        target=proposal,
        cluster=proposal.cluster,
        before={"state": ProposalState.PENDING},
        after={
            "state": ProposalState.APPROVED,
            "request": request.pk,
            "chip": proposal.chip_uuid,
            "victims": [f"{v['namespace']}/{v['pod']}" for v in proposal.victims],
            "auto": auto,
        },
        reason=reason,
    )
    notify.proposal_changed(proposal)
    triggers.run_after_commit("evict", proposal.pk)


def proposal_reject(
    *, proposal: PreemptionProposal, actor: Any, reason: str
) -> PreemptionProposal:
    """Reject a pending proposal: everyone keeps running.

    The request stays pending and no longer asks for preemption (it waits for
    room to free up); otherwise the next pass would propose the same again.

    Raises:
        ValidationFailed: No reason given.
        Conflict: The proposal was already decided or superseded.
    """
    reason = reason_required(reason)
    with transaction.atomic():
        current = _open_proposal(proposal.pk)
        current.state = ProposalState.REJECTED
        current.decided_by = actor if getattr(actor, "pk", None) else None
        current.decided_at = timezone.now()
        current.reason = reason
        set_progress(current, N_("rejected; nothing is evicted"))
        current.save()
        who = actor.get_username() if getattr(actor, "pk", None) else N_("system")
        Request.objects.filter(
            pk=current.request_id, state=RequestState.PENDING
        ).update(
            allow_preemption=False,
            **text_fields(
                "reason",
                N_(
                    "preemption rejected by %(who)s (%(why)s); waiting for room "
                    "without preemption",
                    who=who,
                    why=reason,
                ),
            ),
            updated_at=timezone.now(),
        )
        audit_record(
            actor=actor,
            action="preemption.reject",
            target=current,
            cluster=current.cluster,
            before={"state": ProposalState.PENDING},
            after={"state": ProposalState.REJECTED, "request": current.request_id},
            reason=reason,
        )
        notify.proposal_changed(current)
        notify.request_changed(Request.objects.get(pk=current.request_id))
    return current


#: The things decided (``open_for_decision``'s ``noun``), as a message names them.
_NOUNS = {"proposal": gettext_lazy("proposal"), "drain": gettext_lazy("drain")}


def reason_required(reason: str) -> str:
    """The reason stripped; a blank one is a 400 naming `reason`."""
    reason = (reason or "").strip()
    if not reason:
        raise ValidationFailed(
            _("reason: required"),
            detail={"reason": [_("required: say why; it is kept with the decision")]},
        )
    return reason


def _open_proposal(proposal_id: int) -> PreemptionProposal:
    return open_for_decision(
        PreemptionProposal.objects.select_related("cluster"),
        proposal_id,
        noun="proposal",
        pending=ProposalState.PENDING,
    )


def open_for_decision(
    queryset: QuerySet[Decided], pk: int, *, noun: str, pending: str
) -> Decided:
    """The row locked for a decision (a proposal, a drain): 404 when it does not
    exist, 409 (``ProposalDecided``) when it is no longer ``pending``."""
    current = queryset.select_for_update().filter(pk=pk).first()
    if current is None:
        raise NotFound(
            _("%(noun)s %(pk)s does not exist")
            % {"noun": _NOUNS.get(noun, noun), "pk": pk}
        )
    state = getattr(current, "state", None)
    if state != pending:
        raise ProposalDecided(
            _("%(noun)s %(pk)s is %(state)s; only a pending one can be decided")
            % {"noun": _NOUNS.get(noun, noun), "pk": pk, "state": state},
            detail={"state": state},
        )
    return current
