"""Carrying out a drain: evict its approved pods, re-queue the portal's requests.

Each pod goes through the preemption's step (``eviction.evict_victim``):
annotated ``vnpu-portal/drain: <id>``, an Event in its namespace saying why,
then the Eviction API; a PodDisruptionBudget's 429 leaves it waiting and the
drain is tried again after ``PREEMPTION_EVICTION_RETRY_SECONDS`` (beat),
never forced. Every eviction is audited, naming who asked for it (the drain's
requester for the portal's own pods, the approving admin for foreign ones).

A portal request whose pod is evicted goes back to Pending at once, with a
new attempt (its next pod gets a new name while the old one terminates) and
no failure counted against it: the job did nothing wrong. The next pass
places it again, never on a cordoned chip.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from apps.audit.services import audit_record
from apps.common import locks
from apps.inventory.hami.messages import N_, Message
from apps.inventory.services.cordon import chips_drain_release
from apps.scheduling import kube, states, triggers
from apps.scheduling.choices import EVICTING_DRAIN_STATES, DrainState, RequestState
from apps.scheduling.eviction import event_body, evict_victim
from apps.scheduling.models import Drain, Request
from apps.scheduling.pods import ANNOTATION_DRAIN
from apps.scheduling.progress import set_progress

log = logging.getLogger(__name__)


@dataclass
class DrainReport:
    """What one attempt did, per pod ("ns/pod")."""

    evicted: list[str]
    blocked: list[str]
    requeued: list[int]
    state: str


def _due(victim: dict[str, Any]) -> bool:
    return bool(victim.get("approved")) and not victim.get("evicted")


def drain_evict(drain_id: int, *, now: datetime | None = None) -> DrainReport | None:
    """Evict what the drain may evict now (see the module doc).

    Returns None when there is nothing to do now (another worker is on it,
    the drain is closed, nothing approved is left, or its retry time has not
    come).
    """
    now = now or timezone.now()
    with locks.held(f"drain:{drain_id}") as lock:
        if lock is None:
            return None
        drain = (
            Drain.objects.select_related("cluster", "requested_by", "decided_by")
            .filter(pk=drain_id, state__in=EVICTING_DRAIN_STATES)
            .first()
        )
        if drain is None or (drain.next_attempt_at and drain.next_attempt_at > now):
            return None
        victims = [dict(v) for v in drain.victims]
        if not any(_due(v) for v in victims):
            return None
        report = DrainReport([], [], [], drain.state)
        ops = kube.ops_for(drain.cluster)
        try:
            for victim in filter(_due, victims):
                _evict_one(ops, drain, victim, now, report)
        finally:
            ops.close()
        report.state = _save(drain, victims, now)
    if report.requeued:
        triggers.run("pass", drain.cluster_id)
    return report


def _evict_one(
    ops: kube.ClusterOps,
    drain: Drain,
    victim: dict[str, Any],
    now: datetime,
    report: DrainReport,
) -> None:
    name = f"{victim['namespace']}/{victim['pod']}"
    outcome = evict_victim(
        ops,
        victim,
        annotations={ANNOTATION_DRAIN: str(drain.pk)},
        event=lambda: event_body(
            victim,
            reason="Drained",
            message=_message(drain, victim),
            annotations={ANNOTATION_DRAIN: str(drain.pk)},
            now=now,
        ),
        now=now,
        owner=f"drain {drain.pk}",
    )
    if outcome == "blocked":
        report.blocked.append(name)
    elif outcome == "failed":
        victim["failed"] = True
    elif outcome == "evicted":
        report.evicted.append(name)
        if victim.get("request") and _requeue(drain, victim):
            victim["requeued"] = True
            report.requeued.append(victim["request"])
        _audit(drain, victim)


def _who(drain: Drain, victim: dict[str, Any]) -> tuple[Any, str]:
    """Who evicts this pod, and why: the requester for the portal's own pods,
    the approving admin for a foreign one."""
    if victim.get("foreign") and drain.decided_by is not None:
        return drain.decided_by, f"{drain.reason} (approved: {drain.decision_reason})"
    return drain.requested_by, drain.reason


def _message(drain: Drain, victim: dict[str, Any]) -> str:
    actor, why = _who(drain, victim)
    who = actor.get_username() if actor is not None else "an operator"
    chips = ", ".join(victim.get("chips") or drain.chip_uuids)
    return (
        f"Evicted by vNPU Portal drain {drain.pk} of {drain.scope} {chips} on node "
        f"{drain.node}, asked by {who}: {why}"
    )


def _audit(drain: Drain, victim: dict[str, Any]) -> None:
    actor, why = _who(drain, victim)
    audit_record(
        actor=actor,
        actor_name="" if actor is not None else "drain",
        action="drain.evict",
        target=drain,
        cluster=drain.cluster,
        after={
            "pod": f"{victim['namespace']}/{victim['pod']}",
            "chips": victim.get("chips"),
            "request": victim.get("request"),
            "requeued": bool(victim.get("requeued")),
            "gone_already": bool(victim.get("gone")),
        },
        reason=why,
    )


def _requeue(drain: Drain, victim: dict[str, Any]) -> bool:
    """Send the evicted pod's request back to Pending (if that pod is still its)."""
    still_its = Request.objects.filter(
        pk=victim["request"], namespace=victim["namespace"], pod_name=victim["pod"]
    ).exists()
    return still_its and states.request_requeue(
        victim["request"],
        from_states=[RequestState.RUNNING, RequestState.ADMITTED],
        reason=N_(
            "its pod %(pod)s was evicted by drain %(drain)s of node %(node)s "
            "(%(why)s); waiting to be placed again, never on a cordoned chip",
            pod=victim["pod"],
            drain=drain.pk,
            node=drain.node,
            why=drain.reason,
        ),
    )


