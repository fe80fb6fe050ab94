"""The job contract on the real control plane: a pod's container ends with its
exit code in its real container status, and ``kubectl logs`` (with ``-f``,
``--timestamps``, ``--tail``) reads its lines through the real API server,
which proxies to the node's kubelet endpoint (kubestack/kubeletfront.py in
front of KWOK's kubelet server; the lines written by kubestack/jobplayer.py).
"""

from __future__ import annotations

import itertools
import queue
import subprocess
import threading
from datetime import datetime

import pytest

from kubestack.scenarios import slice_pod
from tests.polling import wait_for

pytestmark = [pytest.mark.realstack, pytest.mark.slow]

LINES = ["alpha", "beta", "gamma"]
# The lines are due at 0, 1.5 and 3 s, the end at 4.5 s: room for kubectl to
# start following before the end on a busy machine.
RUN_SECONDS = 4.5


def _job_pod(name: str, run: str, code: str, lines: list[str]) -> dict:
    pod = slice_pod(name, "Ascend310P", 3072)
    pod["spec"]["containers"][0]["env"] = [
        {"name": "SIMCLUSTER_RUN_SECONDS", "value": run},
        {"name": "SIMCLUSTER_EXIT_CODE", "value": code},
        {"name": "SIMCLUSTER_LOG", "value": "\n".join(lines)},
    ]
    return pod


def _container(kube_core, name: str):
    pod = kube_core.read_namespaced_pod(name, "default")
    statuses = pod.status.container_statuses or []
    return pod, (statuses[0] if statuses else None)


