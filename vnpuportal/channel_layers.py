"""The Channels layer: Redis in production, in-memory in the embedded default.

channels-redis waits for messages with a blocking ``BZPOPMIN`` of 5 s; redis-py
(8.x) reads with a 5 s socket timeout by default, so an idle consumer's read
timed out just as Redis was about to answer, and the consumer crashed every
5 to 20 s (live updates dropped). The socket timeout must outlast the blocking
read; keepalive and health checks still find a dead connection.
"""

from __future__ import annotations

from typing import Any

# Longer than channels-redis's 5 s blocking read (brpop_timeout), with room to spare.
REDIS_SOCKET_TIMEOUT = 15
REDIS_HEALTH_CHECK_INTERVAL = 30


def channel_layers(redis_url: str) -> dict[str, Any]:
    """``CHANNEL_LAYERS`` for ``redis_url`` (empty: the in-memory layer)."""
    if not redis_url:
        return {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    host = {
        "address": redis_url,
        "socket_timeout": REDIS_SOCKET_TIMEOUT,
        "socket_keepalive": True,
        "health_check_interval": REDIS_HEALTH_CHECK_INTERVAL,
    }
    return {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [host]},
        }
    }
