"""Django's HTTP handler under uvicorn, with one thread hop per request.

Every view of the portal is synchronous (DRF), and so is every middleware's
work; what must outlive the request (a followed log, a long poll) is sent by
ASGI middleware after Django's part ended (``apps.common.detached``). Django's
own ``ASGIHandler`` loads the middleware chain in async mode, where each
``MiddlewareMixin`` hook (session, locale, CSRF, auth, messages...) runs in a
thread through ``sync_to_async``: about fifteen hops between the event loop
and a thread per request, which cost more CPU than most views (issue 38). This
handler loads the chain as the WSGI handler does and runs all of it, view
included, in one hop; the request_started and request_finished signals keep
theirs.
"""

from __future__ import annotations

from typing import Any

import django
from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIHandler
from django.core.handlers.base import BaseHandler
from django.http import HttpRequest


class OneHopASGIHandler(ASGIHandler):
    """``ASGIHandler`` whose request, middleware and view run in one thread."""

    def __init__(self) -> None:
        BaseHandler.__init__(self)
        self.load_middleware(is_async=False)

    async def get_response_async(self, request: HttpRequest) -> Any:
        # The request's own thread (ASGIHandler opens a ThreadSensitiveContext
        # per request), as every sync_to_async of the stock handler used.
        return await sync_to_async(self.get_response, thread_sensitive=True)(request)


def asgi_application() -> OneHopASGIHandler:
    """``django.core.asgi.get_asgi_application`` with the handler above."""
    django.setup(set_prefix=False)
    return OneHopASGIHandler()
