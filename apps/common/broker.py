"""The Celery worker survives a Redis restart: a workaround for kombu's Redis transport.

Found with celery 5.7.0, kombu 5.7.0 and redis-py 8.1.0 (pyproject.toml's pins)
and reproduced by ``tests/faults/test_worker_reconnects.py`` with both the
prefork and the threads pool. When the broker connection drops while a task is
unacknowledged (``CELERY_TASK_ACKS_LATE``: always, since a sync task holds its
watches for minutes), the worker logged "Unrecoverable error:
AttributeError: 'NoneType' object has no attribute 'hostname'" and stopped
consuming for good. What happens:

1. Celery's consumer (``Consumer.on_connection_error_after_connected``) cleans
   the lost connection up twice: ``connection.collect()``, then
   ``connection.close()``.
2. In ``collect()`` the default channel (the task consumer's, holding the
   unacknowledged message) starts closing, but reading the pending ``BRPOP``
   raises ``ConnectionError`` before the channel counts as closed, so its
   unacknowledged messages are not restored yet. ``collect()`` then detaches
   the transport from the connection (``transport.client = None``) and keeps
   the channel.
3. ``close()`` closes that channel again; it now restores its unacknowledged
   messages through a new Redis client, whose parameters come from
   ``transport.client``, which is ``None``. The ``AttributeError`` is not one
   of the connection errors the consumer ignores, so the consumer's blueprint
   stops: the process stays, but takes no task again.

The fix: a Redis channel whose transport has been detached has no broker to
talk to, so asking it for connection parameters raises the transport's
``ConnectionError`` (which every caller treats as "broker unreachable") instead
of dereferencing ``None``. The consumer then reconnects as it does for any
connection loss. The unacknowledged message stays in Redis's ``unacked`` hash
and is delivered again after the visibility timeout (as for a worker that was
killed), so a task cut by a Redis restart may run twice, never zero times.

Remove this once ``tests/faults/test_worker_reconnects.py::
test_kombu_still_needs_the_workaround`` fails: it checks that the pinned kombu
still dereferences the detached transport.
"""

from __future__ import annotations

from typing import Any

from kombu.transport import redis as kombu_redis

_PATCHED = "_vnpu_detached_channel_raises"


def _connparams_or_connection_error(original: Any) -> Any:
    def _connparams(self: Any, asynchronous: bool = False) -> Any:
        transport = self.connection
        if transport is None or transport.client is None:
            raise kombu_redis.redis.exceptions.ConnectionError(
                "the broker connection of this channel was closed"
            )
        return original(self, asynchronous=asynchronous)

    setattr(_connparams, _PATCHED, True)
    _connparams.__wrapped__ = original  # type: ignore[attr-defined]
    return _connparams


def install() -> None:
    """Patch kombu's Redis channel (idempotent; the Celery app calls it at import)."""
    current = kombu_redis.Channel._connparams
    if not getattr(current, _PATCHED, False):
        kombu_redis.Channel._connparams = _connparams_or_connection_error(  # type: ignore[method-assign]
            current
        )
