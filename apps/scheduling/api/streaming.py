"""The async side of two request endpoints: a followed log and a long poll.

``/api/requests/<id>/`` and ``/api/requests/<id>/logs/`` are served here
first. Everything that needs the database runs in DRF's view, called once
in a thread (authentication, the token's queues, the query string, errors in
the portal's shape); when it hands back a :class:`~.deferred.Deferred`, the
rest happens on the event loop, where a waiting client costs a coroutine:

- a live log is opened on the cluster's API server (aiohttp) and streamed
  as it comes (``follow``: until the container ends); a pod already gone
  falls back to the log kept when the request ended;
- a long poll answers with the status line at once and with the request's
  JSON once it reached the state or the time is up (``apps.scheduling.waiting``).

The thread's database connection is closed before either starts, so a
thousand followers hold none, and at most :data:`CONCURRENT_VIEWS` DRF views
run at once, so a crowd opening its follows together queues instead of
opening a connection each. The body itself is sent after Django's request
has ended (``apps.common.detached``): Django keeps a thread per request until
its answer is sent, which for a followed log would be an idle thread per
pipeline (bench.logs measured 256 threads for 250 streams before).
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import AsyncIterator, Callable
from typing import Any

from asgiref.sync import sync_to_async
from django.db import connection, transaction
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.views.decorators.csrf import csrf_exempt

from apps.common.api import atomic_inside
from apps.common.detached import detach, placeholder
from apps.common.http_errors import domain_error
from apps.inventory.kube import KubeError
from apps.inventory.podlogs import open_stream
from apps.scheduling.api.deferred import LiveLogAnswer, WaitAnswer
from apps.scheduling.api.views import TEXT, RequestViewSet
from apps.scheduling.logs import log_refusal
from apps.scheduling.waiting import wait_for_state

_detail = RequestViewSet.as_view(
    {"get": "retrieve", "delete": "destroy"}, detail=True, basename="request"
)
# With the action's own settings (its renderers), as the router would pass them.
_logs = RequestViewSet.as_view(
    {"get": "logs"}, **RequestViewSet.logs.kwargs, detail=True, basename="request"
)


#: DRF views run at once by these endpoints (each holds a database connection
#: while it runs): pipelines that open their follows and long polls together
#: queue here instead of opening a connection each at the same moment (250
#: at once overran PostgreSQL's max_connections in bench.logs).
CONCURRENT_VIEWS = 8
_slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
    weakref.WeakKeyDictionary()
)


async def _run_view(
    view: Any, request: HttpRequest, pk: str, *, detached: bool = False
) -> HttpResponse:
    """DRF's view, at most :data:`CONCURRENT_VIEWS` at once: in the request's
    thread, or once the request has ended (``detached``) in a pool thread
    whose connection is closed after."""
    loop = asyncio.get_running_loop()
    slots = _slots.get(loop)
    if slots is None:
        slots = _slots[loop] = asyncio.Semaphore(CONCURRENT_VIEWS)
    async with slots:
        if detached:
            return await sync_to_async(_sync_view_closed, thread_sensitive=False)(
                view, request, pk
            )
        return await sync_to_async(_sync_view)(view, request, pk)


def _sync_view_closed(view: Any, request: HttpRequest, pk: str) -> HttpResponse:
    try:
        return _sync_view(view, request, pk)
    finally:
        if not connection.in_atomic_block:
            connection.close()


def _sync_view(view: Any, request: HttpRequest, pk: str) -> HttpResponse:
    """DRF's view as Django would run it (in one transaction, rendered)."""
    with transaction.atomic():
        response = view(request, pk=pk)
        if hasattr(response, "render"):
            response.render()
    if isinstance(response, LiveLogAnswer | WaitAnswer) and not (
        connection.in_atomic_block
    ):
        connection.close()  # the stream or the wait may last minutes
    return response


@csrf_exempt
@atomic_inside
@transaction.non_atomic_requests
async def request_detail(request: HttpRequest, pk: str) -> HttpResponse:
    """``/api/requests/<id>/``: DRF's detail view; a long poll waits here."""
    response = await _run_view(_detail, request, pk)
    if not isinstance(response, WaitAnswer):
        return response
    return _streamed(
        request,
        lambda detached: _answer_when_reached(request, pk, response, detached),
        content_type="application/json",
        headers={"Cache-Control": "no-store"},
    )


async def _answer_when_reached(
    request: HttpRequest, pk: str, wait: WaitAnswer, detached: bool
) -> AsyncIterator[bytes]:
    await wait_for_state(wait.request_id, wait.states, wait.timeout)
    request.vnpu_waited = True  # type: ignore[attr-defined]
    answer = await _run_view(_detail, request, pk, detached=detached)
    yield answer.content


def _streamed(
    request: HttpRequest,
    body: Callable[[bool], AsyncIterator[bytes]],
    **answer: Any,
) -> StreamingHttpResponse:
    """The answer whose body is ``body(detached)``: sent after the request
    ended where the ASGI layer can (``apps.common.detached``), else by Django."""
    detached = body(True)
    if detach(request, detached):
        return StreamingHttpResponse(placeholder(), **answer)
    return StreamingHttpResponse(body(False), **answer)


@csrf_exempt
@atomic_inside
@transaction.non_atomic_requests
async def request_logs(request: HttpRequest, pk: str) -> HttpResponse:
    """``/api/requests/<id>/logs/``: the kept log from DRF's view, a live one streamed."""
    response = await _run_view(_logs, request, pk)
    if not isinstance(response, LiveLogAnswer):
        return response
    endpoint = response.endpoint
    try:
        stream = await open_stream(endpoint)
    except KubeError as exc:
        if exc.status == 404:  # the pod went since: the log kept for it, if any
            request.vnpu_pod_gone = True  # type: ignore[attr-defined]
            return await _run_view(_logs, request, pk)
        return domain_error(log_refusal(exc, endpoint.cluster))
    return _streamed(
        request,
        lambda detached: stream.chunks(),
        content_type=TEXT,
        headers={
            "X-Log-Source": "live",
            "Cache-Control": "no-store",
            # a proxy in front (nginx) must pass each line on as it comes
            "X-Accel-Buffering": "no",
        },
    )
