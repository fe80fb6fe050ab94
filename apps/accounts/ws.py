"""WebSocket authentication: the session (browsers) or an API token (scripts).

Browsers send the session cookie; other clients may send
``Authorization: Bearer <token>`` on the upgrade request.
"""

from __future__ import annotations

from typing import Any

from channels.auth import AuthMiddlewareStack
from channels.db import database_sync_to_async
from channels.middleware import BaseMiddleware


@database_sync_to_async
def _token_user(plaintext: str) -> Any:
    from apps.accounts.services import token_authenticate

    token = token_authenticate(plaintext)
    return token.user if token else None


class TokenAuthMiddleware(BaseMiddleware):
    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        headers = dict(scope.get("headers") or [])
        value = headers.get(b"authorization", b"").decode(errors="replace").split()
        if len(value) == 2 and value[0].lower() in ("bearer", "token"):
            user = await _token_user(value[1])
            if user is not None:
                scope["user"] = user
        return await super().__call__(scope, receive, send)


def PortalAuthStack(inner: Any) -> Any:
    """Session auth first, then a token (which wins when present and valid)."""
    return AuthMiddlewareStack(TokenAuthMiddleware(inner))
