"""Drain writes: create (cordon, plan, start), approve, reject, uncordon.

Each is one transaction under the cluster row's lock, as a preemption's
approval is, so no scheduling pass books a chip while it is being cordoned;
each is audited naming who and why. Evictions run after commit
(``apps.scheduling.drain.evict``, through ``triggers``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.audit.services import audit_record
from apps.inventory.hami.messages import N_
from apps.inventory.models import Chip, Cluster
from apps.inventory.services.cordon import (
    chips_cordon,
    chips_drain_release,
    chips_uncordon,
)
from apps.scheduling import triggers
from apps.scheduling.choices import OPEN_DRAIN_STATES, DrainScope, DrainState
from apps.scheduling.decisions import open_for_decision, reason_required
from apps.scheduling.drain.plan import cluster_facts, planned_pods
from apps.scheduling.errors import DrainExists, NotCordoned
from apps.scheduling.models import Drain
from apps.scheduling.progress import progress_fields, set_progress


def drain_create(
    *,
    cluster: Cluster,
    scope: DrainScope,
    node: str,
    chips: Sequence[Chip],
    actor: Any,
    reason: str,
) -> Drain:
    """Cordon ``chips`` and drain them (see the package doc).

    The cluster is read first (pod labels, PodDisruptionBudgets), so a cluster
    that cannot be read changes nothing.

    Raises:
        ValidationFailed: No reason given.
        DrainExists: A chip is held by an open drain already (409; ``detail``
            names it): a second drain of a chip is refused, never merged.
        ClusterUnavailable: The cluster could not be read (503).
    """
    reason = reason_required(reason)
    facts = cluster_facts(cluster, node)
    with transaction.atomic():
        Cluster.objects.select_for_update(no_key=True).filter(pk=cluster.pk).first()
        locked = list(
            Chip.objects.select_for_update()
            .filter(pk__in=[c.pk for c in chips])
            .order_by("pk")
        )
        held = next((c for c in locked if c.active_drain), None)
        if held is not None:
            raise DrainExists(
                _("chip %(chip)s is being drained already (drain %(drain)s)")
                % {"chip": held.uuid, "drain": held.active_drain},
                detail={"drain": held.active_drain, "chip": held.uuid},
            )
        uuids = [c.uuid for c in sorted(locked, key=lambda c: (c.common_word, c.index))]
        victims = planned_pods(cluster, uuids, facts)
        for victim in victims:
            victim["approved"] = not victim["foreign"]
        drain = Drain.objects.create(
            cluster=cluster,
            scope=scope,
            node=node,
            chip=locked[0] if scope == DrainScope.CHIP and locked else None,
            chip_uuids=uuids,
            victims=victims,
            reason=reason,
            requested_by=actor if getattr(actor, "pk", None) else None,
            **_first_state(victims),
        )
        chips_cordon(cluster.pk, [c.pk for c in locked], drain_id=drain.pk)
        audit_record(
            actor=actor,
            action="drain.create",
            target=drain,
            cluster=cluster,
            after={
                "scope": scope,
                "node": node,
                "chips": uuids,
                "cordoned": True,
                "state": drain.state,
                "pods": [_pod(v) for v in victims],
            },
            reason=reason,
        )
        if victims:
            triggers.run_after_commit("drain", drain.pk)
    return drain


def _first_state(victims: list[dict[str, Any]]) -> dict[str, Any]:
    if not victims:
        return {
            "state": DrainState.DRAINED,
            **progress_fields(N_("no slice was on it: cordoned only")),
        }
    foreign = sum(1 for v in victims if v["foreign"])
    own = len(victims) - foreign
    if foreign:
        return {
            "state": DrainState.PENDING,
            **progress_fields(
                N_(
                    "%(own)d portal pod(s) to evict; %(foreign)d foreign pod(s) "
                    "wait for an admin's approval",
                    own=own,
                    foreign=foreign,
                )
            ),
        }
    return {
        "state": DrainState.EVICTING,
        **progress_fields(N_("%(own)d portal pod(s) to evict", own=own)),
    }


def _pod(victim: dict[str, Any]) -> str:
    return f"{victim['namespace']}/{victim['pod']}"


def drain_approve(*, drain: Drain, actor: Any, reason: str) -> Drain:
    """Approve a pending drain: its foreign pods are evicted too.

    Raises:
        ValidationFailed: No reason given.
        ProposalDecided: The drain is not waiting for a decision (409).
    """
    reason = reason_required(reason)
    with transaction.atomic():
        current = _decide(drain.pk, actor, reason, DrainState.EVICTING)
        foreign = [v for v in current.victims if not v.get("approved")]
        for victim in foreign:
            victim["approved"] = True
        set_progress(
            current,
            N_("approved; %(count)d foreign pod(s) to evict", count=len(foreign)),
        )
        current.save()
        _audit_decision(current, actor, reason, [_pod(v) for v in foreign])
        triggers.run_after_commit("drain", current.pk)
    return current


def drain_reject(*, drain: Drain, actor: Any, reason: str) -> Drain:
    """Reject a pending drain: its foreign pods keep running, nothing more is
    evicted; the chips stay cordoned until an uncordon.

    Raises:
        ValidationFailed: No reason given.
        ProposalDecided: The drain is not waiting for a decision (409).
    """
    reason = reason_required(reason)
    with transaction.atomic():
        current = _decide(drain.pk, actor, reason, DrainState.REJECTED)
        set_progress(current, N_("rejected; the foreign pods keep running"))
        current.ended_at = current.decided_at
        current.next_attempt_at = None
        current.save()
        chips_drain_release(current.cluster_id, current.pk)
        _audit_decision(current, actor, reason, [])
    return current


def _decide(drain_id: int, actor: Any, reason: str, state: DrainState) -> Drain:
    """The pending drain, locked, with the decision set (saved by the caller)."""
    current = open_for_decision(
        Drain.objects.all(), drain_id, noun="drain", pending=DrainState.PENDING
    )
    current.state = state
    current.decided_by = actor if getattr(actor, "pk", None) else None
    current.decided_at = timezone.now()
    current.decision_reason = reason
    return current


def _audit_decision(drain: Drain, actor: Any, reason: str, evicted: list[str]) -> None:
    verb = "approve" if drain.state == DrainState.EVICTING else "reject"
    audit_record(
        actor=actor,
        action=f"drain.{verb}",
        target=drain,
        before={"state": DrainState.PENDING},
        after={"state": drain.state, "pods": evicted, "chips": drain.chip_uuids},
        reason=reason,
    )


def uncordon(
    *, cluster: Cluster, node: str, chips: Sequence[Chip], actor: Any, reason: str
) -> list[Chip]:
    """Put cordoned chips back in service; an open drain holding one ends
    (its evictions stop; pods not evicted yet keep running).

    Raises:
        ValidationFailed: No reason given.
        NotCordoned: None of the chips is cordoned (409).
    """
    reason = reason_required(reason)
    with transaction.atomic():
        locked = list(
            Chip.objects.select_for_update()
            .filter(pk__in=[c.pk for c in chips], cordoned=True)
            .order_by("pk")
        )
        if not locked:
            raise NotCordoned(
                _("nothing to uncordon on %(node)s: no chip is cordoned")
                % {"node": node}
            )
        ended = _end_drains(cluster, {c.active_drain for c in locked} - {None}, actor)
        chips_uncordon(cluster.pk, [c.pk for c in locked])
        audit_record(
            actor=actor,
            action="chip.uncordon",
            cluster=cluster,
            target=locked[0] if len(locked) == 1 else None,
            before={"cordoned": True, "drains": ended},
            after={"cordoned": False, "node": node, "chips": [c.uuid for c in locked]},
            reason=reason,
        )
    return list(Chip.objects.filter(pk__in=[c.pk for c in locked]).order_by("pk"))


def _end_drains(cluster: Cluster, drain_ids: set[int | None], actor: Any) -> list[int]:
    """Close the open drains of ``drain_ids``; their other chips stay cordoned."""
    who = actor.get_username() if getattr(actor, "pk", None) else "system"
    ended = []
    for drain in Drain.objects.select_for_update().filter(
        pk__in=sorted(i for i in drain_ids if i), state__in=OPEN_DRAIN_STATES
    ):
        if drain.state != DrainState.DRAINED:
            set_progress(
                drain,
                N_(
                    "uncordoned by %(user)s before it ended: evictions stopped",
                    user=who,
                ),
            )
        drain.state = DrainState.UNCORDONED
        drain.ended_at = timezone.now()
        drain.next_attempt_at = None
        drain.save()
        chips_drain_release(cluster.pk, drain.pk)
        ended.append(drain.pk)
    return ended
