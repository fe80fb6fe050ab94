"""Carrying out an approved preemption: hold the node, evict each victim, say why.

First the node is held for the request (``pods.hold_taint``, a NoSchedule
taint, one per node, that only the pods of requests held there tolerate): Volcano counts a terminating
victim's room as free and serves other queues first, so without the hold a
victim's replacement, or any pending pod, could be bound into the room the
victims free. Reconciliation lifts the hold once no request held on the node
waits for its room there any more.

Then, for each victim pod, in order, each step done once and remembered in the
proposal's ``victims`` (so a retry continues where the last attempt stopped):

1. annotate the pod ``vnpu-portal/preempted-by: <request id>`` (and the
   proposal id), so whoever looks at it, or its controller, sees why it went;
2. record an Event in the victim's namespace naming the request;
3. ask the Eviction API (policy/v1). A 429 means a PodDisruptionBudget allows
   no disruption now: the proposal stays Evicting and the victim is tried
   again after ``PREEMPTION_EVICTION_RETRY_SECONDS``. Nothing is ever forced.

A victim that is already gone counts as evicted. An error that will not go
away (403, 422...) fails the proposal and gives the request's room back.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from apps.common import locks
from apps.inventory.hami.messages import N_, Message
from apps.scheduling import kube, notify, states
from apps.scheduling.choices import CARRIED_OUT_STATES, ProposalState, RequestState
from apps.scheduling.holds import hold_node
from apps.scheduling.kube import ClusterOps, KubeError
from apps.scheduling.models import PreemptionProposal
from apps.scheduling.pods import ANNOTATION_PREEMPTED_BY, ANNOTATION_PROPOSAL
from apps.scheduling.progress import set_progress

log = logging.getLogger(__name__)
COMPONENT = "vnpu-portal"


@dataclass
class EvictionReport:
    """What one eviction attempt did, per victim pod ("ns/pod")."""

    evicted: list[str]
    blocked: list[str]
    errors: list[str]
    state: str


def victims_evict(
    proposal_id: int, *, now: datetime | None = None
) -> EvictionReport | None:
    """Evict the victims of an approved proposal (see the module doc).

    Returns None when there is nothing to do now (another worker is on it,
    the proposal is not being carried out, or its retry time has not come).
    """
    now = now or timezone.now()
    with locks.held(f"evict:{proposal_id}") as lock:
        if lock is None:
            return None
        proposal = (
            PreemptionProposal.objects.select_related(
                "request", "request__queue", "cluster", "decided_by"
            )
            .filter(pk=proposal_id, state__in=CARRIED_OUT_STATES)
            .first()
        )
        if proposal is None:
            return None
        if proposal.request.state != RequestState.RESERVED:
            states.proposals_supersede(
                proposal.request_id,
                f"request is {proposal.request.state}",
                states=CARRIED_OUT_STATES,
            )
            return None
        if proposal.next_attempt_at and proposal.next_attempt_at > now:
            return None
        victims = [dict(v) for v in proposal.victims]
        report = EvictionReport([], [], [], ProposalState.EVICTING)
        ops = kube.ops_for(proposal.cluster)
        permanent: Message | None = None
        hold_error: Message | None = None
        try:
            try:
                held = hold_node(ops, proposal)
            except KubeError as exc:
                held = False
                if exc.transient:
                    # Evicting without the hold would hand the room to
                    # whoever comes first: wait for the API server instead.
                    hold_error = N_(
                        "cannot hold node %(node)s yet (%(error)s)",
                        node=proposal.node,
                        error=str(exc),
                    )
                else:
                    permanent = N_(
                        "could not hold node %(node)s: %(error)s",
                        node=proposal.node,
                        error=str(exc),
                    )
            else:
                if not held:
                    permanent = N_("node %(node)s is gone", node=proposal.node)
            for victim in victims if held else []:
                if victim.get("evicted"):
                    continue
                name = f"{victim['namespace']}/{victim['pod']}"
                outcome = _evict_one(ops, proposal, victim, now)
                if outcome == "evicted":
                    report.evicted.append(name)
                elif outcome == "blocked":
                    report.blocked.append(name)
                else:
                    report.errors.append(name)
                    if outcome == "failed":
                        permanent = N_(
                            "could not evict %(pod)s: %(error)s",
                            pod=name,
                            error=str(victim["last_error"]),
                        )
                        break
        finally:
            ops.close()
        report.state = _save(proposal, victims, permanent, now, hold_error)
        return report


def _evict_one(
    ops: ClusterOps, proposal: PreemptionProposal, victim: dict[str, Any], now: datetime
) -> str:
    """One victim's next steps; returns evicted, blocked, retry or failed."""
    return evict_victim(
        ops,
        victim,
        annotations={
            ANNOTATION_PREEMPTED_BY: str(proposal.request_id),
            ANNOTATION_PROPOSAL: str(proposal.pk),
        },
        event=lambda: _event(proposal, victim, now),
        now=now,
        owner=f"proposal {proposal.pk}",
    )


