"""Jobs that simcluster plays out: run time, exit code and log (issue 31).

A pod's first container says in its env (or the pod's annotations) how long
it runs, what it prints and the code it ends with (``simcluster.jobs``); the
simulated kubelet plays that, and ``pods/log`` serves the lines as
kube-apiserver and a kubelet do, to kubectl and to the Python client.
"""

from __future__ import annotations

import itertools
import json
import queue
import random
import re
import subprocess
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from kubernetes import client

from simcluster import jobs, rbac
from simcluster.controllers.binder import read_chip_types
from simcluster.controllers.generator import slice_pod, training_log
from simcluster.podlogs import LogBook, kubelet_timestamp
from simcluster.scenarios import guide
from simcluster.store import Store

NODE = "npu-node-310p-01"
RBAC_GROUP = "rbac.authorization.k8s.io"
LINES = ["epoch 1 loss=0.9100", "epoch 2 loss=0.5200", "epoch 3 loss=0.3000", "done"]
TIMESTAMPED = re.compile(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z) (.*)")


def job_pod(
    name: str,
    *,
    run: str | None = None,
    code: str | None = None,
    log: list[str] | None = None,
    node: str | None = NODE,
    extra: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A pod bound to ``node`` whose container plays the job contract."""
    env = []
    for key, value in (
        (jobs.RUN_ENV, run),
        (jobs.EXIT_ENV, code),
        (jobs.LOG_ENV, None if log is None else "\n".join(log)),
    ):
        if value is not None:
            env.append({"name": key, "value": value})
    spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "containers": [
            {"name": "main", "image": "busybox", "env": env},
            *(extra or []),
        ],
    }
    if node:
        spec["nodeName"] = node
    else:
        spec["nodeSelector"] = {"example.com/no-such": "node"}  # stays unbound
    return {"metadata": {"name": name}, "spec": spec}


def _phase(core: client.CoreV1Api, name: str) -> str:
    return core.read_namespaced_pod(name, "default").status.phase


def _ended(core: client.CoreV1Api, name: str) -> client.V1Pod | None:
    pod = core.read_namespaced_pod(name, "default")
    return pod if pod.status.phase in ("Succeeded", "Failed") else None


def _log(core: client.CoreV1Api, name: str) -> str:
    """The pod's log through the Python client, read raw: kubernetes 36's
    ``read_namespaced_pod_log`` returns the bytes' repr (kubernetes-client/
    python#2596), whatever the server sends."""
    reply = core.read_namespaced_pod_log(name, "default", _preload_content=False)
    return str(reply.data.decode())


def _run(core: client.CoreV1Api, wait_for: Any, body: dict[str, Any]) -> None:
    core.create_namespaced_pod("default", body)
    wait_for(lambda: _phase(core, body["metadata"]["name"]) == "Running")


@pytest.fixture
def http(sim, api_client: client.ApiClient):
    """``http(path, token=None, method="GET", **query)`` -> (status, headers, bytes)."""

    def call(
        path: str, token: str | None = None, method: str = "GET", **query: Any
    ) -> tuple[int, dict[str, str], bytes]:
        url = api_client.configuration.host + path
        if query:
            url += "?" + urlencode(query)
        response = api_client.rest_client.pool_manager.request(
            method,
            url,
            headers={"Authorization": f"Bearer {token or sim.tokens.admin}"},
            preload_content=True,
            retries=False,
        )
        return response.status, dict(response.headers), response.data

    return call


def _log_path(name: str) -> str:
    return f"/api/v1/namespaces/default/pods/{name}/log"


def _status(body: bytes) -> dict[str, Any]:
    status: dict[str, Any] = json.loads(body)
    assert status["kind"] == "Status"
    return status


# -- the job plays out --------------------------------------------------------


def test_a_job_that_exits_3_ends_failed_with_its_exit_code_and_log(
    core: client.CoreV1Api, wait_for
) -> None:
    core.create_namespaced_pod(
        "default", job_pod("train", run="0.5", code="3", log=LINES)
    )

    pod = wait_for(lambda: _ended(core, "train"))

    assert pod.status.phase == "Failed"
    [container] = pod.status.container_statuses
    terminated = container.state.terminated
    assert (terminated.exit_code, terminated.reason) == (3, "Error")
    assert terminated.started_at is not None
    assert terminated.finished_at is not None
    assert container.ready is False
    assert _log(core, "train") == "\n".join(LINES) + "\n"


def test_annotations_state_the_contract_too_and_env_wins(
    core: client.CoreV1Api, wait_for
) -> None:
    by_annotation = job_pod("by-annotation")
    by_annotation["metadata"]["annotations"] = {
        jobs.RUN_ANNOTATION: "0.2",
        jobs.LOG_ANNOTATION: "a\nb",
    }
    both = job_pod("both", code="2", log=["from env"])
    both["metadata"]["annotations"] = {
        jobs.RUN_ANNOTATION: "0.2",
        jobs.EXIT_ANNOTATION: "0",
        jobs.LOG_ANNOTATION: "from annotation",
    }
    core.create_namespaced_pod("default", by_annotation)
    core.create_namespaced_pod("default", both)

    done = wait_for(lambda: _ended(core, "by-annotation"))
    assert done.status.phase == "Succeeded"
    assert done.status.container_statuses[0].state.terminated.reason == "Completed"
    assert _log(core, "by-annotation") == "a\nb\n"
    failed = wait_for(lambda: _ended(core, "both"))
    assert failed.status.container_statuses[0].state.terminated.exit_code == 2
    assert _log(core, "both") == "from env\n"


def test_each_container_prints_its_own_log_and_one_failure_fails_the_pod(
    core: client.CoreV1Api, http, wait_for
) -> None:
    side = {
        "name": "side",
        "image": "busybox",
        "env": [
            {"name": jobs.LOG_ENV, "value": "side car line"},
            {"name": jobs.EXIT_ENV, "value": "1"},
        ],
    }
    core.create_namespaced_pod(
        "default", job_pod("duo", run="0.2", log=["main line"], extra=[side])
    )

    pod = wait_for(lambda: _ended(core, "duo"))

    assert pod.status.phase == "Failed"
    codes = {
        s.name: s.state.terminated.exit_code for s in pod.status.container_statuses
    }
    assert codes == {"main": 0, "side": 1}
    assert http(_log_path("duo"), container="side")[2] == b"side car line\n"
    assert http(_log_path("duo"), container="main")[2] == b"main line\n"


# -- kubectl logs ---------------------------------------------------------------


def test_kubectl_logs_prints_the_lines_with_tail_since_timestamps(
    kubectl, core: client.CoreV1Api, wait_for
) -> None:
    core.create_namespaced_pod("default", job_pod("train", run="0.3", log=LINES))
    wait_for(lambda: _ended(core, "train"))

    def out(*args: str) -> str:
        done = kubectl("logs", "train", *args)
        assert done.returncode == 0, done.stderr
        return done.stdout

    assert out() == "\n".join(LINES) + "\n"
    assert out("--tail=2") == "\n".join(LINES[-2:]) + "\n"
    assert out("--since=1h") == "\n".join(LINES) + "\n"
    assert out("--limit-bytes=12") == ("\n".join(LINES) + "\n")[:12]
    stamped = [TIMESTAMPED.fullmatch(line) for line in out("--timestamps").splitlines()]
    assert all(stamped), stamped
    assert [m.group(2) for m in stamped if m] == LINES


def test_kubectl_logs_follow_prints_lines_as_they_come_and_ends_with_the_container(
    kubeconfig: Path, core: client.CoreV1Api, wait_for
) -> None:
    # given a job that prints a line every 1.25 s and ends at 5 s
    lines = ["starting", "epoch 1 loss=0.9", "epoch 2 loss=0.5", "done"]
    _run(core, wait_for, job_pod("slow", run="5", code="0", log=lines))
    follower = subprocess.Popen(
        ["kubectl", "--kubeconfig", str(kubeconfig), "logs", "-f", "slow"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    arrived: queue.Queue[tuple[float, str]] = queue.Queue()

    def read() -> None:
        assert follower.stdout is not None
        for line in follower.stdout:
            arrived.put((time.monotonic(), line.rstrip("\n")))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        # when the first line has arrived, the job still runs
        first_at, first = arrived.get(timeout=30)
        assert first == "starting"
        assert _phase(core, "slow") == "Running"
        # then kubectl ends by itself once the container has ended
        exit_code = follower.wait(timeout=30)
        reader.join(timeout=10)
    finally:
        follower.kill()
        follower.wait()
    assert exit_code == 0, follower.stderr.read() if follower.stderr else ""
    rest = [arrived.get_nowait() for _ in range(arrived.qsize())]
    assert [text for _, text in rest] == lines[1:]
    # the lines came as they were printed, not all at the end
    assert rest[-1][0] - first_at > 1.0
    assert wait_for(lambda: _ended(core, "slow")).status.phase == "Succeeded"


# -- the log API's options --------------------------------------------------------


def test_tail_since_timestamps_and_limit_bytes_read_as_a_kubelet_reads(
    core: client.CoreV1Api, http, wait_for
) -> None:
    # given a job whose three lines are printed one second apart
    lines = LINES[:3]
    core.create_namespaced_pod("default", job_pod("train", run="3", log=lines))
    wait_for(lambda: _ended(core, "train"))
    path = _log_path("train")
    whole = ("\n".join(lines) + "\n").encode()

    status, headers, body = http(path, timestamps="true")
    assert status == 200
    assert headers["Content-Type"] == "text/plain"
    stamps = [TIMESTAMPED.fullmatch(row) for row in body.decode().splitlines()]
    assert [m.group(2) for m in stamps if m] == lines
    times = [
        datetime.strptime(m.group(1)[:26] + "Z", "%Y-%m-%dT%H:%M:%S.%fZ")
        for m in stamps
        if m
    ]
    assert all(
        0.9 < (b - a).total_seconds() < 1.1 for a, b in itertools.pairwise(times)
    )

    assert http(path, tailLines=2)[2] == "".join(f"{x}\n" for x in lines[1:]).encode()
    assert http(path, tailLines=0)[2] == b""
    assert http(path, limitBytes=5)[2] == whole[:5]
    assert http(path, sinceSeconds=3600)[2] == whole
    # sinceTime counts in whole seconds (the apiserver forwards it as RFC 3339):
    # the second of line 2 brings line 2 back even from its last nanosecond
    second = stamps[1].group(1)[:19] if stamps[1] else ""
    assert http(path, sinceTime=second + ".999999999Z")[2] == whole.split(b"\n", 1)[1]
    future = datetime.now(UTC).replace(year=datetime.now(UTC).year + 1)
    assert http(path, sinceTime=future.strftime("%Y-%m-%dT%H:%M:%SZ"))[2] == b""
    tailed = http(path, tailLines=1, timestamps="true", limitBytes=40)[2].decode()
    assert tailed == body.decode().splitlines()[-1][:40]


def test_follow_streams_chunks_until_the_pod_is_deleted(
    sim, core: client.CoreV1Api, api_client: client.ApiClient, wait_for
) -> None:
    # given a job without an end that printed its lines at start
    _run(core, wait_for, job_pod("server", log=["listening on :8080"]))
    url = api_client.configuration.host + _log_path("server") + "?follow=true"
    response = api_client.rest_client.pool_manager.request(
        "GET",
        url,
        headers={"Authorization": f"Bearer {sim.tokens.admin}"},
        preload_content=False,
        retries=False,
    )
    assert response.status == 200
    assert response.headers["Transfer-Encoding"] == "chunked"
    received: list[bytes] = []
    reader = threading.Thread(
        target=lambda: received.extend(response.stream(1024)), daemon=True
    )
    reader.start()
    try:
        wait_for(lambda: b"".join(received) == b"listening on :8080\n")
        assert reader.is_alive()  # still following: the container runs on

        core.delete_namespaced_pod("server", "default")

        wait_for(lambda: not reader.is_alive(), "the stream ends with the pod")
    finally:
        response.release_conn()
    assert b"".join(received) == b"listening on :8080\n"


# -- errors as kube gives them ------------------------------------------------------


def test_errors_are_the_ones_kube_gives(core: client.CoreV1Api, http) -> None:
    core.create_namespaced_pod("default", job_pod("stuck", node="ghost-node"))
    core.create_namespaced_pod("default", job_pod("unplaced", node=None))
    side = {"name": "side", "image": "busybox"}
    core.create_namespaced_pod(
        "default", job_pod("duo", node="ghost-node", extra=[side])
    )

    def error(name: str, **query: Any) -> tuple[int, str]:
        status, _, body = http(_log_path(name), **query)
        return status, _status(body)["message"]

    assert error("ghost") == (404, 'pods "ghost" not found')
    assert error("stuck") == (
        400,
        'container "main" in pod "stuck" is waiting to start: ContainerCreating',
    )
    assert error("stuck", previous="true") == (
        400,
        'previous terminated container "main" in pod "stuck" not found',
    )
    assert error("duo") == (
        400,
        "a container name must be specified for pod duo, choose one of: [main side]",
    )
    assert error("duo", container="nope") == (
        400,
        "container nope is not valid for pod duo",
    )
    assert error("stuck", tailLines=-1) == (
        422,
        'PodLogOptions "stuck" is invalid: tailLines: Invalid value: -1: '
        "must be greater than or equal to 0",
    )
    assert error("stuck", sinceSeconds=5, sinceTime="2026-01-01T00:00:00Z") == (
        422,
        'PodLogOptions "stuck" is invalid: : Forbidden: at most one of '
        "`sinceTime` or `sinceSeconds` may be specified",
    )
    assert error("stuck", tailLines="ten")[0] == 400
    assert error("stuck", sinceTime="yesterday")[0] == 400
    # a pod on no node: no kubelet to ask, an empty answer
    assert http(_log_path("unplaced"))[:3:2] == (204, b"")
    assert http(_log_path("stuck"), method="POST")[0] == 405


def test_a_log_asked_for_as_text_alone_is_refused_as_kube_refuses_it(
    core: client.CoreV1Api, sim, api_client: client.ApiClient
) -> None:
    """kube-apiserver negotiates pods/log by its serializers (tests/realstack/
    test_portal_logs.py shows the real one refusing text/plain alone)."""
    core.create_namespaced_pod("default", job_pod("stuck", node="ghost-node"))

    def ask(accept: str) -> tuple[int, bytes]:
        response = api_client.rest_client.pool_manager.request(
            "GET",
            api_client.configuration.host + _log_path("stuck"),
            headers={"Authorization": f"Bearer {sim.tokens.admin}", "Accept": accept},
            retries=False,
        )
        return response.status, response.data

    status, body = ask("text/plain")
    assert status == 406
    assert _status(body)["message"] == (
        "only the following media types are accepted: application/json, "
        "application/yaml, application/vnd.kubernetes.protobuf"
    )
    # past the negotiation: the container's own answer (waiting to start)
    for accept in ("*/*", "text/plain, */*", "application/json"):
        assert ask(accept)[0] == 400, accept


def test_previous_of_a_container_that_never_restarted_is_400(
    core: client.CoreV1Api, http, wait_for
) -> None:
    _run(core, wait_for, job_pod("train", log=LINES))
    status, _, body = http(_log_path("train"), previous="true")
    assert status == 400
    assert _status(body)["message"] == (
        'previous terminated container "main" in pod "train" not found'
    )
    assert http(_log_path("train"))[2] == ("\n".join(LINES) + "\n").encode()


def test_pods_log_needs_its_own_rbac_grant(
    sim, core: client.CoreV1Api, http, kubectl, wait_for
) -> None:
    # given a ServiceAccount that may read pods but not their logs
    _run(core, wait_for, job_pod("train", log=LINES))
    user = rbac.service_account_user("default", "ci-reader")
    token = sim.service_account_token("default", "ci-reader")
    role = {
        "apiVersion": f"{RBAC_GROUP}/v1",
        "kind": "Role",
        "metadata": {"name": "reader", "namespace": "default"},
        "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}],
    }
    binding = {
        "apiVersion": f"{RBAC_GROUP}/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "reader", "namespace": "default"},
        "roleRef": {"apiGroup": RBAC_GROUP, "kind": "Role", "name": "reader"},
        "subjects": [
            {"kind": "ServiceAccount", "name": "ci-reader", "namespace": "default"}
        ],
    }
    for obj in (role, binding):
        applied = kubectl("apply", "-f", "-", stdin=json.dumps(obj))
        assert applied.returncode == 0, applied.stderr

    assert http("/api/v1/namespaces/default/pods/train", token=token)[0] == 200
    status, _, body = http(_log_path("train"), token=token)

    assert status == 403
    assert _status(body)["message"] == (
        f'pods "train" is forbidden: User "{user}" cannot get resource "pods/log" '
        'in API group "" in the namespace "default"'
    )
    last = sim.requests_by(user)[-1]
    assert (last.verb, last.resource, last.subresource, last.allowed) == (
        "get",
        "pods",
        "log",
        False,
    )
    # when the role grants pods/log, the same token reads the lines
    role["rules"].append(
        {"apiGroups": [""], "resources": ["pods/log"], "verbs": ["get"]}
    )
    assert kubectl("apply", "-f", "-", stdin=json.dumps(role)).returncode == 0
    assert (
        http(_log_path("train"), token=token)[2] == ("\n".join(LINES) + "\n").encode()
    )
    assert sim.requests_by(user)[-1].allowed is True


def test_discovery_lists_pods_log_as_read_only(http) -> None:
    listed = json.loads(http("/api/v1")[2])["resources"]
    [entry] = [r for r in listed if r["name"] == "pods/log"]
    assert (entry["kind"], entry["verbs"], entry["namespaced"]) == (
        "Pod",
        ["get"],
        True,
    )


# -- the pieces ---------------------------------------------------------------------


def test_a_log_keeps_its_newest_bytes_and_readers_go_on_from_their_cursor() -> None:
    now = [1_000]
    book = LogBook(keep_bytes=30, clock=lambda: now[0])
    book.start("uid", "c1", [(1_000 + i, f"line {i:04d}") for i in range(10)])

    lines, cursor = book.read("c1", 0)
    assert [x.text for x in lines] == [b"line 0000\n"]  # only what is due

    now[0] = 2_000
    lines, cursor = book.read("c1", cursor)
    # ten lines of 10 bytes are due; 30 bytes are kept: the three newest
    assert [x.text for x in lines] == [b"line 0007\n", b"line 0008\n", b"line 0009\n"]
    assert book.read("c1", cursor) == ([], cursor)
    book.forget_pod("uid")
    assert book.read("c1", 0) == ([], 0)


def test_contract_values_are_read_as_a_process_would_report_them() -> None:
    assert kubelet_timestamp(1_796_000_000_000_000_789) == (
        "2026-11-30T00:53:20.000000789Z"
    )
    assert [jobs.parse_exit_code(x) for x in ("3", "256", "-1", "x", None)] == [
        3,
        0,
        255,
        0,
        0,
    ]
    assert [jobs.parse_run_seconds(x) for x in ("0.5", "-2", "nan", "", None)] == [
        0.5,
        0.0,
        None,
        None,
        None,
    ]
    assert jobs.split_lines("a\nb\n") == ["a", "b"]
    assert jobs.schedule(["a", "b"], 2.0, 10) == [(10, "a"), (1_000_000_010, "b")]
    assert jobs.schedule(["a", "b"], None, 10) == [(10, "a"), (10, "b")]


def test_the_demo_generators_jobs_end_some_with_errors_and_log_epochs() -> None:
    rng = random.Random(31)
    results = [training_log(rng, f"demo-{n}") for n in range(70)]
    codes = {code for code, _ in results}
    assert 0 in codes
    assert codes - {0}
    assert all(any(line.startswith("epoch 1/") for line in log) for _, log in results)

    code, log = results[0]
    store = Store()
    guide().load(store)
    chip_type = read_chip_types(store)[0]
    pod = slice_pod(
        "demo-x", "demo", chip_type, None, run_seconds=20, exit_code=code, log=log
    )
    job = jobs.read_job(pod)
    assert (job.run_seconds, job.exit_code("npu-container")) == (20.0, code)
    assert job.lines["npu-container"] == log
    assert pod["spec"]["restartPolicy"] == "Never"
