"""WebSocket consumers of the inventory: they only authenticate, route and forward."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs

from channels.db import database_sync_to_async

from apps.accounts.selectors import user_role
from apps.accounts.ws import AuthRecheckMixin
from apps.live.consumers import LiveGroupConsumer
from apps.live.events import (
    SnapshotPayload,
    joined_message,
    snapshot_message,
    snapshot_payload,
)
from apps.live.realtime import cluster_group


def cluster_snapshot(cluster_id: int) -> SnapshotPayload | None:
    """What a client starts from: the summary and every chip (None: no such cluster)."""
    from apps.inventory.models import Cluster
    from apps.inventory.selectors import chip_usage, cluster_summary

    cluster = Cluster.objects.filter(pk=cluster_id).first()
    if cluster is None:
        return None
    return snapshot_payload(
        cluster_summary(cluster), chip_usage(cluster), cluster.last_sync_error
    )


_snapshot = database_sync_to_async(cluster_snapshot)


def _asks_for_joined(scope: dict[str, Any]) -> bool:
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    return query.get("joined") == ["1"]


@database_sync_to_async
def _cluster_exists(cluster_id: int) -> bool:
    from apps.inventory.models import Cluster

    return Cluster.objects.filter(pk=cluster_id).exists()


@database_sync_to_async
def _role(user: Any) -> Any:
    return user_role(user)


class ClusterConsumer(AuthRecheckMixin, LiveGroupConsumer):
    """``/ws/clusters/<id>/``: a snapshot on connect, then every delta of that cluster.

    Messages are ``{"type": "snapshot"|"delta", "event": ..., "payload": ...}``
    (apps.live.events: the live contract); with ``?joined=1`` a ``joined``
    message comes first, as soon as the socket is subscribed.
    A client that reconnects asks for nothing: it gets a fresh snapshot. The
    socket is closed (4401) once its token is revoked or its user
    deactivated (``WS_AUTH_RECHECK_SECONDS``).
    """

    async def connect(self) -> None:
        self.cluster_id = int(self.scope["url_route"]["kwargs"]["cluster_id"])
        if await _role(self.scope.get("user")) is None:
            await self.close(code=4401)
            return
        if not await _cluster_exists(self.cluster_id):
            await self.close(code=4404)
            return
        # Join before reading the snapshot: a change committed while it is
        # read and built (some 150 ms at 8,000 chips) then arrives as a delta
        # after it, where joining after would lose it until that chip changed
        # again. A delta older than the snapshot may also follow it: chip rows
        # and counts are whole values, so applying them in order converges
        # (the activity feed may list such a change twice). A client that
        # asks (?joined=1, the web app) is told at once: what it fetches from
        # then on is covered, and needs no refetch when the snapshot comes.
        await self.join(cluster_group(self.cluster_id))
        await self.accept()
        self.start_auth_recheck()
        if _asks_for_joined(self.scope):
            await self.send_json(joined_message())
        snapshot = await _snapshot(self.cluster_id)
        if snapshot is None:  # deleted since
            await self.close(code=4404)
            return
        await self.send_json(snapshot_message(snapshot))

    async def disconnect(self, code: int) -> None:
        await self.stop_auth_recheck()
        await self.leave()

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        # The only request a client makes: a fresh snapshot after it fell behind.
        if isinstance(content, dict) and content.get("type") == "resync":
            snapshot = await _snapshot(self.cluster_id)
            await self.send_json(snapshot_message(snapshot))
