"""The plumbing every live WebSocket consumer shares: one group, its deltas."""

from __future__ import annotations

import logging
from typing import Any

from channels.generic.websocket import AsyncJsonWebsocketConsumer
from redis.exceptions import ConnectionError as RedisConnectionError

from apps.live.events import delta_message
from apps.live.realtime import ensure_outbox_relay

log = logging.getLogger(__name__)


class LiveGroupConsumer(AsyncJsonWebsocketConsumer):
    """Joins one Channels group and forwards each of its deltas to the client.

    A delta is sent as ``{"type": "delta", "event": ..., "payload": ...}``
    (``broadcast`` puts it in the group as ``portal.event``; apps.live.events
    defines the events and their payloads). Joining starts
    this process's outbox relay when the outbox carries the deltas.
    """

    group: str

    async def join(self, group: str) -> None:
        """Receive the deltas of ``group`` from now on.

        Tried twice: after a Redis restart the first command on a pooled
        connection fails once (the probe saw the first handshake answer 500),
        and the second, on a fresh connection, works.
        """
        self.group = group
        try:
            await self.channel_layer.group_add(group, self.channel_name)
        except (ConnectionError, OSError, RedisConnectionError):
            log.warning("joining %s failed once; trying again", group, exc_info=True)
            await self.channel_layer.group_add(group, self.channel_name)
        await ensure_outbox_relay()

    async def leave(self) -> None:
        """Stop receiving deltas (nothing to do when it never joined)."""
        if hasattr(self, "group"):
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def portal_event(self, message: dict[str, Any]) -> None:
        await self.send_json(delta_message(message["event"], message["payload"]))
