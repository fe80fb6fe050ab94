"""Django's Redis cache with one client (and connection pool) per process.

Django keeps its cache objects in an ``asgiref.local.Local``: under ASGI every
request runs in a context of its own, so each request got a new ``RedisCache``,
a new client with a new connection pool, and opened a new TCP connection to
Redis the first time it touched the cache. Every API call does (the token
throttle counts there): profiling ``POST /api/requests/`` on one uvicorn
process showed 7 % of its time in Redis connects (issue 38). Here the cache
objects stay per context, as Django wants, but share the process's client
for a location and options; redis-py's pool is thread-safe and starts afresh
in a forked child (Celery's prefork workers).
"""

from __future__ import annotations

import threading
from typing import Any

from django.core.cache.backends.redis import RedisCache, RedisCacheClient
from django.utils.functional import cached_property

_clients: dict[tuple[Any, ...], RedisCacheClient] = {}
_lock = threading.Lock()


class _ReusedClients(RedisCacheClient):
    """Django's client, keeping one redis-py client per pool instead of making
    one per call (each made its table of response callbacks again)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._clients: dict[int, Any] = {}

    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        pool = self._get_connection_pool(write)
        client = self._clients.get(id(pool))
        if client is None:
            client = self._clients[id(pool)] = self._client(connection_pool=pool)
        return client


class ProcessPooledRedisCache(RedisCache):
    """``RedisCache`` whose client, and so its connections, the process shares."""

    @cached_property
    def _cache(self) -> RedisCacheClient:
        key = (
            tuple(self._servers),
            tuple(sorted((name, repr(value)) for name, value in self._options.items())),
        )
        with _lock:
            client = _clients.get(key)
            if client is None:
                client = _clients[key] = _ReusedClients(self._servers, **self._options)
            return client