def _save(drain: Drain, victims: list[dict[str, Any]], now: datetime) -> str:
    retry = timedelta(
        seconds=getattr(settings, "PREEMPTION_EVICTION_RETRY_SECONDS", 10)
    )
    with transaction.atomic():
        current = (
            Drain.objects.select_for_update()
            .filter(pk=drain.pk, state__in=EVICTING_DRAIN_STATES)
            .first()
        )
        if current is None:
            return DrainState.UNCORDONED  # rejected or uncordoned meanwhile
        current.victims = victims
        failed = [v for v in victims if v.get("failed")]
        left = [v for v in victims if _due(v)]
        unapproved = [v for v in victims if not v.get("approved")]
        current.next_attempt_at = now + retry if left and not failed else None
        if failed:
            current.state = DrainState.FAILED
            current.ended_at = now
            pods = "; ".join(
                f"{v['namespace']}/{v['pod']}: {v.get('last_error', '')}"
                for v in failed
            )
            set_progress(current, N_("failed: %(problem)s", problem=pods))
            chips_drain_release(current.cluster_id, current.pk)
        else:
            current.state = DrainState.PENDING if unapproved else DrainState.EVICTING
            set_progress(current, _progress(left, unapproved))
        current.save()
    return current.state


def _progress(left: list[dict[str, Any]], unapproved: list[dict[str, Any]]) -> Message:
    parts = []
    blocked = [v for v in left if v.get("blocked")]
    if blocked:
        pods = "; ".join(
            f"{v['namespace']}/{v['pod']}: {v['blocked']}" for v in blocked
        )
        parts.append(
            N_("waiting on a PodDisruptionBudget: %(pods)s (retried)", pods=pods)
        )
    others = [v for v in left if not v.get("blocked")]
    if others:
        pods = "; ".join(
            f"{v['namespace']}/{v['pod']}: {v.get('last_error', 'next try')}"
            for v in others
        )
        parts.append(
            N_(
                "%(count)d pod(s) not evicted yet (%(pods)s); retrying",
                count=len(others),
                pods=pods,
            )
        )
    if unapproved:
        parts.append(
            N_(
                "%(count)d foreign pod(s) wait for an admin's approval",
                count=len(unapproved),
            )
        )
    if not parts:
        return N_("every pod evicted; waiting for their slices to go")
    message = parts[0]
    for part in parts[1:]:
        # The separator is translated too (a Chinese sentence joins with "；").
        message = N_("%(first)s; %(then)s", first=message, then=part)
    return message
