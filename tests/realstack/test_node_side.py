"""The node side and the conf under the real Volcano.

A terminating pod's room:

Volcano maps a terminating pod to Releasing, which holds no device room in its
snapshot, so it binds a pending pod onto the chip at once. The device plugin's
Allocate checks no usage (ascend-device-plugin v1.4.0, ``internal/server/
server.go`` ``Allocate``): the pod is admitted. The chip is hard-split and the
terminating pod still holds its vNPU, so the vNPU cannot be created and the
container fails to start (INFERRED, docs/scheduler-behaviour.md): with
restartPolicy Never the pod ends Failed, its container ``StartError``.
"""

from __future__ import annotations

import random

import pytest

from apps.inventory.hami.annotations import allocated_key
from apps.inventory.hami.deviceconfig import parse_device_config
from apps.inventory.hami.template_rule import Scheduler, fit_template
from kubestack.scenarios import slice_pod, wait_running
from simcluster.controllers.placement import (
    DeviceRequest,
    pick_on_node,
    volcano_rules,
)
from tests.polling import wait_for
from tests.realstack.accounting import chips_by_uuid, simcluster_node, usage_by_uuid

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


def _chips_taken(kube_stack, kube_core, prefix: str, count: int) -> list[str]:
    """Create ``count`` vir01 pods one at a time; the chip each was bound to."""
    chips = []
    for i in range(count):
        name = f"{prefix}-{i}"
        kube_stack.create_objects([slice_pod(name, "Ascend310P", 3072)])
        wait_running(kube_stack, [("default", name)], timeout=60)
        pod = kube_core.read_namespaced_pod(name, "default")
        chips.append(
            pod.metadata.annotations[allocated_key("Ascend310P")].split(",")[0]
        )
    return chips


def test_the_real_volcano_takes_any_fitting_chip_even_with_binpack(
    kube_stack, kube_core, cleanup
):
    """Observed on v1.15.1: ``SchedulePolicy: binpack`` with ``ScheduleWeight:
    10`` does not pack a node's chips. The weight scores nodes
    (``deviceshare.go``, ``getDeviceScore``); the chip is chosen again at
    ``Allocate`` (``device_info.go``, ``selectDevices(pod, ads.Policy)``), where
    the policy ``ScoreNode`` recorded is not seen (INFERRED: a different copy of
    the node's devices), so every chip scores 0 and the first fitting one in
    the snapshot's order is taken. Six vir01 one after another all on the
    fullest chip would be (1/4)^6 by chance; binpack would put them there."""
    configmap = ("volcano-scheduler-configmap", "volcano-system")
    original = kube_core.read_namespaced_config_map(*configmap).data
    conf = original["volcano-scheduler.conf"]
    anchor = "      deviceshare.KnownGeometriesCMName: hami-scheduler-device\n"
    assert anchor in conf
    names = [f"packed-{i}" for i in range(6)]
    cleanup.extend(("default", n) for n in names)
    try:
        text = conf.replace(
            anchor,
            anchor
            + "      deviceshare.SchedulePolicy: binpack\n"
            + "      deviceshare.ScheduleWeight: 10\n",
        )
        kube_core.patch_namespaced_config_map(
            *configmap, {"data": {"volcano-scheduler.conf": text}}
        )
        kube_stack.restart_volcano_scheduler()
        chips = _chips_taken(kube_stack, kube_core, "packed", 6)
        assert len(set(chips)) > 1, chips
    finally:
        kube_core.patch_namespaced_config_map(*configmap, {"data": original})
        kube_stack.restart_volcano_scheduler()


def test_the_real_volcano_puts_each_pod_on_a_chip_simclusters_model_allows(
    kube_stack, kube_core, cleanup
):
    """Differential, where Volcano is not deterministic (the guide's conf: no
    chip policy, so any fitting chip, in Go's map order): before each pod,
    simcluster's Volcano model (``pick_on_node`` under ``volcano_rules``, ties
    at random) is asked for every chip it could pick, from the real cluster's
    usage; the chip the real Volcano binds the pod to is always one of them."""
    text = kube_core.read_namespaced_config_map(
        "hami-scheduler-device", "kube-system"
    ).data["device-config.yaml"]
    (chip_type,) = [
        c
        for c in parse_device_config(text).chip_types()
        if c.common_word == "Ascend310P"
    ]
    rules = volcano_rules("", 0)
    for step, memory in enumerate([12288, 6144, 3072, 12288, 6144, 3072]):
        node = simcluster_node(kube_core, "npu-node-310p-01", "Ascend310P")
        fit = fit_template(chip_type, memory, scheduler=Scheduler.VOLCANO)
        request = DeviceRequest(0, chip_type, 1, memory)
        possible = {
            pick.chip.uuid
            for seed in range(64)
            for pick in pick_on_node(
                node, [request], [fit], {}, rules, random.Random(seed)
            )
            or []
        }
        assert possible, f"step {step}: simcluster sees no room for {memory} MB"
        name = f"vdiff-{step}"
        cleanup.append(("default", name))
        kube_stack.create_objects([slice_pod(name, "Ascend310P", memory)])
        wait_running(kube_stack, [("default", name)], timeout=60)
        pod = kube_core.read_namespaced_pod(name, "default")
        chip = pod.metadata.annotations[allocated_key("Ascend310P")].split(",")[0]
        assert chip in possible, f"step {step}: {chip} not in {sorted(possible)}"
