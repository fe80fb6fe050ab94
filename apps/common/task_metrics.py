"""Task timings from every Celery worker, kept where the web process can read them.

Workers have no metrics port: each finished task adds its duration to a small
record in the Django cache (Redis in a deployment, shared by every process),
and ``/metrics`` reads the records at scrape time. The allocator pass time is
the duration of ``allocate_cluster_task``, recorded per cluster too.

Updates are read-modify-write without a lock: two workers finishing the same
task in the same millisecond may lose one sample. That is fine for gauges and
counters that describe load; nothing depends on them being exact.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from celery import signals
from django.core.cache import cache

log = logging.getLogger(__name__)

KEY_PREFIX = "vnpu:task-metrics:"
INDEX_KEY = KEY_PREFIX + "index"
TTL_SECONDS = 7 * 24 * 3600
# Tasks whose first argument is a cluster id: their timings are also kept per cluster.
PER_CLUSTER = frozenset(
    {
        "apps.scheduling.tasks.allocate_cluster_task",
        "apps.scheduling.tasks.reconcile_requests_task",
        "apps.inventory.tasks.sync_cluster_task",
    }
)
_started: dict[str, float] = {}
_lock = threading.Lock()


def _key(task: str, cluster: str) -> str:
    return f"{KEY_PREFIX}{task}|{cluster}"


def record(task: str, seconds: float, *, ok: bool, cluster: str = "") -> None:
    """Add one run of ``task`` (optionally for one cluster) to the shared record."""
    key = _key(task, cluster)
    try:
        current = cache.get(key) or {"runs": 0, "failures": 0, "sum": 0.0, "max": 0.0}
        current["runs"] += 1
        current["failures"] += 0 if ok else 1
        current["sum"] += seconds
        current["last"] = seconds
        current["max"] = max(current["max"], seconds)
        current["at"] = time.time()
        cache.set(key, current, TTL_SECONDS)
        index = set(cache.get(INDEX_KEY) or ())
        if key not in index:
            cache.set(INDEX_KEY, sorted(index | {key}), TTL_SECONDS)
    except Exception:  # metrics must never fail a task (the cache may be down)
        log.debug("task metrics not recorded", exc_info=True)


def snapshot() -> list[tuple[str, str, dict[str, Any]]]:
    """Every record as (task, cluster id or "", values)."""
    keys = cache.get(INDEX_KEY) or []
    found = cache.get_many(keys) if keys else {}
    rows = []
    for key, values in sorted(found.items()):
        task, _, cluster = key[len(KEY_PREFIX) :].partition("|")
        rows.append((task, cluster, values))
    return rows


@signals.task_prerun.connect
def _on_prerun(task_id: str | None = None, **_: Any) -> None:
    if task_id:
        with _lock:
            _started[task_id] = time.monotonic()


@signals.task_postrun.connect
def _on_postrun(
    task_id: str | None = None,
    task: Any = None,
    args: Any = None,
    state: str | None = None,
    **_: Any,
) -> None:
    with _lock:
        started = _started.pop(task_id or "", None)
    if started is None or task is None:
        return
    seconds = time.monotonic() - started
    name = str(getattr(task, "name", task))
    ok = state == "SUCCESS"
    record(name, seconds, ok=ok)
    if name in PER_CLUSTER and args:
        record(name, seconds, ok=ok, cluster=str(args[0]))
