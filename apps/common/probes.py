"""Liveness and readiness probes for Kubernetes (plain http, no login, no secrets).

``/healthz`` says the process answers; ``/readyz`` also that the database
does, so a replica that lost PostgreSQL leaves the Service until it is back
(and is not restarted for it: the connection comes back by itself).
"""

from __future__ import annotations

from django.db import DatabaseError, connection, transaction
from django.http import HttpRequest, HttpResponse


def healthz(request: HttpRequest) -> HttpResponse:
    """The process is alive."""
    return HttpResponse("ok\n", content_type="text/plain")


@transaction.non_atomic_requests
def readyz(request: HttpRequest) -> HttpResponse:
    """The process can serve: the database answers a trivial query."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except DatabaseError:
        if not connection.in_atomic_block:
            connection.close()  # reconnect on the next probe
        return HttpResponse(
            "database unavailable\n", status=503, content_type="text/plain"
        )
    return HttpResponse("ok\n", content_type="text/plain")
