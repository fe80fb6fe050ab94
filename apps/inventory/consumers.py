"""WebSocket consumers of the inventory: they only authenticate, route and forward."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any
from urllib.parse import parse_qs

from channels.db import database_sync_to_async

from apps.accounts.models import ApiToken
from apps.accounts.selectors import user_role
from apps.accounts.ws import AuthRecheckMixin
from apps.common.languages import language_from_headers
from apps.inventory.models import Cluster
from apps.inventory.selectors import (
    chip_usage,
    cluster_summary,
    nodes_without_chips,
)
from apps.live.consumers import LiveGroupConsumer
from apps.live.events import (
    SnapshotPayload,
    delta_message,
    joined_message,
    snapshot_message,
    snapshot_payload,
)
from apps.live.logfollow import LogFollows, is_log_message
from apps.live.realtime import cluster_group
from apps.live.scoping import is_scoped, scoped_payload

log = logging.getLogger(__name__)

#: The least time between two snapshots a client asks for (``resync``).
RESYNC_INTERVAL_SECONDS = 1.0


def cluster_snapshot(cluster_id: int) -> SnapshotPayload | None:
    """What a client starts from: the summary and every chip (None: no such cluster)."""
    cluster = Cluster.objects.filter(pk=cluster_id).first()
    if cluster is None:
        return None
    return snapshot_payload(
        cluster_summary(cluster),
        chip_usage(cluster),
        nodes_without_chips(cluster),
        cluster.last_sync_error,
    )


_snapshot = database_sync_to_async(cluster_snapshot)


def _asks_for_joined(scope: dict[str, Any]) -> bool:
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    return query.get("joined") == ["1"]


@database_sync_to_async
def _cluster_exists(cluster_id: int) -> bool:
    return Cluster.objects.filter(pk=cluster_id).exists()


@database_sync_to_async
def _role(user: Any) -> Any:
    return user_role(user)


@database_sync_to_async
def _token_queue_ids(token_id: int | None) -> list[int]:
    if token_id is None:
        return []
    token = ApiToken.objects.filter(pk=token_id).only("queue_ids").first()
    return [int(pk) for pk in token.queue_ids] if token else []


@database_sync_to_async
def _scoped(
    event: str, queue_ids: list[int], payload: dict[str, Any]
) -> dict[str, Any] | None:
    return scoped_payload(event, queue_ids, payload)


class ClusterConsumer(AuthRecheckMixin, LiveGroupConsumer):
    """``/ws/clusters/<id>/``: a snapshot on connect, then every delta of that cluster.

    Messages are ``{"type": "snapshot"|"delta", "event": ..., "payload": ...}``
    (apps.live.events: the live contract); with ``?joined=1`` a ``joined``
    message comes first, as soon as the socket is subscribed.
    A client that reconnects asks for nothing: it gets a fresh snapshot. The
    socket is closed (4401) once its token is revoked or its user
    deactivated (``WS_AUTH_RECHECK_SECONDS``).

    It also follows job logs on request (``logs.follow`` / ``logs.stop``, of
    any request the socket's user and token may read, whatever its cluster):
    ``apps.live.logfollow``.
    """

    # Deltas that arrive while a snapshot is being built wait here and follow
    # it, in order (None: none is being built, deltas go straight out).
    _held: list[dict[str, Any]] | None = None
    #: The queues of a socket opened with a token limited to them (empty: any).
    queue_ids: list[int] = []
    _last_resync = float("-inf")
    _snapshot_task: asyncio.Task[None] | None = None
    _closed = False
    _logs: LogFollows | None = None

    async def connect(self) -> None:
        self.cluster_id = int(self.scope["url_route"]["kwargs"]["cluster_id"])
        if await _role(self.scope.get("user")) is None:
            await self.close(code=4401)
            return
        if not await _cluster_exists(self.cluster_id):
            # Accepted, then closed: a close before accept is an HTTP 403 on
            # the handshake, and a browser sees only 1006 and reconnects
            # forever instead of saying the cluster is gone. (A refused
            # session stays refused at the handshake: 4401 above.)
            await self.accept()
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
        self.queue_ids = await _token_queue_ids(self.scope.get("api_token_id"))
        await self.accept()
        self._logs = LogFollows(
            self.send_json,
            self.scope.get("user"),
            self.scope.get("api_token_id"),
            language_from_headers(self.scope.get("headers")),
        )
        self.start_auth_recheck()
        await self.listen_for_revocation()
        if _asks_for_joined(self.scope):
            await self.send_json(joined_message())
        self._start_snapshot()

    def _start_snapshot(self) -> None:
        """Build and send a snapshot in a task of its own, holding the deltas
        meanwhile: the consumer goes on taking them off the channel layer,
        whose per-channel capacity would otherwise drop the newest of a burst
        while a big snapshot is built."""
        if self._snapshot_task is not None and not self._snapshot_task.done():
            return  # one is on its way
        self._held = []
        self._snapshot_task = asyncio.create_task(self._send_snapshot())

    async def _send_snapshot(self) -> None:
        try:
            snapshot = await _snapshot(self.cluster_id)
        except Exception:
            log.warning("snapshot of cluster %s failed", self.cluster_id, exc_info=True)
            await self._shut(1011)  # the client reconnects with backoff
            return
        if snapshot is None:  # the cluster was deleted meanwhile
            await self._shut(4404)
            return
        await self.send_json(snapshot_message(snapshot))
        # Deltas held meanwhile, in order; those arriving during these sends
        # join the queue, so nothing overtakes what came before it.
        while self._held:
            held, self._held = self._held, []
            for message in held:
                await self.send_json(message)
        self._held = None

    async def _shut(self, code: int) -> None:
        self._closed = True
        self._held = None
        if self._logs is not None:
            await self._logs.stop_all()
        await self.leave()
        await self.close(code=code)

    async def portal_event(self, message: dict[str, Any]) -> None:
        if self._closed:
            return
        payload = message["payload"]
        if self.queue_ids and is_scoped(message["event"]):
            # A token limited to queues hears what REST would show it.
            payload = await _scoped(message["event"], self.queue_ids, payload)
            if payload is None:
                return
        delta = delta_message(message["event"], payload)
        if self._held is not None:
            self._held.append(delta)
            return
        await self.send_json(delta)

    async def disconnect(self, code: int) -> None:
        self._closed = True
        if self._snapshot_task is not None:
            self._snapshot_task.cancel()
        if self._logs is not None:
            await self._logs.stop_all()
        await self.stop_auth_recheck()
        await self.leave()

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        if is_log_message(content) and self._logs is not None and not self._closed:
            await self._logs.handle(content)
            return
        # Otherwise: a fresh snapshot after it fell behind.
        if isinstance(content, dict) and content.get("type") == "resync":
            # At most one a second: each builds a whole snapshot.
            now = time.monotonic()
            if now - self._last_resync < RESYNC_INTERVAL_SECONDS:
                return
            self._last_resync = now
            self._start_snapshot()
