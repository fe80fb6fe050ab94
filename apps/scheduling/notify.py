"""Live deltas of scheduling, on the cluster's WebSocket group (sent on commit).

Events: ``request`` ``{id, state, reason, queue, position?}`` and ``proposal``
``{id, state, request, chip_uuid}``. Clients refetch what they show; the
payloads are small on purpose.
"""

from __future__ import annotations

from collections.abc import Iterable

from apps.live.realtime import broadcast_on_commit, cluster_group
from apps.scheduling.models import PreemptionProposal, Request


def request_changed(request: Request) -> None:
    """Tell the cluster's watchers that ``request`` changed."""
    requests_changed(request.cluster_id, [request])


def requests_changed(cluster_id: int, requests: Iterable[Request]) -> None:
    """One ``requests`` event for many requests of one cluster."""
    rows = [{"id": r.pk, "state": r.state, "reason": r.reason[:500]} for r in requests]
    if rows:
        broadcast_on_commit(cluster_group(cluster_id), "requests", {"rows": rows[:500]})


def proposal_changed(proposal: PreemptionProposal) -> None:
    """Tell the cluster's watchers that ``proposal`` changed."""
    broadcast_on_commit(
        cluster_group(proposal.cluster_id),
        "proposal",
        {
            "id": proposal.pk,
            "state": proposal.state,
            "request": proposal.request_id,
            "chip_uuid": proposal.chip_uuid,
        },
    )
