"""Proving from the cluster that an isolation (or a restore) took effect.

Writing a chip's UUID into its node's ``filterDevices`` and restarting that
node's device-plugin pod is what the portal does; whether the plugin then
stopped registering the chip is what the cluster says. Sync hands every batch
of node states here, and a chip waiting for its proof moves on only when both
signs agree:

- isolating -> isolated: the chip is gone from the node's
  ``hami.io/node-register-<commonWord>`` annotation and the node's allocatable
  ``huawei.com/<commonWord>`` has caught up with that registration (it equals
  the slots of the healthy chips listed: the plugin lists fewer devices to the
  kubelet, and an unhealthy chip's were never allocatable);
- restoring -> in service: the chip is registered again and allocatable has
  caught up the same way.

Until then the chip keeps its waiting state and ``isolation_seen`` says what
the portal last saw, so a proof that does not come is explained, not silent.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from apps.audit.services import audit_record
from apps.inventory.choices import ChipIsolation
from apps.inventory.models import Chip, Cluster
from apps.inventory.services.cordon import chips_broadcast
from apps.inventory.sync.derive import NodeState

#: The isolation states in which a chip the plugin stops registering keeps its row.
ISOLATION_KEEPS_ROW = frozenset(
    {ChipIsolation.ISOLATING, ChipIsolation.ISOLATED, ChipIsolation.RESTORING}
)
_WAITING = (ChipIsolation.ISOLATING, ChipIsolation.RESTORING)
REGISTERED_AGAIN = (
    "the device plugin registers the chip again: its filter was lifted outside "
    "the portal (a hand edit or a rollback); other schedulers may place on it. "
    "Restore it, or isolate it again after a restore"
)


@dataclass(frozen=True)
class Verdict:
    """Where a waiting chip stands after one look at its node."""

    state: str  # a ChipIsolation value
    seen: str


def judge(
    state: str,
    *,
    registered: bool,
    allocatable_now: int | None,
    allocatable_expected: int,
) -> Verdict:
    """The next isolation state of a chip waiting for its proof (pure).

    Args:
        state: ``isolating`` or ``restoring``.
        registered: Whether the node's registration annotation lists the chip.
        allocatable_now: The node's allocatable count of the chip's resource,
            None when the node does not list it.
        allocatable_expected: What that count is once the kubelet has caught
            up with the registration as it is now: the slots of the healthy
            chips of that type it lists (the kubelet counts only healthy
            devices). Read from the same observation, so nothing else that
            changes on the node meanwhile (another chip's health, a restore, a
            slot count) can keep the proof from coming; a plugin pod in
            between (the kubelet may show 0 then) does not prove it either.
    """
    counts = f"allocatable {allocatable_now} (expected {allocatable_expected})"
    caught_up = allocatable_now is None or allocatable_now == allocatable_expected
    if state == ChipIsolation.ISOLATING:
        if registered:
            return Verdict(
                state, f"the device plugin still registers the chip; {counts}"
            )
        if not caught_up:
            return Verdict(state, f"the chip left the registration but {counts}")
        return Verdict(
            ChipIsolation.ISOLATED, f"unregistered by the device plugin; {counts}"
        )
    if not registered:
        return Verdict(
            state, f"the device plugin does not register the chip yet; {counts}"
        )
    if not caught_up:
        return Verdict(state, f"the chip is registered again but {counts}")
    return Verdict(
        ChipIsolation.NONE, f"registered again by the device plugin; {counts}"
    )


def isolation_overdue(chip: Chip, now: datetime) -> bool:
    """Whether the chip has waited for its proof longer than the setting allows."""
    if chip.isolation not in _WAITING or chip.isolation_since is None:
        return False
    limit = timedelta(seconds=settings.ISOLATION_PROOF_TIMEOUT_SECONDS)
    return now - chip.isolation_since > limit


def settle_isolations(cluster: Cluster, states: Sequence[NodeState]) -> None:
    """Move the chips of these nodes on, from what the nodes now say.

    A waiting chip moves when the proof comes (see :func:`judge`). An isolated
    chip the plugin registers again (its filter lifted outside the portal: a
    hand edit, a rollback) stays isolated for the portal, which says so: a
    restore then puts it back.
    """
    by_node: Mapping[str, NodeState] = {s.name: s for s in states}
    watched = (
        Chip.objects.order_by()
        .filter(
            cluster=cluster,
            node__name__in=list(by_node),
            isolation__in=(*_WAITING, ChipIsolation.ISOLATED),
        )
        .select_related("node")
    )
    for chip in watched:
        node = by_node[chip.node.name]
        registered = any(c.uuid == chip.uuid for c in node.chips)
        if chip.isolation == ChipIsolation.ISOLATED:
            verdict = Verdict(chip.isolation, chip.isolation_seen)
            if registered:
                verdict = Verdict(chip.isolation, REGISTERED_AGAIN)
        else:
            verdict = judge(
                chip.isolation,
                registered=registered,
                allocatable_now=node.vnpu_allocatable.get(chip.common_word),
                allocatable_expected=sum(
                    c.slots
                    for c in node.chips
                    if c.common_word == chip.common_word and c.healthy
                ),
            )
        if (verdict.state, verdict.seen) == (chip.isolation, chip.isolation_seen):
            continue
        _record(chip, verdict)


def _record(chip: Chip, verdict: Verdict) -> None:
    proved = verdict.state != chip.isolation
    chip.isolation_seen = verdict.seen
    if proved:
        chip.isolation = verdict.state
        chip.isolation_since = timezone.now()
        if verdict.state == ChipIsolation.NONE:
            chip.isolation_reason = ""
    chip.save(
        update_fields=[
            "isolation",
            "isolation_seen",
            "isolation_since",
            "isolation_reason",
        ]
    )
    if proved:
        # the chip's state changed: the live rows follow (the heat map, the table)
        chips_broadcast(chip.cluster_id, [chip.pk])
        audit_record(
            actor=None,
            actor_name="sync",
            action="chip.isolated" if verdict.state else "chip.restored",
            target=chip,
            after={"uuid": chip.uuid, "node": chip.node.name, "seen": verdict.seen},
        )
