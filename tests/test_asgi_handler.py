"""The portal's ASGI handler runs a request's middleware and view in one
thread hop (apps.common.asgi_handler; issue 38: Django's stock handler hopped
between the event loop and a thread about fifteen times per request)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from asgiref.sync import SyncToAsync
from django.core.handlers.asgi import ASGIHandler

from apps.common.asgi_handler import OneHopASGIHandler


async def _ask(handler: Any, path: str) -> tuple[int, bytes]:
    """One GET through ``handler`` as uvicorn sends it: (status, body)."""
    status, _headers, body = await _answer(handler, path)
    return status, body


async def _answer(handler: Any, path: str) -> tuple[int, dict[bytes, bytes], bytes]:
    """One GET through ``handler``: (status, headers, body)."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "headers": [(b"host", b"testserver")],
        "client": ("127.0.0.1", 5000),
        "server": ("testserver", 80),
    }
    sent: list[dict[str, Any]] = []
    messages = [{"type": "http.request", "body": b"", "more_body": False}]

    async def receive() -> dict[str, Any]:
        if messages:
            return messages.pop(0)
        # After the body, uvicorn's receive waits until the client goes.
        await asyncio.sleep(3600)
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await handler(scope, receive, send)
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(
        m.get("body", b"") for m in sent if m["type"] == "http.response.body"
    )
    return start["status"], dict(start["headers"]), body


def _counting_hops(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The functions every ``sync_to_async`` call runs from now on."""
    hops: list[str] = []
    original = SyncToAsync.__call__

    async def counted(self: SyncToAsync, *args: Any, **kwargs: Any) -> Any:
        hops.append(getattr(self.func, "__qualname__", repr(self.func)))
        return await original(self, *args, **kwargs)

    monkeypatch.setattr(SyncToAsync, "__call__", counted)
    return hops


@pytest.mark.django_db(transaction=True)
async def test_a_request_leaves_the_event_loop_once_for_its_middleware_and_view(
    monkeypatch,
):
    hops = _counting_hops(monkeypatch)
    status, body = await _ask(OneHopASGIHandler(), "/api/me/")
    assert status == 401, body  # through DRF's authentication: the whole chain ran
    assert b"not_authenticated" in body
    # request_started's receivers, the request, the response's close.
    assert len(hops) <= 3, hops

    monkeypatch.undo()
    stock = _counting_hops(monkeypatch)
    assert await _ask(ASGIHandler(), "/api/me/") == (status, body)
    # The stock handler: a hop for each middleware hook and for the view.
    assert len(stock) > 2 * len(hops), (stock, hops)


@pytest.mark.django_db(transaction=True)
async def test_the_one_hop_handler_answers_as_the_stock_one():
    static = "/static/rest_framework/css/bootstrap.min.css"
    for path in ("/healthz", "/api/me/", "/api/no-such-thing/", static):
        ours = await _answer(OneHopASGIHandler(), path)
        stock = await _answer(ASGIHandler(), path)
        assert ours[0] == stock[0], path
        assert ours[2] == stock[2], path
        for header in (b"content-type", b"content-language", b"x-frame-options"):
            assert ours[1].get(header) == stock[1].get(header), (path, header)
    assert (await _ask(OneHopASGIHandler(), static))[0] == 200
    assert (await _ask(OneHopASGIHandler(), "/healthz"))[0] == 200


@pytest.mark.django_db(transaction=True)
async def test_the_async_views_wait_on_the_event_loop_through_djangos_async_chain(
    monkeypatch,
):
    """A long poll or a followed log holds no thread while it waits for its
    turn (apps.scheduling.api.streaming): Django's own handler serves them."""
    handler = OneHopASGIHandler()
    served: list[str] = []
    stock = handler.async_views.get_response_async

    async def spied(request: Any) -> Any:
        served.append(request.path)
        return await stock(request)

    monkeypatch.setattr(handler.async_views, "get_response_async", spied)
    status, body = await _ask(handler, "/api/requests/1/logs/")
    assert status == 401, body
    assert served == ["/api/requests/1/logs/"]
    await _ask(handler, "/api/me/")
    assert served == ["/api/requests/1/logs/"]


def test_the_handler_sets_what_djangos_own_sets_and_no_less():
    """OneHopASGIHandler skips ASGIHandler.__init__ (it loads the async
    chain); a Django that sets more there must be looked at."""
    ours = set(vars(OneHopASGIHandler())) - {"async_views"}
    assert ours == set(vars(ASGIHandler()))
