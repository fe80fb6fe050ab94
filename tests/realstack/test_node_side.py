"""The node side under the real Volcano: a terminating pod's room.

Volcano maps a terminating pod to Releasing, which holds no device room in its
snapshot, so it binds a pending pod onto the chip at once. The device plugin's
Allocate checks no usage (ascend-device-plugin v1.4.0, ``internal/server/
server.go`` ``Allocate``): the pod is admitted. The chip is hard-split and the
terminating pod still holds its vNPU, so the vNPU cannot be created and the
container fails to start (INFERRED, docs/scheduler-behaviour.md): with
restartPolicy Never the pod ends Failed, its container ``StartError``.
"""

from __future__ import annotations

import pytest

from kubestack.scenarios import slice_pod, wait_running
from tests.polling import wait_for
from tests.realstack.accounting import chips_by_uuid, usage_by_uuid

pytestmark = [pytest.mark.realstack, pytest.mark.slow]

VIR04 = 12288


def test_volcano_binds_into_a_terminating_pods_room_and_the_vnpu_is_not_made(
    kube_stack, kube_core, cleanup
):
    chips = chips_by_uuid(kube_core, ("Ascend310P",))
    used = usage_by_uuid(kube_core, ("Ascend310P",))
    # as many vir04 as the 310P chips hold (sick or not: Volcano checks no
    # health): then none has room for another
    room = sum(
        (c["memory"] - used.get(u, {}).get("memory_used", 0)) // VIR04
        for u, c in chips.items()
    )
    assert room > 0
    names = [f"fill-{i}" for i in range(room)]
    cleanup.extend(("default", n) for n in [*names, "taker"])
    kube_stack.create_objects([slice_pod(n, "Ascend310P", VIR04) for n in names])
    wait_running(kube_stack, [("default", n) for n in names], timeout=120)

    victim = names[0]
    kube_stack.kubectl("delete", "pod", victim, "--wait=false")  # 30 s grace
    kube_stack.create_objects([slice_pod("taker", "Ascend310P", VIR04)])

    def ended() -> object:
        pod = kube_core.read_namespaced_pod("taker", "default")
        return pod if pod.status.phase in ("Failed", "Running") else None

    taker = wait_for(ended, "the taker bound and started or failed", timeout=25)
    victim_pod = kube_core.read_namespaced_pod(victim, "default")
    assert victim_pod.metadata.deletion_timestamp, "still terminating"
    assert taker.status.phase == "Failed"
    assert taker.status.reason is None  # admitted: no UnexpectedAdmissionError
    assert taker.metadata.annotations["hami.io/bind-phase"] == "success"
    (container,) = taker.status.container_statuses
    assert container.state.terminated.reason == "StartError"
    assert container.state.terminated.exit_code == 128
    assert "cannot hold 12288 MB" in container.state.terminated.message
