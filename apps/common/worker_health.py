"""A liveness signal for Celery workers: a file touched at every worker heartbeat.

A worker whose consumer died stops heartbeating but lingers in a warm shutdown
until its running tasks end, and a sync task keeps its watches for minutes
(a Redis restart did that until ``apps.common.broker``; the probe stays as the
safety net for any other way a consumer dies). Heartbeats also stop while the
worker waits for Redis, so an outage longer than the threshold restarts it
too, which costs its running tasks but loses nothing. The worker's liveness probe
(deploy/40-worker.yaml) restarts the container when the file is older than
its threshold; compose and the fault tests' supervisor do the same.

``WORKER_ALIVE_FILE`` names the file (the worker entrypoint sets
``/tmp/vnpu-worker-alive``); unset, nothing is written.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

from celery import signals


@signals.heartbeat_sent.connect
def _touch(**_: Any) -> None:
    path = os.environ.get("WORKER_ALIVE_FILE", "")
    if path:
        # A read-only place: the probe will say so.
        with contextlib.suppress(OSError):
            Path(path).touch()
