"""PostgreSQL down under a running web server: alive, not ready, 503 everywhere else.

A private PostgreSQL (never the machine's shared one) runs under a real
uvicorn process. While it is stopped: ``/healthz`` (liveness) still answers
200, so no web pod is restarted for an outage it cannot fix; ``/readyz``
answers a JSON 503 naming the database; every endpoint of the OpenAPI schema
answers 503 ``database_unavailable`` with ``Retry-After`` (never a 500); a
WebSocket is closed with 1013. Once it is back, everything answers again
without a restart.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import re
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import websockets
from drf_spectacular.generators import SchemaGenerator

from apps.common.db_unavailable import database_unavailable
from harness.processes import free_port, uvicorn_command
from harness.services import PrivatePostgres, PrivateRedis, production_env
from tests.polling import wait_for

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
SETUP = """
import django
django.setup()
from django.core.management import call_command
call_command("migrate", "--noinput", verbosity=0)
from apps.accounts.services import token_create, user_ensure
from apps.inventory import services
cluster = services.cluster_create(actor=None, name="offline", connection="none")
token = token_create(user=user_ensure(username="ada", role="admin")).plaintext
print(cluster.pk, token)
"""


class Web:
    def __init__(self, pg: PrivatePostgres, redis: PrivateRedis, workdir: Path) -> None:
        self.port = free_port()
        self.env = {
            **production_env("outage-", pg.create_database("portal"), redis.url(0)),
            "CACHE_URL": "locmemcache://",
            "LOCK_DIR": str(workdir / "locks"),
        }
        done = subprocess.run(
            [sys.executable, "-c", SETUP],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=180,
            check=True,
        )
        cluster, self.token = done.stdout.strip().splitlines()[-1].split()
        self.ws_path = f"/ws/clusters/{cluster}/"
        self.log = workdir / "web.log"
        self.process = subprocess.Popen(
            uvicorn_command(self.port),
            cwd=ROOT,
            env=self.env,
            stdout=self.log.open("wb"),
            stderr=subprocess.STDOUT,
        )
        wait_for(lambda: self.http("GET", "/healthz")[0] == 200, "uvicorn", 60)

    def http(
        self, method: str, path: str, body: Any = None, token: bool = True
    ) -> tuple[int, Any, Any]:
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {self.token}"
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}{path}",
            data=json.dumps(body).encode() if body is not None else None,
            headers=headers,
            method=method,
        )
        try:
            with urllib.request.urlopen(request, timeout=20) as answer:  # noqa: S310
                raw, status, got = answer.read(), answer.status, answer.headers
        except urllib.error.HTTPError as exc:
            raw, status, got = exc.read(), exc.code, exc.headers
        except (urllib.error.URLError, OSError):
            return 0, None, {}
        try:
            return status, json.loads(raw), got
        except ValueError:
            return status, raw.decode(errors="replace"), got

    def ws_first(self) -> str | int:
        """Connect to the cluster's socket with the token: the first message's
        type, or the code the server closed with."""

        async def run() -> str | int:
            async with websockets.connect(
                f"ws://127.0.0.1:{self.port}{self.ws_path}",
                origin=f"http://127.0.0.1:{self.port}",
                additional_headers={"Authorization": f"Bearer {self.token}"},
                open_timeout=20,
            ) as socket:
                try:
                    message = await asyncio.wait_for(socket.recv(), 20)
                except websockets.ConnectionClosed as closed:
                    return closed.rcvd.code if closed.rcvd else -1
                return str(json.loads(message)["type"])

        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
            return pool.submit(asyncio.run, run()).result()

    def stop(self) -> None:
        self.process.kill()
        self.process.wait(timeout=20)


@pytest.fixture
def pg() -> Iterator[PrivatePostgres]:
    server = PrivatePostgres()
    yield server
    server.stop()


@pytest.fixture
def redis_server() -> Iterator[PrivateRedis]:
    server = PrivateRedis(appendonly=False)
    yield server
    server.stop()


@pytest.fixture
def web(pg, redis_server, tmp_path) -> Iterator[Web]:
    server = Web(pg, redis_server, tmp_path)
    yield server
    server.stop()


def _endpoints() -> list[tuple[str, str]]:
    """Every (method, path) of the OpenAPI schema, ids filled in with 1."""
    schema = SchemaGenerator().get_schema(request=None, public=True)
    calls = []
    for path, operations in schema["paths"].items():
        concrete = re.sub(r"\{[^}]+\}", "1", path)
        for method in operations:
            if method in {"get", "post", "put", "patch", "delete"}:
                calls.append((method.upper(), concrete))
    return calls


def test_database_outage(pg, redis_server, web):
    # given a portal that serves
    assert web.http("GET", "/readyz", token=False)[:2] == (
        200,
        {"status": "ready", "checks": {"database": "ok", "redis": "ok"}},
    )
    assert web.http("GET", "/api/me/")[0] == 200
    assert web.ws_first() == "snapshot"
    endpoints = _endpoints()
    assert len(endpoints) > 40, endpoints  # the schema, not a handful

    # when PostgreSQL stops
    pg.halt()

    # then liveness holds, without touching the database
    for _ in range(3):
        assert web.http("GET", "/healthz", token=False)[:2] == (200, "ok\n")
    # readiness fails, naming the database
    status, body, _ = web.http("GET", "/readyz", token=False)
    assert (status, body["status"], body["checks"]["database"]) == (
        503,
        "unavailable",
        "unavailable",
    )
    # every API endpoint answers 503 database_unavailable with Retry-After
    answers = {}
    for method, path in endpoints:
        status, body, headers = web.http(method, path, {} if method != "GET" else None)
        answers[f"{method} {path}"] = (
            status,
            body.get("code") if isinstance(body, dict) else body,
            headers.get("Retry-After"),
        )
    anonymous = web.http("GET", "/api/clusters/", token=False)
    answers["GET /api/clusters/ (anonymous)"] = (
        anonymous[0],
        anonymous[1].get("code") if isinstance(anonymous[1], dict) else anonymous[1],
        anonymous[2].get("Retry-After"),
    )
    wrong = {
        k: v for k, v in answers.items() if v != (503, "database_unavailable", "5")
    }
    assert not wrong, wrong
    # a WebSocket is refused cleanly: accepted, then closed with "try again later"
    assert web.ws_first() == 1013

    # when PostgreSQL is back, the same process serves again
    pg.start()
    wait_for(
        lambda: web.http("GET", "/readyz", token=False)[0] == 200,
        "readiness after the outage",
        60,
    )
    assert web.http("GET", "/api/me/")[0] == 200
    assert web.ws_first() == "snapshot"
    assert web.process.poll() is None
    log = web.log.read_text(errors="replace")
    assert "Internal Server Error" not in log, log[-4000:]

    # Redis down does not fail readiness (all replicas share it; the API still
    # answers from PostgreSQL): it is reported
    redis_server.shutdown()
    assert web.http("GET", "/readyz", token=False)[:2] == (
        200,
        {"status": "ready", "checks": {"database": "ok", "redis": "unavailable"}},
    )


class _PgError(Exception):
    def __init__(self, sqlstate: str | None) -> None:
        self.sqlstate = sqlstate


@pytest.mark.parametrize(
    ("sqlstate", "unavailable"),
    [
        (None, True),  # refused, lost: psycopg gives no SQLSTATE
        ("08006", True),  # connection_failure
        ("57P01", True),  # admin_shutdown
        ("57P03", True),  # cannot_connect_now (starting up)
        ("53300", True),  # too_many_connections
        ("40P01", False),  # deadlock: the request's own problem
        ("57014", False),  # query_canceled (statement timeout)
    ],
)
def test_which_database_errors_mean_unavailable(sqlstate, unavailable):
    from django.db import OperationalError

    error = OperationalError("x")
    error.__cause__ = _PgError(sqlstate)
    assert database_unavailable(error) is unavailable


def test_sqlite_errors_are_not_an_outage():
    import sqlite3

    from django.db import InterfaceError, OperationalError

    error = OperationalError("no such table: x")
    error.__cause__ = sqlite3.OperationalError("no such table: x")
    assert database_unavailable(error) is False
    bad_parameter = InterfaceError("Error binding parameter 1")
    bad_parameter.__cause__ = sqlite3.InterfaceError("Error binding parameter 1")
    assert database_unavailable(bad_parameter) is False
    assert database_unavailable(InterfaceError("connection already closed")) is True
