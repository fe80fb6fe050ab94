"""A request's job log over a live socket: ``logs.follow`` and ``logs.stop``.

The client asks::

    {"type": "logs.follow", "request": 12, "since_time"?: "...", "container"?: "..."}
    {"type": "logs.stop", "request": 12}

and hears, per request followed::

    {"type": "log", "request": 12, "data": "<whole lines, each with its timestamp>"}
    {"type": "log.end", "request": 12, "source": "live"|"kept", "truncated": bool}
    {"type": "log.error", "request": 12, "code": "...", "message": "..."}

Each follow runs in an asyncio task of the socket (at most
:data:`MAX_FOLLOWS` at once; a second follow of the same request replaces
the first), cancelled by ``logs.stop`` or when the socket closes.

What a request's log is, and who may read it, is scheduling's (a floor
above live): the app that owns requests registers a *feed* with
:func:`log_feed_register`, an async generator that yields the messages
above for one follow. This module only runs feeds and parses the asks.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from django.utils import translation
from django.utils.translation import gettext as _

log = logging.getLogger(__name__)

#: Logs one socket may follow at once.
MAX_FOLLOWS = 4
#: Characters of text per ``log`` message at most (a kept log is sent in parts).
DATA_CHARS = 64 * 1024

FOLLOW = "logs.follow"
STOP = "logs.stop"


@dataclass(frozen=True)
class LogAsk:
    """One ``logs.follow``, with who asks (the socket's user and token)."""

    request: int
    user: Any
    token_id: int | None
    since_time: str = ""
    container: str = ""


LogFeed = Callable[[LogAsk], AsyncIterator[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

_feeds: dict[str, LogFeed] = {}


def log_feed_register(feed: LogFeed) -> None:
    """Say how a request's log is followed (scheduling, at start-up)."""
    _feeds["feed"] = feed


def log_message(request: int, data: str) -> dict[str, Any]:
    return {"type": "log", "request": request, "data": data}


def log_end_message(
    request: int, source: str, truncated: bool = False
) -> dict[str, Any]:
    return {
        "type": "log.end",
        "request": request,
        "source": source,
        "truncated": truncated,
    }


def log_error_message(request: int | None, code: str, message: str) -> dict[str, Any]:
    return {"type": "log.error", "request": request, "code": code, "message": message}


def is_log_message(content: Any) -> bool:
    """Whether a client's message is one of this module's asks."""
    return isinstance(content, dict) and content.get("type") in (FOLLOW, STOP)


def _text(content: dict[str, Any], key: str) -> str | None:
    value = content.get(key)
    if value is None:
        return ""
    return value if isinstance(value, str) and len(value) <= 100 else None


class LogFollows:
    """The log follows of one socket: started, replaced and stopped here."""

    def __init__(
        self, send: Send, user: Any, token_id: int | None, language: str = "en"
    ) -> None:
        self.send = send
        self.user = user
        self.token_id = token_id
        # The socket's Accept-Language: the language of its log.error messages.
        self.language = language
        self.tasks: dict[int, asyncio.Task[None]] = {}

    async def handle(self, content: dict[str, Any]) -> None:
        """Act on a ``logs.follow`` or ``logs.stop``; a bad one is answered."""
        with translation.override(self.language):
            await self._handle(content)

    async def _handle(self, content: dict[str, Any]) -> None:
        request = content.get("request")
        if not isinstance(request, int) or isinstance(request, bool) or request < 1:
            await self.send(
                log_error_message(
                    None, "invalid", _("request: a request id is required")
                )
            )
            return
        await self.stop(request)
        if content["type"] == STOP:
            return
        since_time, container = (
            _text(content, "since_time"),
            _text(content, "container"),
        )
        if since_time is None or container is None:
            await self.send(
                log_error_message(
                    request, "invalid", _("since_time and container are strings")
                )
            )
            return
        if len(self.tasks) >= MAX_FOLLOWS:
            await self.send(
                log_error_message(
                    request,
                    "too_many_follows",
                    _(
                        "request %(request)s: this socket follows %(count)d logs "
                        "already; stop one first (logs.stop)"
                    )
                    % {"request": request, "count": MAX_FOLLOWS},
                )
            )
            return
        ask = LogAsk(request, self.user, self.token_id, since_time, container)
        # The task copies the context, and with it the language active here.
        self.tasks[request] = asyncio.create_task(self._run(ask))

    async def _run(self, ask: LogAsk) -> None:
        feed = _feeds.get("feed")
        try:
            if feed is None:
                await self.send(
                    log_error_message(
                        ask.request, "no_log", _("this portal has no logs")
                    )
                )
                return
            async with contextlib.aclosing(feed(ask)) as messages:
                async for message in messages:
                    await self.send(message)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.warning(
                "following the log of request %s failed", ask.request, exc_info=True
            )
            with contextlib.suppress(Exception):
                await self.send(
                    log_error_message(
                        ask.request,
                        "error",
                        _("request %(request)s: the log could not be followed")
                        % {"request": ask.request},
                    )
                )
        finally:
            if self.tasks.get(ask.request) is asyncio.current_task():
                del self.tasks[ask.request]

    async def stop(self, request: int) -> None:
        """Stop following ``request`` (nothing to do when it is not followed)."""
        task = self.tasks.pop(request, None)
        if task is not None:
            task.cancel()
            await asyncio.wait([task])  # its sends are over before the next

    async def stop_all(self) -> None:
        for request in list(self.tasks):
            await self.stop(request)
