"""While PostgreSQL is unreachable the portal answers 503, not 500.

A database outage is not a bug of the request: every HTTP request whose view
fails because the database cannot be reached gets ``503 {"code":
"database_unavailable", ...}`` with ``Retry-After``, and a WebSocket is closed
with 1013 ("try again later"), which the UI treats as any drop (it reconnects
with backoff). Liveness (``/healthz``) never touches the database; readiness
(``/readyz``) fails while it is away (``apps.common.probes``).

Only connection failures count: a refused or dropped connection, a server
shutting down or starting up, too many connections. A deadlock, a statement
timeout or a constraint error is the request's own problem and stays a 500.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext as _

from apps.common.exceptions import ErrorCode
from apps.common.http_errors import service_unavailable

logger = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 5
# The WebSocket close code for "try again later" (RFC 6455's registry).
WS_TRY_AGAIN_LATER = 1013
# PostgreSQL's SQLSTATEs that mean "no server to talk to": class 08 (connection
# exception) by prefix, admin/crash shutdown, starting up, too many connections.
_UNAVAILABLE_SQLSTATES = {"57P01", "57P02", "57P03", "53300"}


def database_unavailable(exc: BaseException) -> bool:
    """Whether ``exc`` (or what it wraps) says the database cannot be reached."""
    cause = exc.__cause__
    if isinstance(exc, InterfaceError):
        # "connection already closed" (psycopg's, or Django's own); SQLite's
        # InterfaceError is a bad parameter, a bug.
        return cause is None or hasattr(cause, "sqlstate")
    if not isinstance(exc, OperationalError):
        return False
    if not hasattr(cause, "sqlstate"):
        # Not PostgreSQL (psycopg errors carry a SQLSTATE): SQLite's
        # OperationalError includes "no such table", a bug, not an outage.
        return False
    sqlstate = getattr(cause, "sqlstate", None)
    # psycopg reports a failed or lost connection without a SQLSTATE.
    return (
        sqlstate is None
        or sqlstate.startswith("08")
        or sqlstate in _UNAVAILABLE_SQLSTATES
    )


class DatabaseUnavailableMiddleware:
    """Turns a view's database-unreachable error into the 503 answer.

    ``process_exception`` sees what the view raised, including the
    ``ATOMIC_REQUESTS`` transaction that could not begin and DRF's
    authentication (both fail before any of the portal's code runs), so one
    middleware covers every endpoint.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(
        self, request: HttpRequest, exception: Exception
    ) -> HttpResponse | None:
        if not database_unavailable(exception):
            return None
        # django.request logs the 503 itself; no traceback for an outage.
        return service_unavailable(
            request,
            code=ErrorCode.DATABASE_UNAVAILABLE,
            message=_("The database cannot be reached; try again shortly."),
            retry_after=RETRY_AFTER_SECONDS,
        )


class WebSocketDatabaseGuard:
    """ASGI middleware for WebSockets: a database outage closes the socket with 1013.

    Authentication (session or token) and the consumer's first snapshot both
    read the database; without this the server would drop the handshake with
    an error. Unaccepted sockets are accepted first, so the client gets the
    close code (a close before accept is a bare HTTP 403 to it).
    """

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        state = {"connect": False, "accepted": False, "closed": False}

        async def tracked_receive() -> dict[str, Any]:
            message = await receive()
            if message["type"] == "websocket.connect":
                state["connect"] = True
            return message

        async def tracked_send(message: dict[str, Any]) -> None:
            if message["type"] == "websocket.accept":
                state["accepted"] = True
            elif message["type"] == "websocket.close":
                state["closed"] = True
            await send(message)

        try:
            return await self.inner(scope, tracked_receive, tracked_send)
        except Exception as exc:
            if not database_unavailable(exc) or state["closed"]:
                raise
            logger.warning(
                "database unavailable: WebSocket %s closed with %s",
                scope.get("path"),
                WS_TRY_AGAIN_LATER,
            )
            if not state["connect"]:
                await receive()  # the websocket.connect the inner app never read
            if not state["accepted"]:
                await send({"type": "websocket.accept"})
            await send({"type": "websocket.close", "code": WS_TRY_AGAIN_LATER})
            return None
