"""Liveness signals for Celery workers, touched at every worker heartbeat (2 s).

**A file, for the worker's own liveness probe.** A worker whose consumer died
stops heartbeating but lingers in a warm shutdown until its running tasks end,
and a sync task keeps its watches for minutes (a Redis restart did that until
``apps.common.broker``; the probe stays as the safety net for any other way a
consumer dies). Heartbeats also stop while the worker waits for Redis, so an
outage longer than the threshold restarts it too, which costs its running
tasks but loses nothing. The worker's liveness probe (deploy/40-worker.yaml)
restarts the container when the file is older than its threshold; compose and
the fault tests' supervisor do the same. ``WORKER_ALIVE_FILE`` names the file
(the worker entrypoint sets ``/tmp/vnpu-worker-alive``); unset, nothing is
written.

**A record in the shared cache, for ``/metrics``.** Each worker keeps a key of
its own that expires :data:`ALIVE_SECONDS` after its last heartbeat, so the web
process counts the workers heard from lately (``vnpu_workers_alive``, alert
``VnpuWorkerMissing``) without a port on any worker.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from pathlib import Path
from typing import Any

from celery import signals
from django.core.cache import cache

log = logging.getLogger(__name__)

KEY_PREFIX = "vnpu:worker-alive:"
INDEX_KEY = KEY_PREFIX + "index"
#: A worker not heard from for this long is not counted (30 heartbeats missed).
ALIVE_SECONDS = 60
#: The index of worker names outlives them: a day of restarts' names, then gone.
INDEX_SECONDS = 24 * 3600


def heartbeat_record(worker: str, at: float) -> None:
    """Record that ``worker`` (its Celery node name) was alive at ``at``."""
    cache.set(KEY_PREFIX + worker, at, ALIVE_SECONDS)
    index = set(cache.get(INDEX_KEY) or ())
    if worker not in index:
        cache.set(INDEX_KEY, sorted(index | {worker}), INDEX_SECONDS)


def workers_alive() -> dict[str, float]:
    """The workers heard from in the last :data:`ALIVE_SECONDS`, with their last heartbeat."""
    names = cache.get(INDEX_KEY) or []
    found = cache.get_many([KEY_PREFIX + name for name in names]) if names else {}
    return {key.removeprefix(KEY_PREFIX): float(at) for key, at in found.items()}


@signals.heartbeat_sent.connect
def _touch(sender: Any = None, **_: Any) -> None:
    path = os.environ.get("WORKER_ALIVE_FILE", "")
    if path:
        # A read-only place: the probe will say so.
        with contextlib.suppress(OSError):
            Path(path).touch()
    worker = getattr(getattr(sender, "eventer", None), "hostname", "") or ""
    if worker:
        try:
            heartbeat_record(worker, time.time())
        except Exception:  # the cache is down: the heartbeat itself must not fail
            log.debug("worker heartbeat not recorded", exc_info=True)
