"""Django's HTTP handler under uvicorn, with one thread hop per request.

Django's own ``ASGIHandler`` loads the middleware chain in async mode, where
each ``MiddlewareMixin`` hook (session, locale, CSRF, auth, messages...) runs
in a thread through ``sync_to_async``: about fifteen hops between the event
loop and a thread per request, which cost more CPU than most views (issue 38).
Nearly every view of the portal is synchronous (DRF), so this handler loads
the chain as the WSGI handler does and runs all of it, view included, in the
request's thread in one hop; the request_started and request_finished signals
keep theirs, in that same thread, so database connections open and close
where they are used.

The async views (a long poll and a followed log, ``apps.scheduling.api.
streaming``) wait on the event loop without a thread: a crowd of pipelines
opening their follows at once queues there. They go through Django's own
handler, whose async chain does not hold a thread while they wait.
"""

from __future__ import annotations

from typing import Any

import django
from asgiref.sync import iscoroutinefunction, sync_to_async
from django.core.handlers.asgi import ASGIHandler
from django.core.handlers.base import BaseHandler
from django.http import HttpRequest
from django.urls import Resolver404, resolve


class OneHopASGIHandler(ASGIHandler):
    """``ASGIHandler`` whose request, middleware and view run in one thread."""

    def __init__(self) -> None:
        # ASGIHandler.__init__ only loads the chain in async mode (Django
        # 5.2); tests/test_asgi_handler.py fails if it ever does more.
        BaseHandler.__init__(self)
        self.load_middleware(is_async=False)
        self.async_views = ASGIHandler()

    async def get_response_async(self, request: HttpRequest) -> Any:
        if _is_async_view(request.path_info):
            return await self.async_views.get_response_async(request)
        # The request's own thread (ASGIHandler opens a ThreadSensitiveContext
        # per request), as every sync_to_async of the stock handler used.
        return await sync_to_async(self.get_response, thread_sensitive=True)(request)


def _is_async_view(path: str) -> bool:
    try:
        return iscoroutinefunction(resolve(path).func)
    except Resolver404:
        return False


def asgi_application() -> OneHopASGIHandler:
    """``django.core.asgi.get_asgi_application`` with the handler above."""
    django.setup(set_prefix=False)
    return OneHopASGIHandler()
