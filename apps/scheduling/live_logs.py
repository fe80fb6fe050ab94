"""A request's job log followed over the live socket (``logs.follow``).

The feed ``apps.live.logfollow`` runs for each follow; live stands on a lower
floor, so ``SchedulingConfig.ready`` registers :func:`follow_log` with it. It reads what ``GET /api/requests/<id>/logs/?follow=true&
timestamps=true`` reads, with the same scope: any role reads, a token limited
to queues reads only their requests' logs, and anything else is a
``log.error`` naming the request. The database is read once, in a thread,
before the stream opens (:func:`_plan`), so a follower holds no connection:

- while the pod exists, its log is streamed from the API server (aiohttp) in
  whole lines until the container ends (``log.end`` source ``live``); a pod
  gone meanwhile falls back to the kept copy;
- once the log was kept (the request ended), the kept tail is sent once, in
  parts (``log.end`` source ``kept``, ``truncated`` when it was cut).
"""

from __future__ import annotations

import codecs
from collections.abc import AsyncIterator, Iterator
from contextlib import aclosing
from typing import Any

from channels.db import database_sync_to_async
from django.utils.translation import gettext as _

from apps.accounts.models import ApiToken
from apps.accounts.selectors import user_role
from apps.common.exceptions import (
    DomainError,
    NotFound,
    PermissionDenied,
    ValidationFailed,
)
from apps.inventory.kube import KubeError, cluster_gateway
from apps.inventory.podlogs import Endpoint, LogQuery, endpoint_for, open_stream
from apps.live.logfollow import (
    DATA_CHARS,
    LogAsk,
    log_end_message,
    log_error_message,
    log_message,
)
from apps.scheduling.access import token_scope_check
from apps.scheduling.api.job import LogQuerySerializer
from apps.scheduling.logs import KeptLog, kept_log, log_refusal, log_source
from apps.scheduling.models import Request


def _query(ask: LogAsk) -> LogQuery:
    """What the follow reads: with timestamps, from ``since_time`` when given."""
    data: dict[str, Any] = {"timestamps": True, "follow": True}
    if ask.since_time:
        data["since_time"] = ask.since_time
    if ask.container:
        data["container"] = ask.container
    params = LogQuerySerializer(data=data)
    if not params.is_valid():
        field, messages = next(iter(params.errors.items()))
        raise ValidationFailed(
            f"{field}: {messages[0]}",
            detail={k: list(v) for k, v in params.errors.items()},
        )
    return params.query()


def _readable(ask: LogAsk) -> Request:
    """The request, if the socket's user (and token) may read it.

    Raises:
        NotFound: No such request.
        PermissionDenied: No role, or a token limited to other queues (or gone).
    """
    if user_role(ask.user) is None:
        raise PermissionDenied(_("your role does not allow reading logs"))
    request = Request.objects.select_related("queue", "cluster").filter(pk=ask.request)
    found = request.first()
    if found is None:
        raise NotFound(_("Nothing here."))
    token = None
    if ask.token_id is not None:
        token = ApiToken.objects.filter(
            pk=ask.token_id, revoked_at__isnull=True
        ).first()
        if token is None:
            raise PermissionDenied(_("this socket's token was revoked"))
    token_scope_check(token, found.queue, found.queue.name)
    return found


def _plan(ask: LogAsk) -> Endpoint | KeptLog:
    """Where the log is read: the pod's log endpoint, or the kept copy itself.

    Raises:
        DomainError: Not readable (see :func:`_readable`), no log (``no_log``),
            bad ``since_time``/``container``, or the cluster unavailable.
    """
    query = _query(ask)
    request = _readable(ask)
    source = log_source(request)
    if source is None:
        return kept_log(request, query)
    with cluster_gateway(request.cluster) as gateway:
        return endpoint_for(gateway, source.namespace, source.pod, query)


def _kept(ask: LogAsk) -> KeptLog:
    """The kept copy (the pod went between the plan and the stream)."""
    return kept_log(_readable(ask), _query(ask))


async def whole_lines(chunks: AsyncIterator[bytes]) -> AsyncIterator[str]:
    """The text of ``chunks`` in whole lines (a line cut between chunks waits
    for its end; the last one, unended, comes at the end)."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    held = ""
    async for chunk in chunks:
        held += decoder.decode(chunk)
        cut = held.rfind("\n") + 1
        if cut:
            for part in parts(held[:cut]):
                yield part
            held = held[cut:]
    held += decoder.decode(b"", final=True)
    if held:
        yield held


def parts(text: str, size: int = DATA_CHARS) -> Iterator[str]:
    """``text`` in pieces of about ``size`` characters, cut after a newline
    where there is one."""
    while text:
        if len(text) <= size:
            yield text
            return
        cut = text.rfind("\n", 0, size) + 1 or size
        yield text[:cut]
        text = text[cut:]


def _named(request: int, message: str) -> str:
    return (
        message if f"request {request}" in message else f"request {request}: {message}"
    )


async def follow_log(ask: LogAsk) -> AsyncIterator[dict[str, Any]]:
    """The ``log``, ``log.end`` or ``log.error`` messages of one follow."""
    try:
        plan = await database_sync_to_async(_plan)(ask)
        if isinstance(plan, Endpoint):
            try:
                stream = await open_stream(plan)
            except KubeError as exc:
                if exc.status != 404:
                    raise log_refusal(exc, plan.cluster) from exc
                plan = await database_sync_to_async(_kept)(ask)
            else:
                try:
                    async with aclosing(whole_lines(stream.chunks())) as lines:
                        async for data in lines:
                            yield log_message(ask.request, data)
                finally:  # stopped while a message was sent: close it here
                    await stream.close()
                yield log_end_message(ask.request, "live")
                return
        for data in parts(plan.text):
            yield log_message(ask.request, data)
        yield log_end_message(ask.request, "kept", plan.truncated)
    except DomainError as exc:
        yield log_error_message(
            ask.request, str(exc.code), _named(ask.request, exc.message)
        )
