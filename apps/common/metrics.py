"""Prometheus metrics at ``/metrics`` (prometheus-client), for a scraper with ``METRICS_TOKEN``.

Two kinds of metrics, so that any number of web and worker processes report
one truth:

- **HTTP latency** is measured in the web process that served the request
  (``RequestMetricsMiddleware``), one histogram per method, route and status.
  With several processes per pod, set ``PROMETHEUS_MULTIPROC_DIR`` (the web
  entrypoint does) and the histogram is summed over them;
- **everything else is read at scrape time** (``PortalCollector``, sources in
  ``apps.common.metrics_sources``): sync lag, watch restarts and relists from
  the SyncCursor rows the watchers keep, usage per cluster and chip type from
  the Chip rows, the request queue from the scheduling app's rows, task and
  allocator pass times from the records workers leave in the shared cache
  (``apps.common.task_metrics``), and the Celery queue length from the
  broker. Workers therefore need no metrics port, and a restarted worker
  loses nothing. Every web replica reports the same shared values: aggregate
  them with ``max``.

A scrape never fails because a dependency is down: ``vnpu_database_up`` and
``vnpu_broker_up`` say 0 and the families that need them are left out.
"""

from __future__ import annotations

import hmac
import logging
import os
import time
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Histogram,
    generate_latest,
    multiprocess,
)
from prometheus_client.core import GaugeMetricFamily, Metric

from apps.common import metrics_sources as sources

log = logging.getLogger(__name__)

# The web process's own registry: the HTTP histogram and the database collector.
REGISTRY = CollectorRegistry(auto_describe=False)
_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})

HTTP_REQUEST_SECONDS = Histogram(
    "vnpu_http_request_duration_seconds",
    "Time to answer an HTTP request, by method, URL route and status code.",
    ["method", "route", "status"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
    registry=REGISTRY,
)


def _route(request: HttpRequest) -> str:
    # The URL pattern, never the path: ids in paths would make a series per object.
    match = getattr(request, "resolver_match", None)
    return str(match.route) if match is not None and match.route else "unmatched"


class RequestMetricsMiddleware:
    """Observes every request's duration (first in MIDDLEWARE, so it times the rest)."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Callable[..., Any]) -> None:
        self.get_response = get_response
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)

    def _observe(self, request: HttpRequest, status: int, started: float) -> None:
        method = request.method if request.method in _METHODS else "other"
        HTTP_REQUEST_SECONDS.labels(method, _route(request), str(status)).observe(
            time.perf_counter() - started
        )

    def __call__(self, request: HttpRequest) -> Any:
        if self.is_async:
            return self._acall(request)
        started = time.perf_counter()
        response = self.get_response(request)
        self._observe(request, response.status_code, started)
        return response

    async def _acall(self, request: HttpRequest) -> Any:
        started = time.perf_counter()
        response = await self.get_response(request)
        self._observe(request, response.status_code, started)
        return response


# --- read at scrape time -------------------------------------------------------------


def _database_families(now: datetime) -> tuple[bool, list[Metric]]:
    """The registered database families (``metrics_sources``): the required
    ones must answer, the others may not (their tables not migrated yet)."""
    families: list[Metric] = []
    names: dict[int, str] = {}
    sources_ = sources.database_sources()
    try:
        # A savepoint each: a failed query must not poison the next one (PostgreSQL).
        with transaction.atomic():
            names = sources.cluster_names()
            for source in sources_:
                if source.required:
                    families.extend(source.families(now, names))
    except DatabaseError as exc:
        log.warning("metrics: the database did not answer: %s", type(exc).__name__)
        if not connection.in_atomic_block:
            connection.close()  # the next scrape reconnects
        return False, []
    for source in sources_:
        if source.required:
            continue
        try:
            with transaction.atomic():
                families.extend(source.families(now, names))
        except DatabaseError as exc:
            log.warning("metrics: no %s figures: %s", source.name, type(exc).__name__)
    try:
        families.extend(sources.task_families(names))
    except Exception as exc:  # the cache is down: the rest still counts
        log.warning("metrics: no task figures: %s", type(exc).__name__)
    return True, families


class PortalCollector:
    """The database- and broker-backed families, computed at each scrape."""

    def describe(self) -> Iterable[Metric]:
        # Nothing up front: registering must not query the database.
        return []

    def collect(self) -> Iterator[Metric]:
        up = GaugeMetricFamily("vnpu_database_up", "1 when the database answered.")
        answered, families = _database_families(timezone.now())
        up.add_metric([], int(answered))
        yield up
        yield from families
        yield from sources.broker_families()
        try:
            yield from sources.process_families(time.time())
        except Exception as exc:  # the cache is down: the rest still counts
            log.warning("metrics: no worker figures: %s", type(exc).__name__)


PORTAL_COLLECTOR = PortalCollector()
REGISTRY.register(PORTAL_COLLECTOR)


def scrape_registry() -> CollectorRegistry:
    """The registry to expose: this process's, or every process's in multiprocess mode."""
    if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        return REGISTRY
    registry = CollectorRegistry(auto_describe=False)
    multiprocess.MultiProcessCollector(registry)
    registry.register(PORTAL_COLLECTOR)
    return registry


def _authorized(request: HttpRequest, token: str) -> bool:
    sent = request.headers.get("Authorization", "")
    return hmac.compare_digest(sent.encode(), f"Bearer {token}".encode())


@transaction.non_atomic_requests
def metrics_view(request: HttpRequest) -> HttpResponse:
    """``GET /metrics``: 404 unless METRICS_TOKEN is set, 401 without that bearer token."""
    token = str(getattr(settings, "METRICS_TOKEN", "") or "")
    if not token:
        return HttpResponse(
            "metrics are off (set METRICS_TOKEN)\n",
            status=404,
            content_type="text/plain",
        )
    if not _authorized(request, token):
        response = HttpResponse(
            "a metrics bearer token is required\n",
            status=401,
            content_type="text/plain",
        )
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    return HttpResponse(
        generate_latest(scrape_registry()), content_type=CONTENT_TYPE_LATEST
    )