def _follow(
    kubeconfig, kubectl_path, name: str
) -> tuple[subprocess.Popen, queue.Queue]:
    """``kubectl logs -f``, its output lines handed over as they arrive."""
    follower = subprocess.Popen(
        [str(kubectl_path), "--kubeconfig", str(kubeconfig), "logs", "-f", name],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    arrived: queue.Queue = queue.Queue()

    def read() -> None:
        for line in follower.stdout:
            arrived.put(line)
        arrived.put(None)

    threading.Thread(target=read, daemon=True).start()
    return follower, arrived


def _stamp(text: str) -> datetime:
    """A kubelet timestamp (nine fraction digits) as a datetime (to the µs)."""
    return datetime.fromisoformat(text[:26] + "+00:00")


def test_a_job_that_exits_3_fails_and_kubectl_logs_reads_and_follows_its_lines(
    kube_stack, kube_core, stack_kubeconfig, cleanup, live_logs
):
    cleanup.extend([("default", "job-exit3"), ("default", "job-at-once")])
    kube_stack.create_objects(
        [
            _job_pod("job-exit3", str(RUN_SECONDS), "3", LINES),
            # A run of 0 s: both lines at the start, the end at once; the log
            # is whole before the pod is seen ended.
            _job_pod("job-at-once", "0", "0", ["first", "second"]),
        ]
    )

    def running():
        _, status = _container(kube_core, "job-exit3")
        return status is not None and status.state.running is not None

    wait_for(running, "job-exit3's container running", timeout=60)
    follower, arrived = _follow(stack_kubeconfig, kube_stack.kubectl_path, "job-exit3")
    try:
        first = arrived.get(timeout=20)
        # a line came through the follow while the container still ran
        assert first == "alpha\n"
        _, status = _container(kube_core, "job-exit3")
        assert status.state.running is not None, "the container ended already"
        assert follower.poll() is None

        def ended():
            pod, status = _container(kube_core, "job-exit3")
            return pod if status and status.state.terminated else None

        pod = wait_for(ended, "job-exit3's container terminated", timeout=30)
        # the follow ends when the container has ended, with every line
        assert follower.wait(timeout=10) == 0, follower.stderr.read()
    finally:
        follower.kill()
    followed = [first]
    while (line := arrived.get(timeout=5)) is not None:
        followed.append(line)
    assert followed == [f"{line}\n" for line in LINES]

    terminated = pod.status.container_statuses[0].state.terminated
    assert (terminated.exit_code, terminated.reason) == (3, "Error")
    assert pod.status.phase == "Failed"

    def logs(*args: str) -> str:
        return kube_stack.kubectl("logs", "job-exit3", *args).stdout

    assert logs() == "alpha\nbeta\ngamma\n"
    assert logs("--tail=1") == "gamma\n"
    assert logs("--tail=2") == "beta\ngamma\n"
    assert logs("-f") == "alpha\nbeta\ngamma\n"  # ended: answers at once
    assert logs("--limit-bytes=8") == "alpha\nbe"
    stamped = logs("--timestamps").splitlines()
    assert [line.split(" ", 1)[1] for line in stamped] == LINES
    stamps = [line.split(" ", 1)[0] for line in stamped]
    assert all(len(s) == 30 and s.endswith("Z") for s in stamps), stamps
    # line i is printed at start + i * run / n: 1.5 s apart, from the start
    moments = [_stamp(s) for s in stamps]
    gaps = [(b - a).total_seconds() for a, b in itertools.pairwise(moments)]
    assert gaps == [1.5, 1.5]
    started = terminated.started_at
    assert 0 <= (moments[0] - started).total_seconds() < 1.5

    def at_once_ended():
        pod, status = _container(kube_core, "job-at-once")
        return pod if status and status.state.terminated else None

    pod = wait_for(at_once_ended, "job-at-once ended", timeout=60)
    terminated = pod.status.container_statuses[0].state.terminated
    assert (pod.status.phase, terminated.exit_code, terminated.reason) == (
        "Succeeded",
        0,
        "Completed",
    )
    assert kube_stack.kubectl("logs", "job-at-once").stdout == "first\nsecond\n"


def test_a_pod_without_output_has_an_empty_log_and_no_previous_instance(
    kube_stack, cleanup
):
    cleanup.append(("default", "quiet"))
    kube_stack.create_objects([slice_pod("quiet", "Ascend310P", 3072)])
    wait_for(
        lambda: (
            kube_stack.kubectl(
                "get", "pod", "quiet", "-o", "jsonpath={.status.phase}"
            ).stdout
            == "Running"
        ),
        "quiet running",
        timeout=60,
    )
    assert kube_stack.kubectl("logs", "quiet").stdout == ""
    previous = kube_stack.kubectl("logs", "quiet", "--previous", check=False)
    assert previous.returncode != 0
    assert (
        'previous terminated container "npu-container" in pod "quiet" not found'
        in previous.stderr
    )


def test_after_api_server_restarts_a_follow_waits_for_kwok_and_then_streams(
    kube_stack, kube_core, stack_kubeconfig, cleanup
):
    """Three hard restarts leave KWOK's Logs informer backing off (fresh-clone
    runs f12 and f13: a follow got the whole log at the end, in one chunk);
    ``wait_logs_served`` returns once KWOK serves new Logs objects again,
    leaves no probe behind, and a follow begun then streams."""
    for _ in range(3):
        kube_stack.restart_apiserver(hard=True)
    waited = kube_stack.wait_logs_served()
    assert waited >= 0
    probes = kube_stack.kubectl(
        "get", "logs.kwok.x-k8s.io", "-n", "default", "-o", "name"
    ).stdout
    assert "kubestack-probe" not in probes

    cleanup.append(("default", "job-after-restarts"))
    kube_stack.create_objects(
        [_job_pod("job-after-restarts", "6", "0", ["one", "two", "three", "four"])]
    )

    def running():
        _, status = _container(kube_core, "job-after-restarts")
        return status is not None and status.state.running is not None

    wait_for(running, "the container running", timeout=60)
    follower, arrived = _follow(
        stack_kubeconfig, kube_stack.kubectl_path, "job-after-restarts"
    )
    try:
        assert arrived.get(timeout=20) == "one\n"
        # the first line came while the container still ran: streamed
        _, status = _container(kube_core, "job-after-restarts")
        assert status.state.running is not None, "the container ended already"
        assert follower.wait(timeout=30) == 0, follower.stderr.read()
    finally:
        follower.kill()
