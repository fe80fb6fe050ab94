"""A request's result and its kept log: kept before the pod goes, read like a live one.

Against the fake API server (the order of calls is the point: the log is
read before the pod is deleted). The live log, following, the long poll and
simcluster's real pods are in test_request_logs_live.py; the `vnpu` command
end to end in tests/cli.
"""

from __future__ import annotations

import json

import pytest
from django.utils import timezone

from apps.inventory.models import Slice
from apps.scheduling.choices import RequestState
from apps.scheduling.models import RequestLog
from apps.scheduling.services.requests import request_cancel
from tests.scheduling.helpers import run_pass
from tests.scheduling.test_passes import _bind

pytestmark = pytest.mark.django_db

STAMPS = (
    "2026-12-06T10:00:00.100000001Z",
    "2026-12-06T10:00:01.200000002Z",
    "2026-12-06T10:00:02.300000003Z",
)
LINES = ("epoch 1 loss 0.9", "epoch 2 loss 0.5", "boom: CUDA-like error")
LOG = "".join(f"{t} {line}\n" for t, line in zip(STAMPS, LINES, strict=True))


def _running(world, operator, fake_ops):
    world.chips("Ascend310P", 1, node="npu-node-310p-01")
    request = world.request(operator, memory=5000, queue="default")
    run_pass(world.cluster)
    _bind(world, request)
    run_pass(world.cluster)
    request.refresh_from_db()
    assert request.state == RequestState.RUNNING
    fake_ops.logs[("ci", request.pod_name, "main")] = LOG.encode()
    return request


def _exit(fake_ops, request, code: int, reason: str = "Error") -> None:
    pod = fake_ops.pods[("ci", request.pod_name)]
    pod["status"] = {
        "phase": "Succeeded" if code == 0 else "Failed",
        "containerStatuses": [
            {
                "name": "main",
                "state": {
                    "terminated": {
                        "exitCode": code,
                        "reason": reason,
                        "finishedAt": "2026-12-06T10:00:03Z",
                    }
                },
            }
        ],
    }
    Slice.objects.filter(pod_name=request.pod_name).delete()


def test_a_job_that_exits_3_fails_with_its_code_and_its_log_is_kept(
    world, operator, fake_ops, operator_client
):
    request = _running(world, operator, fake_ops)
    _exit(fake_ops, request, 3)

    run_pass(world.cluster)

    request.refresh_from_db()
    assert request.state == RequestState.FAILED
    assert request.exit_code == 3
    assert request.result == {
        "exit_code": 3,
        "reason": "Error",
        "finished_at": "2026-12-06T10:00:03Z",
        "containers": [
            {
                "name": "main",
                "exit_code": 3,
                "reason": "Error",
                "finished_at": "2026-12-06T10:00:03Z",
            }
        ],
    }
    assert request.log_kept_at is not None
    shown = operator_client.get(f"/api/requests/{request.pk}/").json()
    assert (shown["exit_code"], shown["result"]["reason"]) == (3, "Error")

    # whatever the client accepts (curl's */*, text/plain, JSON first)
    for accept in ("*/*", "text/plain", "application/json, text/plain"):
        answer = operator_client.get(
            f"/api/requests/{request.pk}/logs/", HTTP_ACCEPT=accept
        )
        assert answer.status_code == 200, accept
        assert answer["Content-Type"] == "text/plain; charset=utf-8"
    assert answer["X-Log-Source"] == "kept"
    assert answer.content.decode() == "".join(f"{line}\n" for line in LINES)


def test_a_released_jobs_log_is_read_before_its_pod_is_deleted(
    world, operator, fake_ops, operator_client
):
    request = _running(world, operator, fake_ops)

    request_cancel(request=request, actor=operator, token=None)
    run_pass(world.cluster)

    calls = [c[0] for c in fake_ops.calls if c[2] == request.pod_name]
    assert calls.index("pod_log") < calls.index("delete_pod")
    request.refresh_from_db()
    assert request.state == RequestState.CANCELLED
    assert request.result["reason"] == "Cancelled"
    assert request.exit_code is None
    # the pod is gone; the log is still there
    assert ("ci", request.pod_name) not in fake_ops.pods
    answer = operator_client.get(f"/api/requests/{request.pk}/logs/?tail_lines=1")
    assert answer.content.decode() == f"{LINES[-1]}\n"


def test_a_job_killed_at_its_time_limit_says_deadline_exceeded(
    world, operator, fake_ops
):
    request = _running(world, operator, fake_ops)
    type(request).objects.filter(pk=request.pk).update(
        expires_at=timezone.now() - timezone.timedelta(seconds=1)
    )

    run_pass(world.cluster)

    request.refresh_from_db()
    assert request.state == RequestState.EXPIRED
    assert request.result["reason"] == "DeadlineExceeded"
    assert RequestLog.objects.get(request=request).text == LOG


