"""Proving from the cluster that an isolation (or a restore) took effect.

Writing a chip's UUID into its node's ``filterDevices`` and restarting that
node's device-plugin pod is what the portal does; whether the plugin then
stopped registering the chip is what the cluster says. Sync hands every batch
of node states here, and a chip waiting for its proof moves on only when both
signs agree:

- isolating -> isolated: the chip is gone from the node's
  ``hami.io/node-register-<commonWord>`` annotation and the node's allocatable
  ``huawei.com/<commonWord>`` is below what it was when the isolation started
  (the plugin lists fewer devices to the kubelet; an unhealthy chip's slots
  were not allocatable to begin with);
- restoring -> in service: the chip is registered again (its row is registered
  once more by sync) and allocatable grew back.

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


@dataclass(frozen=True)
class Verdict:
    """Where a waiting chip stands after one look at its node."""

    state: str  # a ChipIsolation value
    seen: str


def judge(
    state: str,
    *,
    registered: bool,
    healthy: bool,
    allocatable_now: int | None,
    allocatable_bound: int | None,
) -> Verdict:
    """The next isolation state of a chip waiting for its proof (pure).

    Args:
        state: ``isolating`` or ``restoring``.
        registered: Whether the node's registration annotation lists the chip.
        healthy: Its registered health (when registered).
        allocatable_now: The node's allocatable count of the chip's resource,
            None when the node does not list it.
        allocatable_bound: Isolating: the most the count may be once the chip
            is gone (a healthy chip's slots off what it was; an unhealthy
            chip's slots were never allocatable). Restoring: the least it
            must reach once a healthy chip is back. None: not checked.
    """
    now = "not listed" if allocatable_now is None else str(allocatable_now)
    counts = f"allocatable {now}"
    if allocatable_bound is not None:
        goal = "at most" if state == ChipIsolation.ISOLATING else "at least"
        counts += f" (expected {goal} {allocatable_bound})"
    if state == ChipIsolation.ISOLATING:
        if registered:
            return Verdict(
                state, f"the device plugin still registers the chip; {counts}"
            )
        if allocatable_bound is not None and (allocatable_now or 0) > allocatable_bound:
            return Verdict(state, f"the chip left the registration but {counts}")
        return Verdict(
            ChipIsolation.ISOLATED, f"unregistered by the device plugin; {counts}"
        )
    if not registered:
        return Verdict(
            state, f"the device plugin does not register the chip yet; {counts}"
        )
    # A chip that comes back unhealthy adds nothing to allocatable.
    short = allocatable_bound is not None and (allocatable_now or 0) < allocatable_bound
    if healthy and short:
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
    """Move the waiting chips of these nodes on, from what the nodes now say."""
    by_node: Mapping[str, NodeState] = {s.name: s for s in states}
    waiting = (
        Chip.objects.order_by()
        .filter(
            cluster=cluster,
            node__name__in=list(by_node),
            isolation__in=_WAITING,
        )
        .select_related("node")
    )
    for chip in waiting:
        node = by_node[chip.node.name]
        seen = next((c for c in node.chips if c.uuid == chip.uuid), None)
        verdict = judge(
            chip.isolation,
            registered=seen is not None,
            healthy=seen is not None and seen.healthy,
            allocatable_now=node.vnpu_allocatable.get(chip.common_word),
            allocatable_bound=chip.isolation_allocatable_bound,
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
            chip.isolation_allocatable_bound = None
    chip.save(
        update_fields=[
            "isolation",
            "isolation_seen",
            "isolation_since",
            "isolation_reason",
            "isolation_allocatable_bound",
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
