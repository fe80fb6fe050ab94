"""WebSocket security: origin, authentication, and re-checking it while a socket is open.

Browsers send the session cookie; other clients may send
``Authorization: Bearer <token>`` on the upgrade request.

- ``StrictOriginValidator``: the ``Origin`` must be the portal's own origin
  (scheme, host and port of the upgrade request, the host in
  ``ALLOWED_HOSTS``) or one listed in ``WS_ALLOWED_ORIGINS``. Channels'
  ``AllowedHostsOriginValidator`` compared host names only, so any port or
  scheme of an allowed host (another app on ``localhost:5000``) passed.
- ``AuthRecheckMixin``: every ``WS_AUTH_RECHECK_SECONDS`` an open socket asks
  whether its token is still live (or its session still exists) and its user
  still active, and is closed with 4401 when not: authentication happens on
  the upgrade, and a revoked token must not keep receiving.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any
from urllib.parse import urlsplit

from channels.auth import AuthMiddlewareStack
from channels.db import database_sync_to_async
from channels.middleware import BaseMiddleware
from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.http.request import split_domain_port, validate_host

from apps.accounts.selectors import connection_still_authenticated, token_group
from apps.accounts.services import token_authenticate

_DEFAULT_PORTS = {"http": 80, "https": 443}
CLOSE_UNAUTHENTICATED = 4401


def normalised_origin(value: str) -> tuple[str, str, int] | None:
    """``scheme://host[:port]`` as (scheme, host, port), default ports filled; None if malformed."""
    try:
        parts = urlsplit(value.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        return None
    if parts.path not in ("", "/") or parts.query or parts.fragment or parts.username:
        return None
    return scheme, parts.hostname.lower(), port or _DEFAULT_PORTS[scheme]


def _header(scope: dict[str, Any], name: bytes) -> str | None:
    for key, value in scope.get("headers") or []:
        if key.lower() == name:
            return value.decode("latin-1")
    return None


def own_origin(scope: dict[str, Any]) -> tuple[str, str, int] | None:
    """The origin a page of this portal has, from the upgrade request itself.

    The scheme is the connection's (``wss`` is https), or the proxy's header
    when ``SECURE_PROXY_SSL_HEADER`` is configured; the host and port are the
    ``Host`` header's (``X-Forwarded-Host`` with ``USE_X_FORWARDED_HOST``),
    and the host must be in ``ALLOWED_HOSTS``.
    """
    secure = scope.get("scheme") in ("wss", "https")
    proxy = getattr(settings, "SECURE_PROXY_SSL_HEADER", None)
    if proxy:
        meta_name, expected = proxy
        header = meta_name.removeprefix("HTTP_").replace("_", "-").lower().encode()
        forwarded = _header(scope, header)
        if forwarded is not None:
            secure = forwarded.split(",")[0].strip() == expected
    host = None
    if getattr(settings, "USE_X_FORWARDED_HOST", False):
        host = _header(scope, b"x-forwarded-host")
    host = host or _header(scope, b"host")
    if not host:
        return None
    domain, _port = split_domain_port(host)
    if not domain or not validate_host(domain, settings.ALLOWED_HOSTS):
        return None
    return normalised_origin(f"{'https' if secure else 'http'}://{host}")


def origin_allowed(scope: dict[str, Any]) -> bool:
    """Whether the upgrade request's ``Origin`` is the portal's own or an allowed one."""
    raw = _header(scope, b"origin")
    origin = normalised_origin(raw) if raw else None
    if origin is None:
        return False  # no Origin, "null" or malformed: a script must say where it comes from
    allowed = {
        normalised_origin(o) for o in getattr(settings, "WS_ALLOWED_ORIGINS", [])
    }
    return origin in allowed or origin == own_origin(scope)


class StrictOriginValidator:
    """Refuses (403 on the upgrade) a WebSocket whose Origin is not allowed."""

    def __init__(self, application: Any) -> None:
        self.application = application

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        if scope["type"] == "websocket" and not origin_allowed(scope):
            denier = WebsocketDenier()
            return await denier(scope, receive, send)
        return await self.application(scope, receive, send)


@database_sync_to_async
def _token(plaintext: str) -> Any:
    return token_authenticate(plaintext)


class TokenAuthMiddleware(BaseMiddleware):
    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        value = (_header(scope, b"authorization") or "").split()
        if len(value) == 2 and value[0].lower() in ("bearer", "token"):
            token = await _token(value[1])
            if token is not None:
                scope["user"] = token.user
                # What the open socket re-checks (AuthRecheckMixin).
                scope["api_token_id"] = token.pk
        return await super().__call__(scope, receive, send)


def PortalAuthStack(inner: Any) -> Any:
    """Session auth first, then a token (which wins when present and valid)."""
    return AuthMiddlewareStack(TokenAuthMiddleware(inner))


@database_sync_to_async
def _still_authenticated(scope: dict[str, Any]) -> bool:
    session = scope.get("session")
    return connection_still_authenticated(
        user=scope.get("user"),
        token_id=scope.get("api_token_id"),
        session_key=getattr(session, "session_key", None),
    )


class AuthRecheckMixin:
    """For consumers: close the socket (4401) once its credentials stop being valid.

    Call ``start_auth_recheck()`` after ``accept()`` and ``stop_auth_recheck()``
    in ``disconnect()``. The check runs every ``WS_AUTH_RECHECK_SECONDS``, so a
    revoked token or a deactivated user is cut off within that time.
    """

    scope: dict[str, Any]
    _auth_recheck: asyncio.Task[None] | None = None
    _closed = False

    def start_auth_recheck(self) -> None:
        self._auth_recheck = asyncio.ensure_future(self._recheck_loop())

    async def listen_for_revocation(self) -> None:
        """Be told at once when the socket's token is revoked (``token_revoke``
        tells its group), rather than at the next re-check."""
        token_id = self.scope.get("api_token_id")
        if token_id is not None:
            layer = self.channel_layer  # type: ignore[attr-defined]
            await layer.group_add(token_group(token_id), self.channel_name)  # type: ignore[attr-defined]

    async def token_revoked(self, message: dict[str, Any]) -> None:
        """The token of this socket was revoked: close it now."""
        await self._auth_lost()

    async def _auth_lost(self) -> None:
        # Marked closed and out of the groups first: a delta already on its
        # way must not be sent on a closed socket (a RuntimeError in the log).
        self._closed = True
        leave = getattr(self, "leave", None)
        if leave is not None:
            await leave()
        token_id = self.scope.get("api_token_id")
        if token_id is not None:
            layer = self.channel_layer  # type: ignore[attr-defined]
            await layer.group_discard(token_group(token_id), self.channel_name)  # type: ignore[attr-defined]
        await self.close(code=CLOSE_UNAUTHENTICATED)  # type: ignore[attr-defined]

    async def stop_auth_recheck(self) -> None:
        task, self._auth_recheck = self._auth_recheck, None
        if task is not None and task is not asyncio.current_task():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _recheck_loop(self) -> None:
        interval = float(getattr(settings, "WS_AUTH_RECHECK_SECONDS", 30))
        while True:
            await asyncio.sleep(interval)
            if not await _still_authenticated(self.scope):
                self._auth_recheck = None
                await self._auth_lost()
                return