def evict_victim(
    ops: ClusterOps,
    victim: dict[str, Any],
    *,
    annotations: dict[str, str],
    event: Callable[[], dict[str, Any]],
    now: datetime,
    owner: str,
) -> str:
    """Annotate, record an Event, then evict one pod (steps 1-3 of the module
    doc), each step once: ``victim`` remembers the steps done. Returns
    evicted, blocked (a PDB's 429), retry (transient) or failed (for good).
    Preemptions and drains (``apps.scheduling.drain``) both evict through it.
    """
    namespace, pod = victim["namespace"], victim["pod"]
    victim["attempts"] = victim.get("attempts", 0) + 1
    try:
        if not victim.get("annotated"):
            present = ops.patch_pod_annotations(namespace, pod, annotations)
            if not present:
                victim.update(evicted=True, gone=True, evicted_at=now.isoformat())
                return "evicted"
            victim["annotated"] = True
        if not victim.get("event"):
            try:
                ops.create_event(namespace, event())
                victim["event"] = True
            except KubeError as exc:
                # The why is on the pod already; an Event is not worth a stuck eviction.
                victim["event_error"] = str(exc)
                log.warning("%s: no Event for %s: %s", owner, pod, exc)
        outcome, message = ops.evict_pod(namespace, pod)
    except KubeError as exc:
        victim["last_error"] = str(exc)
        return "retry" if exc.transient else "failed"
    if outcome == "blocked":
        victim["blocked"] = message or "a PodDisruptionBudget allows no disruption now"
        return "blocked"
    victim.pop("blocked", None)
    victim.pop("last_error", None)
    victim.update(evicted=True, gone=outcome == "gone", evicted_at=now.isoformat())
    return "evicted"


def _save(
    proposal: PreemptionProposal,
    victims: list[dict[str, Any]],
    permanent: Message | None,
    now: datetime,
    hold_error: Message | None = None,
) -> str:
    retry = timedelta(
        seconds=getattr(settings, "PREEMPTION_EVICTION_RETRY_SECONDS", 10)
    )
    left = [v for v in victims if not v.get("evicted")]
    blocked = [v for v in left if v.get("blocked")]
    with transaction.atomic():
        current = (
            PreemptionProposal.objects.select_for_update()
            .filter(pk=proposal.pk, state__in=CARRIED_OUT_STATES)
            .first()
        )
        if current is None:
            return ProposalState.SUPERSEDED  # decided otherwise meanwhile
        current.victims = victims
        if permanent:
            current.state = ProposalState.FAILED
            set_progress(current, N_("failed: %(problem)s", problem=permanent))
            current.next_attempt_at = None
        elif hold_error:
            current.state = ProposalState.EVICTING
            set_progress(
                current,
                N_(
                    "%(problem)s; the evictions wait for it; retrying",
                    problem=hold_error,
                ),
            )
            current.next_attempt_at = now + retry
        else:
            current.state = ProposalState.EVICTING
            if not left:
                set_progress(
                    current,
                    N_(
                        "every victim evicted; node %(node)s is held for the "
                        "request until they are gone",
                        node=current.node,
                    ),
                )
                current.next_attempt_at = None
            else:
                why = "; ".join(
                    f"{v['namespace']}/{v['pod']}: {v['blocked']}" for v in blocked
                ) or "; ".join(
                    f"{v['namespace']}/{v['pod']}: {v.get('last_error', '')}"
                    for v in left
                )
                set_progress(
                    current,
                    N_(
                        "%(count)d victim(s) not evicted yet (%(pods)s); retrying",
                        count=len(left),
                        pods=why,
                    ),
                )
                current.next_attempt_at = now + retry
        current.save()
        notify.proposal_changed(current)
        if permanent:
            states.request_move(
                current.request_id,
                from_states=[RequestState.RESERVED],
                to=RequestState.PENDING,
                drop_reservation=True,
                **states.UNBOOKED,
                reason=N_(
                    "preemption proposal %(proposal)s failed (%(why)s); waiting again",
                    proposal=current.pk,
                    why=permanent,
                ),
            )
    return current.state


def _event(
    proposal: PreemptionProposal, victim: dict[str, Any], now: datetime
) -> dict[str, Any]:
    request = proposal.request
    if proposal.auto_approved:
        decision = "auto-approved"
    else:
        who = proposal.decided_by.get_username() if proposal.decided_by else "an admin"
        decision = f"approved by {who}"
    message = (
        f"Preempted by vNPU Portal request {request.pk} (priority "
        f"{request.priority_class} = {request.priority}, queue {request.queue.name}, "
        f"pod {request.namespace}/{request.pod_name}) to free chip "
        f"{proposal.chip_uuid} of node {proposal.node}; proposal {proposal.pk} "
        f"{decision}: {proposal.reason}"
    )
    return event_body(
        victim,
        reason="Preempted",
        message=message,
        annotations={ANNOTATION_PREEMPTED_BY: str(request.pk)},
        now=now,
    )


def event_body(
    victim: dict[str, Any],
    *,
    reason: str,
    message: str,
    annotations: dict[str, str],
    now: datetime,
) -> dict[str, Any]:
    """A core/v1 Event on the victim pod saying why the portal evicts it."""
    stamp = now.strftime("%Y-%m-%dT%H:%M:%SZ")
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "generateName": f"{victim['pod']}.",
            "namespace": victim["namespace"],
            "annotations": annotations,
        },
        "involvedObject": {
            "apiVersion": "v1",
            "kind": "Pod",
            "namespace": victim["namespace"],
            "name": victim["pod"],
        },
        "reason": reason,
        "message": message[:1024],
        "type": "Warning",
        "action": "Evict",
        "source": {"component": COMPONENT},
        "reportingComponent": COMPONENT,
        "reportingInstance": COMPONENT,
        "firstTimestamp": stamp,
        "lastTimestamp": stamp,
        "count": 1,
    }
