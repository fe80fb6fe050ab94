"""Live deltas of scheduling, on the cluster's WebSocket group (sent on commit).

Events (apps.live.events): ``requests`` ``{rows: [{id, state, reason}]}`` for
one or more requests of a cluster, and ``proposal`` ``{id, state, request,
chip_uuid}``. Clients refetch what they show; the payloads are small on purpose.
"""

from __future__ import annotations

from collections.abc import Iterable

from apps.live.events import Event, proposal_payload, requests_payload
from apps.live.realtime import broadcast_on_commit, cluster_group
from apps.scheduling.models import PreemptionProposal, Request


def request_changed(request: Request) -> None:
    """Tell the cluster's watchers that ``request`` changed."""
    requests_changed(request.cluster_id, [request])


def requests_changed(cluster_id: int, requests: Iterable[Request]) -> None:
    """One ``requests`` event for many requests of one cluster."""
    payload = requests_payload((r.pk, r.state, r.reason) for r in requests)
    if payload["rows"]:
        broadcast_on_commit(cluster_group(cluster_id), Event.REQUESTS, payload)


def proposal_changed(proposal: PreemptionProposal) -> None:
    """Tell the cluster's watchers that ``proposal`` changed."""
    broadcast_on_commit(
        cluster_group(proposal.cluster_id),
        Event.PROPOSAL,
        proposal_payload(
            proposal.pk, proposal.state, proposal.request_id, proposal.chip_uuid
        ),
    )
