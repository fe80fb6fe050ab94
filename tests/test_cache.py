"""The Redis cache keeps one connection pool per process (apps/common/cache.py).

Django keeps a cache object per context, and under ASGI every request is a
context of its own: with Django's ``RedisCache`` each request opened a TCP
connection to Redis (issue 38's POST profile: 7 % of the time)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from asgiref.sync import sync_to_async
from django.core.cache import caches

from harness.services import PrivateRedis

REQUESTS = 20


@pytest.fixture(scope="module")
def redis_server() -> Iterator[PrivateRedis]:
    server = PrivateRedis(appendonly=False)
    yield server
    server.stop()


def _connections_received(server: PrivateRedis) -> int:
    with redis.Redis.from_url(server.url(0)) as admin:
        return int(admin.info("stats")["total_connections_received"])


def _requests_touching_the_cache(settings: Any, backend: str, url: str) -> list[Any]:
    """``REQUESTS`` contexts (as ASGI requests are), each reading the cache
    in its thread; the cache objects they used."""
    settings.CACHES = {"default": {"BACKEND": backend, "LOCATION": url}}
    used: list[Any] = []

    def read() -> None:
        cache = caches["default"]
        cache.get("throttle-key")
        used.append(cache)

    async def requests() -> None:
        for _ in range(REQUESTS):
            await asyncio.create_task(sync_to_async(read)())

    asyncio.run(requests())
    return used


@pytest.mark.parametrize(
    ("backend", "most"),
    [
        ("apps.common.cache.ProcessPooledRedisCache", 1),
        # Django's own, for the contrast: a connection per request
        ("django.core.cache.backends.redis.RedisCache", None),
    ],
)
def test_requests_share_the_process_connection_to_redis(
    settings, redis_server, backend, most
):
    url = redis_server.url(1)
    before = _connections_received(redis_server)
    used = _requests_touching_the_cache(settings, backend, url)
    opened = _connections_received(redis_server) - before - 1  # -1: the count's own
    assert len({id(cache) for cache in used}) == REQUESTS  # a cache per context
    if most is None:
        assert opened >= REQUESTS, opened
    else:
        assert opened <= most, opened


def test_a_redis_cache_url_gets_the_process_pooled_backend(monkeypatch):
    import importlib

    import vnpuportal.settings.base as base

    monkeypatch.setenv("CACHE_URL", "redis://127.0.0.1:6379/1")
    try:
        reloaded = importlib.reload(base)
        assert reloaded.CACHES["default"]["BACKEND"] == (
            "apps.common.cache.ProcessPooledRedisCache"
        )
    finally:
        monkeypatch.delenv("CACHE_URL")
        importlib.reload(base)


def test_the_shared_client_reads_and_writes_as_djangos(settings, redis_server):
    settings.CACHES = {
        "default": {
            "BACKEND": "apps.common.cache.ProcessPooledRedisCache",
            "LOCATION": redis_server.url(2),
        }
    }
    cache = caches["default"]
    cache.set("a", {"n": 1}, 30)
    assert cache.get("a") == {"n": 1}
    assert cache.add("a", 2) is False
    assert cache.add("n", 1) is True
    assert cache.incr("n") == 2
    assert cache.get("n") == 2
    cache.delete("a")
    assert cache.get("a") is None
    # one redis-py client per pool, reused by every call
    client = cache._cache
    assert client.get_client(write=True) is client.get_client(write=False)
