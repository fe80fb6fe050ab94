"""Node holds: the one taint per node that keeps a preemption's freed room.

An approved preemption holds its node (``pods.hold_taint``) before evicting
anything: Volcano counts a terminating victim's room as free, so without the
hold any pending pod could be bound into it. Any number of preemptions may
hold one node at once; the node carries one taint, every held request's pod
tolerates it (each is pinned to its own node and chip), and the taint is
lifted when the last of those requests no longer waits for its room there.

Who holds a node is recorded in the database (``PreemptionProposal.
held_node``) before the taint is put on, and cleared only after the taint is
lifted or another holder keeps it, so a crash at any step leaves a record
that the next reconciliation finishes: never a taint nothing will lift.
"""

from __future__ import annotations

import logging
from itertools import groupby
from typing import Any

from apps.audit.services import audit_record
from apps.inventory.hami.messages import N_
from apps.inventory.models import Cluster
from apps.scheduling import notify
from apps.scheduling.choices import CARRIED_OUT_STATES, ProposalState, RequestState
from apps.scheduling.kube import ClusterOps, KubeError
from apps.scheduling.models import PreemptionProposal
from apps.scheduling.pods import HOLD_TAINT_KEY, hold_taint, legacy_hold_key
from apps.scheduling.progress import progress_fields

log = logging.getLogger(__name__)

#: A held request waits for its room in these states.
_WAITING = (RequestState.RESERVED, RequestState.ADMITTED)


def hold_node(ops: ClusterOps, proposal: PreemptionProposal) -> bool:
    """Hold the proposal's node for its request (again on every attempt: a GET
    when the taint is in place). Recorded first (module docstring). False
    when the node is gone."""
    if proposal.held_node != proposal.node:
        PreemptionProposal.objects.filter(pk=proposal.pk).update(
            held_node=proposal.node
        )
        proposal.held_node = proposal.node
    return ops.node_taint(proposal.node, hold_taint())


def _still_needed(proposal: PreemptionProposal) -> bool:
    carried_out = proposal.state in (*CARRIED_OUT_STATES, ProposalState.DONE)
    return carried_out and proposal.request.state in _WAITING


def _holders(cluster: Cluster, node: str) -> list[int]:
    """Proposals whose record holds ``node`` and whose request still waits."""
    return [
        p.pk
        for p in PreemptionProposal.objects.filter(cluster=cluster, held_node=node)
        .select_related("request")
        .order_by("pk")
        if _still_needed(p)
    ]


def holds_release(cluster: Cluster, ops: ClusterOps) -> list[str]:
    """Lift the holds no request waits for any more; returns the nodes freed.

    A node is untainted only when no other held request waits on it. The
    check is made again after the taint is lifted: a preemption that recorded
    its hold meanwhile (its own taint call may have come first and found the
    taint in place) gets the taint back at once.
    """
    held = (
        PreemptionProposal.objects.filter(cluster=cluster)
        .exclude(held_node="")
        .select_related("request")
        .order_by("held_node", "pk")
    )
    freed: list[str] = []
    for node, proposals in groupby(held, key=lambda p: p.held_node):
        done = [p for p in proposals if not _still_needed(p)]
        if not done:
            continue
        legacy = [legacy_hold_key(p.request_id) for p in done]
        try:
            if _holders(cluster, node):
                ops.node_untaint(node, *legacy)
                lifted = False
            else:
                ops.node_untaint(node, HOLD_TAINT_KEY, *legacy)
                lifted = True
                if _holders(cluster, node):
                    ops.node_taint(node, hold_taint())
                    lifted = False
        except KubeError as exc:
            log.info("node %s: hold not lifted yet: %s", node, exc)
            continue
        for proposal in done:
            _forget_hold(proposal, lifted)
        if lifted:
            freed.append(node)
            audit_record(
                actor=None,
                actor_name="reconcile",
                action="node.hold_release",
                cluster=cluster,
                after={"node": node, "proposals": [p.pk for p in done]},
            )
    return freed


def _forget_hold(proposal: PreemptionProposal, lifted: bool) -> None:
    node = proposal.held_node
    released: dict[str, Any] = {"held_node": ""}
    if proposal.request.state == RequestState.RUNNING:
        ids = {"request": proposal.request_id, "node": node}
        message = (
            N_(
                "request %(request)s runs on the freed room; node %(node)s released",
                **ids,
            )
            if lifted
            else N_(
                "request %(request)s runs on the freed room; node %(node)s still "
                "held for other requests",
                **ids,
            )
        )
        released.update(progress_fields(message))
    if PreemptionProposal.objects.filter(pk=proposal.pk, held_node=node).update(
        **released
    ):
        proposal.refresh_from_db()
        notify.proposal_changed(proposal)
    log.info(
        "proposal %s: its hold on node %s ended (request %s is %s)",
        proposal.pk,
        node,
        proposal.request_id,
        proposal.request.state,
    )