def test_the_kept_log_is_filtered_as_the_api_server_filters_a_live_one(
    world, operator, fake_ops, operator_client
):
    request = _running(world, operator, fake_ops)
    _exit(fake_ops, request, 0, "Completed")
    run_pass(world.cluster)
    url = f"/api/requests/{request.pk}/logs/"

    def read(query: str) -> str:
        answer = operator_client.get(f"{url}?{query}")
        assert answer.status_code == 200, answer.content
        return answer.content.decode()

    assert read("timestamps=true") == LOG
    assert read("tail_lines=2") == f"{LINES[1]}\n{LINES[2]}\n"
    assert read("tail_lines=0") == ""
    # at or after the stamp, as the kubelet does (a follower resumes from it)
    assert read(f"since_time={STAMPS[1][:19]}Z") == f"{LINES[1]}\n{LINES[2]}\n"
    assert read("since_seconds=60") == ""  # all of it is older than a minute
    assert read("container=main&tail_lines=1&timestamps=true") == (
        f"{STAMPS[2]} {LINES[2]}\n"
    )


def test_a_log_longer_than_the_limit_keeps_its_tail_and_says_so(
    world, operator, fake_ops, operator_client, settings
):
    settings.REQUEST_LOG_KEEP_BYTES = 100
    request = _running(world, operator, fake_ops)
    many = "".join(f"2026-12-06T10:00:{i:02d}.000000000Z line {i}\n" for i in range(30))
    fake_ops.logs[("ci", request.pod_name, "main")] = many.encode()
    _exit(fake_ops, request, 0, "Completed")

    run_pass(world.cluster)

    kept = RequestLog.objects.get(request=request)
    assert kept.truncated
    assert len(kept.text.encode()) <= 100
    assert many.endswith(kept.text)
    answer = operator_client.get(f"/api/requests/{request.pk}/logs/")
    assert answer["X-Log-Truncated"] == "true"
    text = answer.content.decode()
    assert text.startswith("[vnpu-portal] log truncated: only its last 100 bytes")
    assert text.endswith("line 29\n")


def test_a_pod_gone_before_its_log_was_kept_is_said_once_not_waited_for(
    world, operator, fake_ops, operator_client
):
    request = _running(world, operator, fake_ops)
    del fake_ops.pods[("ci", request.pod_name)]
    Slice.objects.filter(pod_name=request.pod_name).delete()

    run_pass(world.cluster)

    request.refresh_from_db()
    assert request.state == RequestState.FAILED
    assert request.result["reason"] == "Deleted"
    answer = operator_client.get(f"/api/requests/{request.pk}/logs/")
    assert answer.status_code == 404
    assert answer.json()["code"] == "no_log"
    assert "gone before its log could be kept" in answer.json()["message"]


def test_a_request_that_never_had_a_pod_has_no_log_and_bad_queries_name_the_field(
    world, operator, operator_client
):
    request = world.request(operator, memory=5000, queue="default")
    url = f"/api/requests/{request.pk}/logs/"

    answer = operator_client.get(url)
    assert answer.status_code == 404
    assert answer.json()["code"] == "no_log"
    assert "no pod yet (pending)" in answer.json()["message"]
    # a client that asked for text gets the same error body, as text
    answer = operator_client.get(url, HTTP_ACCEPT="text/plain")
    assert answer.status_code == 404
    assert json.loads(answer.content)["code"] == "no_log"

    for query, field in [
        ("tail_lines=-1", "tail_lines"),
        ("tail_lines=many", "tail_lines"),
        ("since_seconds=0", "since_seconds"),
        ("since_time=yesterday", "since_time"),
        ("since_seconds=5&since_time=2026-12-06T10:00:00Z", "since_time"),
        ("container=Main_1", "container"),
        ("follow=perhaps", "follow"),
    ]:
        answer = operator_client.get(f"{url}?{query}")
        assert answer.status_code == 400, query
        assert field in answer.json()["errors"], (query, answer.json())


def test_a_long_polls_bad_input_names_the_field_and_a_state_reached_answers_at_once(
    world, operator, operator_client
):
    request = world.request(operator, memory=5000, queue="default")
    url = f"/api/requests/{request.pk}/"
    for query, field in [
        ("wait=done", "wait"),
        ("wait=running&timeout=0", "timeout"),
        ("wait=running&timeout=301", "timeout"),
        ("wait=running&timeout=soon", "timeout"),
    ]:
        answer = operator_client.get(f"{url}?{query}")
        assert answer.status_code == 400, query
        assert field in answer.json()["errors"], (query, answer.json())
    # already there (an ended request can never run): it answers at once
    request_cancel(request=request, actor=operator, token=None)
    for wanted in ("running", "finished"):
        answer = operator_client.get(f"{url}?wait={wanted}&timeout=300")
        assert answer.status_code == 200
        assert answer.json()["state"] == "cancelled"


def test_a_pod_deleted_after_its_job_ended_counts_by_the_jobs_exit_code(
    world, operator, fake_ops
):
    request = _running(world, operator, fake_ops)
    _exit(fake_ops, request, 0, "Completed")
    pod = fake_ops.pods[("ci", request.pod_name)]
    # someone deletes the pod after its container completed: the phase still
    # says Running (a sidecar, or the kubelet not yet caught up)
    pod["status"]["phase"] = "Running"
    pod["metadata"]["deletionTimestamp"] = "2026-12-06T10:00:04Z"

    run_pass(world.cluster)

    request.refresh_from_db()
    assert request.state == RequestState.SUCCEEDED
    assert request.reason == "the job exited 0; its pod is being deleted"
    assert (request.exit_code, request.result["reason"]) == (0, "Completed")
