"""A job's log over the cluster socket (``logs.follow``), against simcluster jobs.

The socket is a pipeline's (a CI token limited to queue ``ci``); sync and the
beat run in threads (``harness.portal.Running``) so that the job is placed,
runs, prints its lines over its run (simcluster's job contract:
``SIMCLUSTER_RUN_SECONDS``, ``SIMCLUSTER_EXIT_CODE``, ``SIMCLUSTER_LOG``) and
ends, and its log is kept. The follow goes through the whole ASGI app.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator

from apps.accounts.services import token_create, user_ensure
from apps.scheduling.models import Queue
from harness.portal import Running, request_state, submit_job, wait_running
from tests.polling import wait_for
from vnpuportal.asgi import application

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.websockets,
    pytest.mark.slow,
]

LINES = [f"step {i} loss {1 / (i + 1):.3f}" for i in range(6)]


@pytest.fixture
def cluster(sim, tmp_path, settings):
    """Cluster ``sim`` in the database, synced once, with queues ci and other."""
    from django.core.cache import cache

    from apps.inventory.choices import ConnectionKind
    from apps.inventory.services import cluster_create
    from apps.inventory.sync.engine import sync_once
    from tests.scheduling.helpers import World

    settings.LOCK_DIR = str(tmp_path / "locks")
    settings.PREEMPTION_AUTO_APPROVE_PRIORITY_GAP = None
    settings.REQUEST_PENDING_TTL = 0
    cache.clear()
    kubeconfig = sim.write_kubeconfig(tmp_path / "kubeconfig")
    made = cluster_create(
        actor=None,
        name="sim",
        connection=ConnectionKind.KUBECONFIG,
        kubeconfig=Path(kubeconfig).read_text(),
    )
    sync_once(made)
    World(made)  # the guide's chip types and priority classes
    Queue.objects.create(cluster=made, name="ci", open_to_all=True)
    Queue.objects.create(cluster=made, name="other", open_to_all=True)
    return made


def _token(username: str, queue: str) -> str:
    user = user_ensure(username=username, role="ci", is_service_account=True)
    return token_create(user=user, queues=[f"sim/{queue}"]).plaintext


def _rest(token: str) -> Any:
    from rest_framework.test import APIClient

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


def _submit(client: Any, key: str, run_seconds: float = 4, exit_code: int = 3) -> int:
    return submit_job(
        client, "sim", key, lines=LINES, run_seconds=run_seconds, exit_code=exit_code
    )


async def _socket(cluster_id: int, token: str) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(
        application,
        f"/ws/clusters/{cluster_id}/",
        headers=[
            (b"origin", b"http://localhost"),
            (b"host", b"localhost"),
            (b"authorization", f"Bearer {token}".encode()),
        ],
    )
    connected, _ = await communicator.connect()
    assert connected
    return communicator


async def _follow(
    communicator: WebsocketCommunicator, ask: dict[str, Any], timeout: float = 30
) -> list[tuple[float, dict[str, Any]]]:
    """Send ``ask``; the log messages of its request (each with when it came),
    up to its ``log.end`` or ``log.error`` (snapshots and deltas are skipped)."""
    await communicator.send_json_to(ask)
    got: list[tuple[float, dict[str, Any]]] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        message = await communicator.receive_json_from(timeout=timeout)
        if not message["type"].startswith("log"):
            continue
        assert message["request"] == ask["request"], message
        got.append((time.monotonic(), message))
        if message["type"] in ("log.end", "log.error"):
            return got
    raise AssertionError(f"no log.end in {timeout}s: {got}")


def _text(got: list[tuple[float, dict[str, Any]]]) -> str:
    return "".join(m["data"] for _, m in got if m["type"] == "log")


def _unstamped(text: str) -> list[str]:
    """Each line without its kubelet timestamp (which every line has)."""
    lines = text.splitlines()
    for line in lines:
        assert re.match(r"^\d{4}-\d\d-\d\dT[\d:.]+Z ", line), line
    return [line.split(" ", 1)[1] for line in lines]


def test_a_job_log_is_followed_live_then_read_kept_and_scoped(cluster, monkeypatch):
    # placed by the beat of Running only, so that it has no pod before
    for name in ("pass_after_commit", "reconcile_after_commit"):
        monkeypatch.setattr(
            f"apps.scheduling.services.followups.{name}", lambda cluster_id: None
        )
    ci_token, other_token = _token("ci-bot", "ci"), _token("other-bot", "other")
    client = _rest(ci_token)
    request_id = _submit(client, "ws-follow-1")

    async def before_it_runs() -> tuple[list, list, list]:
        ci = await _socket(cluster.pk, ci_token)
        other = await _socket(cluster.pk, other_token)
        try:
            # no pod yet: said so, nothing else
            no_pod = await _follow(ci, {"type": "logs.follow", "request": request_id})
            # a token limited to another queue: refused, naming the request
            refused = await _follow(
                other, {"type": "logs.follow", "request": request_id}
            )
            missing = await _follow(ci, {"type": "logs.follow", "request": 999999})
            return no_pod, refused, missing
        finally:
            await ci.disconnect()
            await other.disconnect()

    no_pod, refused, missing = async_to_sync(before_it_runs)()
    assert [m.get("code") for _, m in no_pod] == ["no_log"], no_pod
    assert "no pod yet" in no_pod[0][1]["message"]
    assert [m["type"] for _, m in refused] == ["log.error"]
    assert refused[0][1]["code"] == "permission_denied"
    assert f"request {request_id}" in refused[0][1]["message"]
    assert [m["code"] for _, m in missing] == ["not_found"]
    assert "request 999999" in missing[0][1]["message"]

    with Running(cluster):
        wait_running(client, request_id, timeout=60)

        async def while_it_runs() -> tuple[list, list]:
            ci = await _socket(cluster.pk, ci_token)
            other = await _socket(cluster.pk, other_token)
            try:
                refused = await _follow(
                    other, {"type": "logs.follow", "request": request_id}
                )
                live = await _follow(
                    ci, {"type": "logs.follow", "request": request_id}, timeout=60
                )
                return refused, live
            finally:
                await ci.disconnect()
                await other.disconnect()

        refused_live, live = async_to_sync(while_it_runs)()
        ended = wait_for(
            lambda: (s := request_state(client, request_id))["result"] and s,
            "the request's result (its log kept)",
            timeout=60,
        )

    assert [m["type"] for _, m in refused_live] == ["log.error"]
    assert live[-1][1] == {
        "type": "log.end",
        "request": request_id,
        "source": "live",
        "truncated": False,
    }
    assert _unstamped(_text(live)) == LINES
    # the lines came while the job ran, not all at its end
    data = [at for at, m in live if m["type"] == "log"]
    assert len(data) > 1
    assert data[-1] - data[0] > 1.0
    assert (ended["exit_code"], ended["result"]["reason"]) == (3, "Error")

    # the pod is gone: the kept copy, once, and resumed from a timestamp
    stamps = [line.split(" ", 1)[0] for line in _text(live).splitlines()]

    async def after_it_ended() -> tuple[list, list]:
        ci = await _socket(cluster.pk, ci_token)
        try:
            whole = await _follow(ci, {"type": "logs.follow", "request": request_id})
            resumed = await _follow(
                ci,
                {"type": "logs.follow", "request": request_id, "since_time": stamps[3]},
            )
            return whole, resumed
        finally:
            await ci.disconnect()

    whole, resumed = async_to_sync(after_it_ended)()
    assert whole[-1][1]["source"] == "kept"
    assert whole[-1][1]["truncated"] is False
    assert _text(whole) == _text(live)
    assert _unstamped(_text(resumed)) == LINES[3:]


def test_a_follow_is_stopped_by_logs_stop_and_a_bad_ask_is_answered(cluster):
    ci_token = _token("ci-bot", "ci")
    client = _rest(ci_token)
    request_id = _submit(client, "ws-stop-1", run_seconds=12, exit_code=0)
    with Running(cluster):
        wait_running(client, request_id, timeout=60)

        async def follow_then_stop() -> tuple[list, dict, dict]:
            ci = await _socket(cluster.pk, ci_token)
            try:
                await ci.send_json_to({"type": "logs.follow", "request": request_id})
                first: list[dict] = []
                while not first:
                    message = await ci.receive_json_from(timeout=30)
                    if message["type"] == "log":
                        first.append(message)
                await ci.send_json_to({"type": "logs.stop", "request": request_id})
                await ci.send_json_to({"type": "logs.follow", "request": "x"})
                bad = await ci.receive_json_from(timeout=5)
                while bad["type"] != "log.error":  # a line sent before the stop
                    bad = await ci.receive_json_from(timeout=5)
                await ci.send_json_to(
                    {"type": "logs.follow", "request": request_id, "since_time": "no"}
                )
                bad_time = await ci.receive_json_from(timeout=5)
                # stopped (the asks are handled in order): no line after the
                # answers, though the job prints one every 2 s
                later: list[dict] = []
                deadline = time.monotonic() + 5
                while (left := deadline - time.monotonic()) > 0:
                    if await ci.receive_nothing(timeout=left):
                        break
                    later.append(await ci.receive_json_from())
                assert not [m for m in later if m["type"].startswith("log")], later
                return first, bad, bad_time
            finally:
                await ci.disconnect()

        first, bad, bad_time = async_to_sync(follow_then_stop)()
        client.delete(f"/api/requests/{request_id}/")

    # The first message holds every line printed so far: one, or more when the
    # follow started late on a busy machine (the job prints one every 2 s).
    assert first[0]["data"].splitlines()[0].endswith(LINES[0])
    assert (bad["request"], bad["code"]) == (None, "invalid")
    assert (bad_time["request"], bad_time["code"]) == (request_id, "invalid")
    assert "since_time" in bad_time["message"]
