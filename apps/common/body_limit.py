"""A request-body limit in front of everything HTTP: 413 before the body is read.

Django's ASGI handler reads the whole body into a spooled temporary file before
any middleware or view runs, and ``DATA_UPLOAD_MAX_MEMORY_SIZE`` is checked
only later, when a view reads ``request.body`` or ``POST``: anonymous 512 MiB
uploads to any path (``/healthz`` too) filled the web pod's temp folder.

:class:`BodySizeLimit` wraps the ASGI application. A ``Content-Length`` over
``REQUEST_BODY_MAX_BYTES`` is answered 413 before one byte is read; a body
without one (chunked) is counted as it streams, and the chunk that crosses the
limit is never handed on: the application stops, and the answer is the same
413. The answer is the portal's error body (``code: too_large`` with
``detail.limit_bytes``), and it closes the connection, since the rest of the
body is not read.

The default limit is a little above Django's 2.5 MB, so that Django's own 413
(the same body, with its limit) still answers the bodies between the two; a
proxy in front should refuse at the same size (docs/security.md).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from django.conf import settings
from django.utils import translation
from django.utils.translation import gettext as _

from apps.common.exceptions import ERRORS, ErrorCode
from apps.common.http_errors import too_large_body
from apps.common.languages import language_from_headers

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class _BodyTooLarge(Exception):
    """Raised into the application by ``receive`` when the body crosses the limit."""


class BodySizeLimit:
    """ASGI middleware: HTTP bodies over ``max_bytes`` get 413, unread.

    Args:
        app: The ASGI application to protect.
        max_bytes: The limit; None reads ``settings.REQUEST_BODY_MAX_BYTES``
            at each request (so the tests' ``settings`` fixture applies).
    """

    def __init__(self, app: ASGIApp, *, max_bytes: int | None = None) -> None:
        self.app = app
        self.max_bytes = max_bytes

    def _limit(self) -> int:
        if self.max_bytes is not None:
            return self.max_bytes
        return int(settings.REQUEST_BODY_MAX_BYTES)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        limit = self._limit()
        declared = _content_length(scope)
        # Before Django: the answer's language is picked here (docs/languages.md).
        language = language_from_headers(scope.get("headers"))
        if declared == "invalid":
            with translation.override(language):
                said = _("the Content-Length header is not a whole number")
            await _answer(
                send,
                ErrorCode.BAD_REQUEST,
                {"code": ErrorCode.BAD_REQUEST, "message": said},
                language,
            )
            return
        if isinstance(declared, int) and declared > limit:
            await _answer(
                send, ErrorCode.TOO_LARGE, _too_large(limit, language), language
            )
            return

        received = 0
        started = False

        async def limited_receive() -> Message:
            nonlocal received
            message = await receive()
            if message.get("type") == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    # Not handed on: the application never holds more than
                    # ``limit`` bytes, and stops here.
                    raise _BodyTooLarge
            return message

        async def watched_send(message: Message) -> None:
            nonlocal started
            if message.get("type") == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, limited_receive, watched_send)
        except _BodyTooLarge:
            if not started:
                await _answer(
                    send, ErrorCode.TOO_LARGE, _too_large(limit, language), language
                )


def _content_length(scope: Scope) -> int | str | None:
    """The declared body size: an int, None when absent, "invalid" when unreadable."""
    for name, value in scope.get("headers") or ():
        if name.lower() == b"content-length":
            text = value.decode("latin-1").strip()
            if not text.isdigit() or not text.isascii():
                return "invalid"
            return int(text)
    return None


def _too_large(limit: int, language: str) -> dict[str, object]:
    with translation.override(language):
        return too_large_body(limit)


async def _answer(
    send: Send, code: ErrorCode, body: dict[str, object], language: str
) -> None:
    payload = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": ERRORS[code][0],
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
                (b"content-language", language.encode()),
                # The rest of the body is not read: the connection cannot be reused.
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})
