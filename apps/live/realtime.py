"""Live deltas to WebSocket clients, from services and workers.

Two transports, chosen by settings:

- a real channel layer (Redis in deployment): ``broadcast`` is a group_send;
- the outbox (``REALTIME_OUTBOX``, the embedded default without Redis): the
  worker is another process, so an in-memory layer would never reach the web
  process's clients. ``broadcast`` writes a LiveEvent row instead, and the web
  process relays new rows to its in-memory layer (``relay_outbox``). The same
  table gives reconnecting clients nothing they need: they resync from a
  snapshot, so old rows are pruned after a minute.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from asgiref.sync import async_to_sync, sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from apps.live.events import Event
from apps.live.models import LiveEvent

log = logging.getLogger(__name__)
EVENT_TYPE = "portal.event"


def cluster_group(cluster_id: int) -> str:
    """The Channels group that receives every delta of one cluster."""
    return f"inventory.cluster.{cluster_id}"


def broadcast(group: str, event: Event, payload: Mapping[str, Any]) -> None:
    """Send ``{"event": event, "payload": payload}`` to everyone in ``group`` now.

    The payload is built by ``apps.live.events``' builder for that event.
    """
    name = str(event)  # plain text, for the outbox and the channel layer
    if getattr(settings, "REALTIME_OUTBOX", False):
        row = LiveEvent.objects.create(group=group, event=name, payload=payload)
        # The writer prunes, now and then: the web process only reads, so on
        # SQLite it never waits for the write lock sync holds.
        if row.pk % 200 == 0:
            LiveEvent.objects.filter(
                created_at__lt=timezone.now() - timedelta(minutes=1)
            ).delete()
        return
    layer = get_channel_layer()
    if layer is None:
        return
    try:
        async_to_sync(layer.group_send)(
            group, {"type": EVENT_TYPE, "event": name, "payload": payload}
        )
    except Exception:  # a dead Redis must not fail the sync that produced the delta
        log.warning("broadcast to %s failed", group, exc_info=True)


def broadcast_on_commit(group: str, event: Event, payload: Mapping[str, Any]) -> None:
    """Broadcast once the surrounding transaction commits (never for a rollback)."""
    transaction.on_commit(lambda: broadcast(group, event, payload))


_relay_task: asyncio.Task[None] | None = None
_relay_ready: asyncio.Event | None = None
#: How long a socket joining waits for a (re)starting relay to find where the
#: outbox ends; past it the socket goes on (the database is slow or down).
RELAY_START_WAIT = 5.0


async def ensure_outbox_relay() -> None:
    """Start the outbox relay in this (web) process once, if the outbox is in use,
    and return once it knows where the outbox ends.

    The relay starts from the newest event: one written before that, even
    after a socket joined, would never reach it. So a socket joining waits
    for that first read before it reads its snapshot.
    """
    global _relay_task, _relay_ready
    if not getattr(settings, "REALTIME_OUTBOX", False):
        return
    loop = asyncio.get_running_loop()
    if (
        _relay_task is None
        or _relay_task.done()
        or _relay_task.get_loop() is not loop  # a loop since closed (tests)
    ):
        _relay_ready = asyncio.Event()
        _relay_task = loop.create_task(relay_outbox(ready=_relay_ready))
    try:
        await asyncio.wait_for(_relay_ready.wait(), RELAY_START_WAIT)
    except TimeoutError:
        log.warning("the outbox relay has not started after %ss", RELAY_START_WAIT)


# Not thread-sensitive: the relay polls ten times a second and must not queue
# behind (or hold up) the requests that share Django's main sync thread.
@sync_to_async(thread_sensitive=False)
def _fetch(after: int | None) -> tuple[int, list[tuple[int, str, str, Any]]]:
    if after is None:  # start from now: clients take a snapshot on connect
        last = (
            LiveEvent.objects.order_by("-id").values_list("id", flat=True).first() or 0
        )
        return last, []
    rows = list(
        LiveEvent.objects.filter(id__gt=after)
        .order_by("id")
        .values_list("id", "group", "event", "payload")[:2000]
    )
    return (rows[-1][0] if rows else after), rows


async def relay_outbox(
    interval: float = 0.1, ready: asyncio.Event | None = None
) -> None:
    """Forward new LiveEvent rows to the local channel layer, forever
    (``ready`` is set once it knows where the outbox ends)."""
    layer = get_channel_layer()
    after: int | None = None
    while True:
        try:
            after, rows = await _fetch(after)
            if ready is not None:
                ready.set()
            for _, group, event, payload in rows:
                await layer.group_send(
                    group, {"type": EVENT_TYPE, "event": event, "payload": payload}
                )
        except Exception:
            log.warning("outbox relay failed; retrying", exc_info=True)
        await asyncio.sleep(interval)
