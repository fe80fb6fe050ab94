"""Waiting for requests to reach a state, many at once, for the price of one query.

A pipeline's long poll (``GET /api/requests/<id>/?wait=``) waits as a
coroutine of the web process, never as a thread: a thread per waiter would
hold a database connection each. One poller per event loop reads the state
of every request waited on in one query every :data:`POLL_SECONDS` (in a
worker thread, closing its connection after, so no waiter keeps one open)
and wakes the waiters whose request got there. Two hundred waiting pipelines
cost two small queries a second.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Collection

from asgiref.sync import sync_to_async
from django.db import close_old_connections, connection

from apps.scheduling.models import Request

POLL_SECONDS = 0.5


def _states(ids: list[int]) -> dict[int, str]:
    close_old_connections()
    try:
        return dict(Request.objects.filter(pk__in=ids).values_list("pk", "state"))
    finally:
        if not connection.in_atomic_block:
            connection.close()


class _Poller:
    """The waiters of one event loop, and the task that polls for them."""

    def __init__(self) -> None:
        self.waiters: dict[int, list[tuple[asyncio.Future[bool], Collection[str]]]] = {}
        self.task: asyncio.Task[None] | None = None

    def add(self, request_id: int, states: Collection[str]) -> asyncio.Future[bool]:
        future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self.waiters.setdefault(request_id, []).append((future, states))
        if self.task is None or self.task.done():
            self.task = asyncio.get_running_loop().create_task(self._run())
        return future

    def remove(self, request_id: int, future: asyncio.Future[bool]) -> None:
        left = [w for w in self.waiters.get(request_id, []) if w[0] is not future]
        if left:
            self.waiters[request_id] = left
        else:
            self.waiters.pop(request_id, None)

    async def _run(self) -> None:
        while self.waiters:
            ids = list(self.waiters)
            try:
                states = await sync_to_async(_states, thread_sensitive=False)(ids)
            except Exception:  # the database is away: the waiters' timeouts stand
                await asyncio.sleep(POLL_SECONDS)
                continue
            for request_id in ids:
                state = states.get(request_id)
                for future, wanted in self.waiters.get(request_id, []):
                    if not future.done() and (state is None or state in wanted):
                        # gone (deleted) answers too: nothing more will come
                        future.set_result(state is not None)
            await asyncio.sleep(POLL_SECONDS)


_pollers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Poller] = (
    weakref.WeakKeyDictionary()
)


async def wait_for_state(
    request_id: int, states: Collection[str], timeout: float
) -> bool:
    """Wait until the request's state is in ``states``; False at ``timeout``."""
    loop = asyncio.get_running_loop()
    poller = _pollers.get(loop)
    if poller is None:
        poller = _pollers[loop] = _Poller()
    future = poller.add(request_id, states)
    try:
        return await asyncio.wait_for(future, timeout)
    except TimeoutError:
        return False
    finally:
        poller.remove(request_id, future)
