"""Liveness and readiness probes for Kubernetes (plain http, no login, no secrets).

``/healthz`` (liveness) says the process answers, and nothing else: it never
touches the database (nor opens the ``ATOMIC_REQUESTS`` transaction), so a
PostgreSQL outage does not make the kubelet restart every web pod, which
would not bring the database back and would cut every open WebSocket.

``/readyz`` (readiness) also asks the database for ``SELECT 1``: a replica
that cannot reach it answers ``503`` and leaves the Service until it is back
(its connection comes back by itself). Its JSON body names each dependency:
``{"status": "ready"|"unavailable", "checks": {"database": "ok"|"unavailable",
"redis": "ok"|"unavailable"|"not configured"}}``.

Redis does not fail readiness. All replicas share it, so taking them all out
of the Service for it would turn a partial outage (live updates pause, tasks
wait in the web's transactions for the broker) into a full one: the API keeps
answering from PostgreSQL while Redis is away. The check is reported so that
an operator sees it.
"""

from __future__ import annotations

import logging

import redis
from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.http import HttpRequest, HttpResponse, JsonResponse

logger = logging.getLogger(__name__)
OK, UNAVAILABLE, NOT_CONFIGURED = "ok", "unavailable", "not configured"
# A probe must answer within the kubelet's timeout (1 s by default).
REDIS_TIMEOUT_SECONDS = 0.5


@transaction.non_atomic_requests
def healthz(request: HttpRequest) -> HttpResponse:
    """The process is alive."""
    return HttpResponse("ok\n", content_type="text/plain")


def _database() -> str:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except DatabaseError as exc:
        logger.warning("readyz: database unavailable (%s)", type(exc).__name__)
        if not connection.in_atomic_block:
            connection.close()  # reconnect on the next probe
        return UNAVAILABLE
    return OK


def _redis() -> str:
    if not settings.REDIS_URL:
        return NOT_CONFIGURED
    client = redis.Redis.from_url(
        settings.REDIS_URL,
        socket_connect_timeout=REDIS_TIMEOUT_SECONDS,
        socket_timeout=REDIS_TIMEOUT_SECONDS,
    )
    try:
        client.ping()
    except (redis.RedisError, OSError) as exc:
        logger.warning("readyz: redis unavailable (%s)", type(exc).__name__)
        return UNAVAILABLE
    finally:
        client.close()
    return OK


@transaction.non_atomic_requests
def readyz(request: HttpRequest) -> HttpResponse:
    """The process can serve: the database answers (Redis is reported, not required)."""
    checks = {"database": _database(), "redis": _redis()}
    ready = checks["database"] == OK
    return JsonResponse(
        {"status": "ready" if ready else UNAVAILABLE, "checks": checks},
        status=200 if ready else 503,
    )
