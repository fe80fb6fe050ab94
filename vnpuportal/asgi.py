"""ASGI entry point: Django for HTTP, Channels for the /ws/ WebSockets."""

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "vnpuportal.settings.base")
# Django must be set up before anything imports models (consumers do): the
# handler sets it up. One thread hop per request (apps.common.asgi_handler).
from apps.common.asgi_handler import asgi_application

django_asgi_app = asgi_application()

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from apps.accounts.ws import PortalAuthStack, StrictOriginValidator  # noqa: E402
from apps.common.body_limit import BodySizeLimit  # noqa: E402
from apps.common.db_unavailable import WebSocketDatabaseGuard  # noqa: E402
from apps.common.detached import DetachedBodies  # noqa: E402
from vnpuportal.routing import websocket_urlpatterns  # noqa: E402

application = ProtocolTypeRouter(
    {
        # REQUEST_BODY_MAX_BYTES: 413 before a byte past it is read (Django
        # spools any body to disk before its own limit is checked).
        # A followed log or a long poll is sent after Django's request (and
        # its thread) ended (apps.common.detached).
        "http": DetachedBodies(BodySizeLimit(django_asgi_app)),
        # Scheme, host and port of the Origin (WS_ALLOWED_ORIGINS, else same-origin).
        "websocket": StrictOriginValidator(
            # PostgreSQL unreachable: close with 1013 (try again later).
            WebSocketDatabaseGuard(PortalAuthStack(URLRouter(websocket_urlpatterns)))
        ),
    }
)
