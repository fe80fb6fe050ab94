"""PostgreSQL and Redis restarted under a running portal: it recovers by itself.

A private PostgreSQL and a private Redis (never the machine's shared ones) run
web (uvicorn), a Celery worker and beat as real processes, with simcluster as
the cluster. Each test restarts one service and requires: the web answers
again without a restart, the workers go on syncing and scheduling, WebSocket
clients can reconnect and get live deltas, and work submitted or queued around
the restart is done (nothing lost).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import time
from typing import Any

import pytest
import websockets

from tests.faults.figures import record_and_check
from tests.faults.stack import Stack

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def stack():
    started = Stack()
    try:
        yield started.start()
    finally:
        started.stop()


def _pod(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "schedulerName": "volcano",
            "containers": [
                {
                    "name": "main",
                    "image": "busybox",
                    "resources": {
                        "limits": {
                            "huawei.com/Ascend310P": 1,
                            "huawei.com/Ascend310P-memory": 3072,
                        }
                    },
                }
            ],
        },
    }


def _add_pod(stack: Stack, name: str) -> None:
    from simcluster import resources

    pod = _pod(name)
    stack.sim.api.admit_pod(pod)
    stack.sim.store.create(resources.POD, pod)


def _synced(stack: Stack) -> bool:
    """The nodes and the PriorityClass the submissions name are in (separate
    streams: on a busy machine one can lag the other by many seconds)."""
    status, body = stack.http(
        "GET", f"/api/clusters/{stack.secrets['cluster']}/summary/", token="admin"
    )
    return status == 200 and body["chips"] == 12 and _priority_known(stack)


def _priority_known(stack: Stack) -> bool:
    status, body = stack.http(
        "GET",
        f"/api/priority-classes/?cluster={stack.secrets['cluster']}&name=batch-low",
        token="admin",
    )
    return status == 200 and body["count"] == 1


def _slice_seen(stack: Stack, pod: str) -> bool:
    status, body = stack.http("GET", f"/api/slices/?q={pod}", token="admin")
    return status == 200 and any(row["pod_name"] == pod for row in body["results"])


def _submit(stack: Stack, key: str) -> tuple[int, Any]:
    return stack.http(
        "POST",
        "/api/requests/",
        {
            "cluster": stack.secrets["cluster"],
            "namespace": "default",
            "chip_type": "Ascend310P",
            "memory": 3072,
            "priority": "batch-low",
            "workload": {"image": "busybox"},
            "idempotency_key": key,
        },
        token="operator",
    )


def _state(stack: Stack, request_id: int) -> str:
    status, body = stack.http("GET", f"/api/requests/{request_id}/", token="operator")
    return body["state"] if status == 200 else ""


async def _live_delta(stack: Stack, pod: str, timeout: float) -> dict[str, Any]:
    """Connect (as a browser's client would, reconnecting until it works), take the
    snapshot, create ``pod`` and return the first delta that mentions it."""
    uri = f"ws://127.0.0.1:{stack.port}/ws/clusters/{stack.secrets['cluster']}/"
    headers = {"Authorization": f"Bearer {stack.secrets['admin']}"}
    deadline = time.monotonic() + timeout
    created = False
    while time.monotonic() < deadline:
        try:
            async with websockets.connect(
                uri,
                origin=f"http://127.0.0.1:{stack.port}",
                additional_headers=headers,
                open_timeout=5,
            ) as socket:
                snapshot = json.loads(await asyncio.wait_for(socket.recv(), 10))
                assert snapshot["type"] == "snapshot"
                if not created:
                    _add_pod(stack, pod)
                    created = True
                while time.monotonic() < deadline:
                    message = json.loads(
                        await asyncio.wait_for(
                            socket.recv(), deadline - time.monotonic()
                        )
                    )
                    if message["type"] == "delta" and pod in json.dumps(
                        message["payload"]
                    ):
                        return message
        except (TimeoutError, OSError, websockets.WebSocketException):
            await asyncio.sleep(0.5)  # the server went away: reconnect
    raise AssertionError(f"no delta about {pod} within {timeout}s")


def _run(coroutine: Any) -> Any:
    """Run a coroutine on a loop of its own (pytest-asyncio may own this thread's)."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def test_postgres_restart(stack):
    stack.wait(lambda: _synced(stack), 60, "the first sync")
    # when PostgreSQL restarts (every connection of web and workers is cut)
    server_before = stack.pg.server_pid()
    stack.pg.restart()
    assert stack.pg.server_pid() != server_before  # it did restart
    # then the web answers again by itself
    recovered = stack.wait(
        lambda: (
            stack.http("GET", "/readyz")[0] == 200
            and stack.http("GET", "/api/me/", token="admin")[0] == 200
        ),
        60,
        "web after the restart",
    )
    # sync goes on: a new pod reaches the database and, live, a WebSocket client
    delta = _run(_live_delta(stack, "after-pg-restart", 60))
    assert delta["type"] == "delta"
    stack.wait(lambda: _slice_seen(stack, "after-pg-restart"), 60, "the new slice")
    # and scheduling works: a request submitted now runs
    # (the PriorityClass stream too: a failure here says it never came back)
    stack.wait(
        lambda: _priority_known(stack), 60, "the PriorityClasses after the restart"
    )
    status, body = _submit(stack, "pg-restart")
    assert status == 201, body
    with contextlib.suppress(AssertionError):  # counted below either way
        stack.wait(
            lambda: _state(stack, body["id"]) == "running", 60, "the request to run"
        )
    record_and_check(
        "postgres restart",
        injected={"postgres_restart": 1},
        web_recovered_seconds=round(recovered, 1),
        # the pod made after the restart not in the ledger; the request not run
        lost=int(not _slice_seen(stack, "after-pg-restart"))
        + int(_state(stack, body["id"]) != "running"),
    )


def test_redis_restart(stack):
    stack.wait(lambda: _synced(stack), 60, "the sync")
    # when Redis (broker, channel layer, cache) goes down for a while
    stack.redis.shutdown()
    assert not stack.redis.listening()  # it is down
    # the API keeps answering (the rate limits wait for the cache)...
    me_status, _ = stack.http("GET", "/api/me/", token="operator")
    # ...and a request submitted meanwhile is accepted and kept in the database
    status, body = _submit(stack, "during-redis-outage")
    stack.redis.start()
    assert me_status == 200
    assert status == 201, body
    # then the worker reconnects by itself and the request still runs
    with contextlib.suppress(AssertionError):  # counted below either way
        stack.wait(
            lambda: _state(stack, body["id"]) == "running",
            90,
            "the request submitted during the outage",
        )
    # WebSocket clients reconnect and get live deltas again
    _run(_live_delta(stack, "after-redis-restart", 60))
    # and the worker's consumer reconnected instead of dying (apps/common/broker.py)
    assert "Unrecoverable error" not in stack.log("worker")
    record_and_check(
        "redis restart",
        injected={"redis_restart": 1},
        submitted_during_outage=1,
        # the worker reconnects in place (apps/common/broker.py); a restart here
        # would be the liveness probe's (heartbeat file)
        process_restarts=dict(stack.restarts),
        lost=int(_state(stack, body["id"]) != "running"),
    )


def test_queued_tasks_survive_a_redis_restart(stack):
    # given tasks waiting in the queue while no worker runs
    stack.kill("worker")
    stack.kill("beat")
    code = (
        "import django; django.setup()\n"
        "from apps.inventory.tasks import record_usage_samples_task as t\n"
        "print(' '.join(t.delay().id for _ in range(3)))\n"
    )
    queued = stack.run_python(code).strip().splitlines()[-1].split()
    # when Redis restarts (its append-only file keeps the queue, as in docker/compose.yml)
    stack.redis.restart()
    stack.launch("worker")
    stack.launch("beat")

    # then the worker runs each of them (its log names every task it finished)
    def ran() -> list[str]:
        log = stack.log("worker")
        return [i for i in queued if f"[{i}] succeeded" in log]

    with contextlib.suppress(AssertionError):  # counted below either way
        stack.wait(lambda: len(ran()) == len(queued), 60, "the queued tasks to run")
    record_and_check(
        "queued tasks across a redis restart",
        injected={"redis_restart": 1},
        queued=len(queued),
        lost=len(queued) - len(ran()),
    )
