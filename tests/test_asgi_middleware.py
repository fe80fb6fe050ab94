"""Under ASGI (uvicorn, production) a request leaves the event loop once,
for its sync view: every middleware is async-capable (issue 38: one sync-only
middleware made Django hop to a thread and back twice more per request)."""

from __future__ import annotations

import pytest
from asgiref.sync import iscoroutinefunction
from django.conf import settings
from django.core.handlers.asgi import ASGIHandler
from django.test import AsyncClient
from django.utils.module_loading import import_string


@pytest.mark.parametrize("path", settings.MIDDLEWARE)
def test_every_middleware_is_async_capable(path):
    middleware = import_string(path)
    assert getattr(middleware, "async_capable", False), (
        f"{path} is sync-only: under ASGI every request hops to a thread for it "
        "and back to the loop for the middlewares inside it"
    )


def test_the_asgi_chain_reaches_the_view_without_leaving_the_loop():
    handler = ASGIHandler()
    chain = handler._middleware_chain
    assert iscoroutinefunction(chain)
    # Each middleware keeps the next one's coroutine: no async_to_sync between.
    seen = 0
    inner = chain
    while True:
        instance = getattr(inner, "__wrapped__", None) or _middleware_of(inner)
        if instance is None:
            break
        nxt = getattr(instance, "get_response", None)
        if nxt is None:
            break
        assert iscoroutinefunction(nxt), f"{type(instance).__name__} wraps a sync call"
        seen += 1
        inner = nxt
    assert seen == len(settings.MIDDLEWARE)


def _middleware_of(handler):
    """The middleware instance a ``convert_exception_to_response`` closure holds."""
    closure = getattr(handler, "__closure__", None) or ()
    for cell in closure:
        value = cell.cell_contents
        if hasattr(value, "get_response"):
            return value
    return None


@pytest.mark.django_db
async def test_the_api_and_a_static_file_answer_through_asgi():
    client = AsyncClient()
    answer = await client.get("/healthz")
    assert answer.status_code == 200
    static = await client.get("/static/rest_framework/css/bootstrap.min.css")
    assert static.status_code == 200
    assert b"bootstrap" in b"".join(static.streaming_content)
