"""Bodies sent after Django's request has ended: a long stream without a thread.

Django's ASGI handler keeps a thread per request (asgiref's
``ThreadSensitiveContext``, where it runs its request signals and the sync
views) until the last byte of the answer is sent. For a log followed for an
hour, or a long poll, that is an idle thread (and its cache client's
connection) per waiting pipeline. So a view that answers with such a body
hands it over instead (:func:`detach`): Django sends the status line and
headers and ends the request (its thread, its database connection and
``request_finished`` go), and :class:`DetachedBodies`, the ASGI layer around
Django, sends the body as it comes, until it ends or the client goes away.

Where no such layer runs (a test client calling Django's handler directly,
WSGI), :func:`detach` says so and the view streams the body itself.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from typing import Any

from django.http import HttpRequest

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: Set in the scope by the layer: a view may detach its body.
AVAILABLE = "vnpuportal.detach"
#: The body a view detached (an async iterator of bytes).
BODY = "vnpuportal.detached_body"


def detach(request: HttpRequest, body: AsyncIterator[bytes]) -> bool:
    """Have ``body`` sent after the request ends; False when nothing would send it."""
    scope = getattr(request, "scope", None)
    if not scope or not scope.get(AVAILABLE):
        return False
    scope[BODY] = body
    return True


async def _no_body() -> AsyncIterator[bytes]:
    """The body Django sends for a detached answer: none (the layer sends it)."""
    return
    yield b""  # pragma: no cover - makes this an async generator


def placeholder() -> AsyncIterator[bytes]:
    """What a view streams through Django once it has detached its body."""
    return _no_body()


class DetachedBodies:
    """ASGI layer: sends the bodies views detached, after Django is done."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        scope[AVAILABLE] = True
        held: list[Message] = []

        async def hold_the_end(message: Message) -> None:
            # Django ends the answer with a body message without more_body;
            # a detached answer goes on after it.
            if (
                message["type"] == "http.response.body"
                and not message.get("more_body")
                and BODY in scope
            ):
                held.append(message)
                return
            await send(message)

        await self.app(scope, receive, hold_the_end)
        body = scope.pop(BODY, None)
        if body is None:
            for message in held:
                await send(message)
            return
        await _send_body(body, receive, send)


async def _send_body(body: AsyncIterator[bytes], receive: Receive, send: Send) -> None:
    """Send ``body`` chunk by chunk; stop when the client disconnects."""

    async def copy() -> None:
        async for chunk in body:
            if chunk:
                await send(
                    {"type": "http.response.body", "body": chunk, "more_body": True}
                )

    async def client_gone() -> None:
        while (await receive())["type"] != "http.disconnect":
            pass

    copying = asyncio.ensure_future(copy())
    watching = asyncio.ensure_future(client_gone())
    try:
        await asyncio.wait({copying, watching}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (copying, watching):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        aclose = getattr(body, "aclose", None)
        if aclose is not None:
            with contextlib.suppress(Exception):
                await aclose()
    if copying.done() and not copying.cancelled() and copying.exception() is None:
        with contextlib.suppress(OSError):
            await send({"type": "http.response.body", "body": b"", "more_body": False})
