"""A job's log followed as it runs, and a long poll, through the ASGI app on simcluster.

Sync and the beat run in threads (``harness.portal.Running``); the requests
go through Django's ASGI handler (``AsyncClient``), where a followed log is
streamed from simcluster's ``pods/log`` by aiohttp and a long poll waits on
the event loop. The job is simcluster's contract (docs/simcluster.md): it
prints its lines over its run and exits with the code it is given.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.test import AsyncClient

from apps.accounts.services import token_create, user_ensure
from apps.scheduling.models import Queue
from harness.portal import Running, request_state, submit_job, wait_running
from tests.polling import wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

LINES = [f"epoch {i} loss {1 / (i + 1):.3f}" for i in range(6)]


def _submit(client: Any, run_seconds: float, exit_code: int, key: str) -> int:
    return submit_job(
        client, "sim", key, lines=LINES, run_seconds=run_seconds, exit_code=exit_code
    )


@pytest.fixture
def ci(live):
    """A CI token's REST client and the token itself (for the ASGI client)."""
    from rest_framework.test import APIClient

    Queue.objects.create(cluster=live.cluster, name="ci", open_to_all=True)
    user = user_ensure(username="ci-bot", role="ci", is_service_account=True)
    token = token_create(user=user, queues=["sim/ci"]).plaintext
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client, token


async def _get(token: str, url: str) -> Any:
    """GET ``url`` through Django's ASGI handler, as the token's holder."""
    return await AsyncClient().get(url, headers={"authorization": f"Bearer {token}"})


async def _read(response: Any) -> list[tuple[float, bytes]]:
    """The chunks of a streamed answer, each with when it came."""
    assert response.streaming, (response.status_code, response.content)
    return [(time.monotonic(), chunk) async for chunk in response.streaming_content]


def test_a_followed_log_streams_its_lines_as_they_come_and_ends_with_the_job(live, ci):
    client, token = ci
    with Running(live.cluster):
        # Long enough that a follow starting late on a busy machine (the
        # request is seen Running a few seconds after its pod starts) still
        # has lines to wait for: 6 s failed once with the follow 5 s late.
        request_id = _submit(client, run_seconds=12, exit_code=3, key="follow-1")
        wait_running(client, request_id, timeout=60)

        async def follow() -> tuple[Any, list[tuple[float, bytes]]]:
            response = await _get(
                token, f"/api/requests/{request_id}/logs/?follow=true"
            )
            return response, await _read(response)

        response, chunks = async_to_sync(follow)()
        shown = wait_for(
            lambda: (s := request_state(client, request_id))["result"] and s,
            "the request's result",
            timeout=30,
        )

    assert response.status_code == 200
    assert response["X-Log-Source"] == "live"
    assert b"".join(c for _, c in chunks).decode() == "".join(
        f"{line}\n" for line in LINES
    )
    # lines came while the job ran, not all at its end
    assert len(chunks) > 1
    assert chunks[-1][0] - chunks[0][0] > 1.0
    assert shown["state"] == "failed"
    assert (shown["exit_code"], shown["result"]["reason"]) == (3, "Error")
    # and once its pod is gone the kept copy reads the same
    kept = client.get(f"/api/requests/{request_id}/logs/?tail_lines=2")
    assert kept["X-Log-Source"] == "kept"
    assert kept.content.decode() == f"{LINES[-2]}\n{LINES[-1]}\n"


def test_a_long_poll_answers_when_the_state_is_reached_or_at_its_timeout(live, ci):
    client, token = ci

    async def wait(request_id: int, wanted: str, timeout: int) -> tuple[float, dict]:
        started = time.monotonic()
        response = await _get(
            token, f"/api/requests/{request_id}/?wait={wanted}&timeout={timeout}"
        )
        assert response.status_code == 200
        body = (
            b"".join([c async for c in response.streaming_content])
            if response.streaming
            else response.content
        )
        return time.monotonic() - started, json.loads(body)

    with Running(live.cluster):
        request_id = _submit(client, run_seconds=4, exit_code=0, key="wait-1")
        took, running = async_to_sync(wait)(request_id, "running", 60)
        assert running["state"] == "running", running
        # not finished within a second: the answer comes at the timeout
        took, still = async_to_sync(wait)(request_id, "finished", 1)
        assert still["state"] == "running"
        assert 0.9 <= took < 10
        took, finished = async_to_sync(wait)(request_id, "finished", 60)

    assert finished["state"] == "succeeded"
    assert took < 30  # answered when it ended, not at the minute
    assert finished["exit_code"] in (0, None)  # the result may follow the state


def test_a_followed_log_is_sent_after_djangos_request_has_ended(live, ci):
    """Through the whole ASGI application (as uvicorn runs it): Django's
    request ends (its thread and ``request_finished`` go) before the log's
    lines are sent, so a follower holds no thread (apps.common.detached)."""
    from asgiref.testing import ApplicationCommunicator
    from django.core.signals import request_finished

    from vnpuportal.asgi import application

    client, token = ci
    finished: list[float] = []

    def on_finished(**kwargs: Any) -> None:
        finished.append(time.monotonic())

    async def follow(request_id: int) -> tuple[dict, list[tuple[float, bytes]]]:
        finished.clear()
        asgi = ApplicationCommunicator(
            application,
            {
                "type": "http",
                "asgi": {"version": "3.0"},
                "http_version": "1.1",
                "method": "GET",
                "scheme": "http",
                "path": f"/api/requests/{request_id}/logs/",
                "raw_path": f"/api/requests/{request_id}/logs/".encode(),
                "query_string": b"follow=true",
                "headers": [
                    (b"host", b"testserver"),
                    (b"authorization", f"Bearer {token}".encode()),
                ],
                "client": ("127.0.0.1", 50000),
                "server": ("testserver", 80),
            },
        )
        await asgi.send_input({"type": "http.request", "body": b""})
        start = await asgi.receive_output(timeout=30)
        chunks = []
        while True:
            message = await asgi.receive_output(timeout=30)
            chunks.append((time.monotonic(), message.get("body", b"")))
            if not message.get("more_body"):
                break
        return start, chunks

    request_finished.connect(on_finished)
    try:
        with Running(live.cluster):
            request_id = _submit(client, run_seconds=4, exit_code=0, key="detached-1")
            wait_running(client, request_id, timeout=60)
            start, chunks = async_to_sync(follow)(request_id)
    finally:
        request_finished.disconnect(on_finished)

    assert start["status"] == 200, start
    assert b"".join(c for _, c in chunks).decode() == "".join(
        f"{line}\n" for line in LINES
    )
    assert finished, "Django's request never finished"
    # the request ended before the job's later lines were even printed
    assert finished[0] < chunks[-1][0] - 1.0
