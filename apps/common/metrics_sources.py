"""The metric families read at scrape time, and where apps register theirs.

Each source yields prometheus-client metric families built from what is stored
*now*, so every web replica reports the same values whichever process did the
work (see ``apps.common.metrics``). The apps register their database families
in ``AppConfig.ready`` (inventory: sync and usage; scheduling: the request
queue), so this module imports no app; the task records and the broker are
common ground and live here.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from apps.common.ids import is_ascii_digits
from apps.common.task_metrics import snapshot
from apps.common.worker_health import ALIVE_SECONDS, workers_alive

log = logging.getLogger(__name__)

ClusterNames = Mapping[int, str]
Families = Callable[[datetime, ClusterNames], Iterable[Metric]]


@dataclass(frozen=True)
class DatabaseSource:
    """Families read from the database; ``required`` ones decide vnpu_database_up."""

    name: str
    families: Families
    required: bool


_SOURCES: dict[str, DatabaseSource] = {}
_cluster_names: Callable[[], dict[int, str]] = dict


def register_cluster_names(names: Callable[[], dict[int, str]]) -> None:
    """Set how cluster ids become the ``cluster`` label (inventory owns clusters)."""
    global _cluster_names
    _cluster_names = names


def register_database_families(
    name: str, families: Families, *, required: bool = False
) -> None:
    """Add (or replace, by ``name``) a database-backed source of families."""
    _SOURCES[name] = DatabaseSource(name, families, required)


def cluster_names() -> dict[int, str]:
    """Cluster id -> name (metrics are labelled by name)."""
    return _cluster_names()


def database_sources() -> list[DatabaseSource]:
    """The registered sources, the required ones first."""
    return sorted(_SOURCES.values(), key=lambda s: not s.required)


def age_seconds(now: datetime, then: datetime | None) -> float | None:
    """Seconds from ``then`` to ``now``; None when there is no ``then``."""
    return (now - then).total_seconds() if then else None


def task_families(names: ClusterNames) -> Iterator[Metric]:
    """Task runs and durations from every worker (``apps.common.task_metrics``)."""
    runs = CounterMetricFamily(
        "vnpu_task_runs", "Celery task runs finished.", labels=["task", "cluster"]
    )
    failures = CounterMetricFamily(
        "vnpu_task_failures",
        "Celery task runs that did not succeed.",
        labels=["task", "cluster"],
    )
    seconds = CounterMetricFamily(
        "vnpu_task_seconds",
        "Total time spent in the task.",
        labels=["task", "cluster"],
    )
    last = GaugeMetricFamily(
        "vnpu_task_last_duration_seconds",
        "Duration of the task's most recent run.",
        labels=["task", "cluster"],
    )
    allocator = GaugeMetricFamily(
        "vnpu_allocator_pass_seconds",
        "Duration of the most recent scheduling pass (reconcile, reserve, admit).",
        labels=["cluster"],
    )
    for task, cluster, values in snapshot():
        cluster_label = (
            names.get(int(cluster), cluster) if is_ascii_digits(cluster) else ""
        )
        labels = [task, cluster_label]
        runs.add_metric(labels, values.get("runs", 0))
        failures.add_metric(labels, values.get("failures", 0))
        seconds.add_metric(labels, values.get("sum", 0.0))
        last.add_metric(labels, values.get("last", 0.0))
        if task.endswith("allocate_cluster_task") and cluster_label:
            allocator.add_metric([cluster_label], values.get("last", 0.0))
    yield from (runs, failures, seconds, last, allocator)


def _redis_broker_url() -> str:
    """The Celery broker's URL when it is Redis (workers and beat of their own),
    else "" (tasks run in the web process: no worker or beat to report)."""
    url = str(getattr(settings, "CELERY_BROKER_URL", "") or "")
    return url if url.startswith(("redis://", "rediss://")) else ""


def process_families(now: float) -> Iterator[Metric]:
    """The portal's own processes: workers heard from lately (their heartbeats,
    ``apps.common.worker_health``) and how long ago a task beat schedules last
    finished (``apps.common.task_metrics``). Redis broker only."""
    if not _redis_broker_url():
        return
    alive = GaugeMetricFamily(
        "vnpu_workers_alive",
        f"Celery workers that sent a heartbeat in the last {ALIVE_SECONDS} s.",
    )
    alive.add_metric([], len(workers_alive()))
    yield alive
    periodic = {
        str(entry["task"])
        for entry in getattr(settings, "CELERY_BEAT_SCHEDULE", {}).values()
    }
    last = [
        float(values["at"])
        for task, _, values in snapshot()
        if task in periodic and "at" in values
    ]
    if last:
        beat = GaugeMetricFamily(
            "vnpu_beat_last_task_age_seconds",
            "Seconds since a task that beat schedules last finished (grows while "
            "beat, or every worker, is down).",
        )
        beat.add_metric([], max(0.0, now - max(last)))
        yield beat


def broker_families() -> Iterator[Metric]:
    """Tasks waiting in the Celery broker (Redis only), per queue."""
    url = _redis_broker_url()
    if not url:
        return
    up = GaugeMetricFamily("vnpu_broker_up", "1 when the Celery broker answered.")
    depth = GaugeMetricFamily(
        "vnpu_task_queue_length",
        "Celery tasks waiting in the broker, per queue.",
        labels=["queue"],
    )
    try:
        import redis  # only with a Redis broker, checked above

        client = redis.Redis.from_url(url, socket_connect_timeout=1, socket_timeout=1)
        try:
            queue = str(getattr(settings, "CELERY_TASK_DEFAULT_QUEUE", "") or "celery")
            depth.add_metric([queue], client.llen(queue))
        finally:
            client.close()
    except Exception as exc:  # a dead broker is a value, not a failed scrape
        log.warning("metrics: the broker did not answer: %s", type(exc).__name__)
        up.add_metric([], 0)
        yield up
        return
    up.add_metric([], 1)
    yield from (up, depth)
