"""The log follows of one socket (apps.live.logfollow), with a feed of our own,
and how a streamed log is cut into whole lines (apps.scheduling.live_logs)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from apps.live import logfollow
from apps.live.logfollow import MAX_FOLLOWS, LogAsk, LogFollows
from apps.scheduling.live_logs import parts, whole_lines


class Feed:
    """A feed that prints one line per request, then waits until stopped."""

    def __init__(self) -> None:
        self.closed: list[int] = []

    async def __call__(self, ask: LogAsk) -> AsyncIterator[dict[str, Any]]:
        try:
            yield logfollow.log_message(ask.request, f"line of {ask.request}\n")
            await asyncio.Event().wait()
        finally:
            self.closed.append(ask.request)


@pytest.fixture
def feed(monkeypatch) -> Feed:
    feed = Feed()
    monkeypatch.setitem(logfollow._feeds, "feed", feed)
    return feed


async def _follows() -> tuple[LogFollows, list[dict[str, Any]]]:
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    return LogFollows(send, user=None, token_id=None), sent


async def test_follows_are_bounded_replaced_and_stopped(feed):
    follows, sent = await _follows()
    for request in range(1, MAX_FOLLOWS + 2):
        await follows.handle({"type": "logs.follow", "request": request})
    await asyncio.sleep(0.01)
    assert sorted(follows.tasks) == list(range(1, MAX_FOLLOWS + 1))
    refused = [m for m in sent if m["type"] == "log.error"]
    assert [(m["request"], m["code"]) for m in refused] == [
        (MAX_FOLLOWS + 1, "too_many_follows")
    ]
    # the same request again: the first follow is stopped, a new one starts
    await follows.handle({"type": "logs.follow", "request": 1})
    await asyncio.sleep(0.01)
    assert feed.closed == [1]
    assert len([m for m in sent if m.get("data") == "line of 1\n"]) == 2
    await follows.handle({"type": "logs.stop", "request": 2})
    assert feed.closed == [1, 2]
    await follows.stop_all()
    assert sorted(feed.closed) == [1, 1, 2, 3, 4]
    assert follows.tasks == {}


@pytest.mark.parametrize(
    "ask",
    [
        {"type": "logs.follow"},
        {"type": "logs.follow", "request": "7"},
        {"type": "logs.follow", "request": True},
        {"type": "logs.stop", "request": -1},
    ],
)
async def test_an_ask_without_a_request_id_is_answered(feed, ask):
    follows, sent = await _follows()
    await follows.handle(ask)
    assert sent == [
        {
            "type": "log.error",
            "request": None,
            "code": "invalid",
            "message": "request: a request id is required",
        }
    ]


async def test_a_feed_that_fails_says_so_naming_the_request(monkeypatch):
    async def broken(ask: LogAsk) -> AsyncIterator[dict[str, Any]]:
        raise RuntimeError("boom")
        yield {}

    monkeypatch.setitem(logfollow._feeds, "feed", broken)
    follows, sent = await _follows()
    await follows.handle({"type": "logs.follow", "request": 9})
    await asyncio.sleep(0.01)
    assert [(m["type"], m["request"]) for m in sent] == [("log.error", 9)]
    assert "request 9" in sent[0]["message"]
    assert follows.tasks == {}


async def _chunks(*chunks: bytes) -> AsyncIterator[bytes]:
    for chunk in chunks:
        yield chunk


async def test_a_stream_is_sent_in_whole_lines():
    euro = "€".encode()
    got = [
        text
        async for text in whole_lines(
            _chunks(b"one\ntw", b"o\n", euro[:1], euro[1:] + b"\nthr", b"ee")
        )
    ]
    assert got == ["one\n", "two\n", "€\n", "three"]


def test_a_long_text_is_cut_after_newlines():
    text = "".join(f"line {i}\n" for i in range(100))
    pieces = list(parts(text, size=50))
    assert "".join(pieces) == text
    assert all(len(p) <= 50 and p.endswith("\n") for p in pieces)
    assert list(parts("x" * 120, size=50)) == ["x" * 50, "x" * 50, "x" * 20]


async def test_a_sockets_messages_come_in_its_language(monkeypatch):
    """A socket opened with Accept-Language: zh-CN hears Chinese, from this
    module and from a feed's sync code (a domain error's message)."""
    from asgiref.sync import sync_to_async
    from django.utils.translation import gettext

    async def feed(ask: LogAsk) -> AsyncIterator[dict[str, Any]]:
        said = await sync_to_async(gettext)("Nothing here.")
        yield logfollow.log_error_message(ask.request, "not_found", said)

    monkeypatch.setitem(logfollow._feeds, "feed", feed)
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    follows = LogFollows(send, user=None, token_id=None, language="zh-hans")
    await follows.handle({"type": "logs.follow"})
    await follows.handle({"type": "logs.follow", "request": 4})
    await asyncio.sleep(0.05)
    assert [m["message"] for m in sent] == [
        "request：必须提供申请 id",
        "此处没有内容。",
    ]
