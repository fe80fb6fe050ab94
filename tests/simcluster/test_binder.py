"""The simulated Volcano/HAMi binder: template rule, chip choice, annotations.

Chip choice differs by scheduler (docs/scheduler-behaviour.md): HAMi's scheduler
honours pins and chip health and scores by its policy; Volcano ignores pins
and health, scores only with ``SchedulePolicy``/``ScheduleWeight`` (else any
fitting chip, at random), frees a terminating pod's room at once, and serves
queues before priorities.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

CHIP0 = "52E6B438-F2A74DE4-269E0D37-6513270E-A6A3A450"  # holds the fixture's vir01
CHIP1 = "0C5C7FD0-128B2F33-D23F0824-892F902B-1818E811"
CHIP3 = "36F675CC-099950D8-1600A35A-6F03675A-6B0D549B"
UNHEALTHY_910B = "24EDE6A4-8A6A63EC-1E27A1C0-92276658-4EF8AA38"
HAMI = "hami-scheduler"


def _pod(
    name: str,
    cw: str,
    memory: int | None,
    annotations: dict[str, str] | None = None,
    scheduler: str = "volcano",
    **spec: Any,
) -> dict[str, Any]:
    limits = {f"huawei.com/{cw}": "1"}
    if memory is not None:
        limits[f"huawei.com/{cw}-memory"] = str(memory)
    return {
        "metadata": {"name": name, "annotations": annotations or {}},
        "spec": {
            "schedulerName": scheduler,
            **spec,
            "containers": [
                {
                    "name": "npu",
                    "image": "ascend:latest",
                    "resources": {"limits": limits, "requests": dict(limits)},
                }
            ],
        },
    }


def _running(core: client.CoreV1Api, wait_for, name: str) -> client.V1Pod:
    def check() -> client.V1Pod | None:
        pod = core.read_namespaced_pod(name, "default")
        ready = any(
            c.type == "Ready" and c.status == "True"
            for c in pod.status.conditions or []
        )
        return pod if pod.status.phase == "Running" and ready else None

    return wait_for(check, timeout=5)


def _expect_slice(
    pod: client.V1Pod, node: str, uuid: str, memory: int, temp: str | None
) -> None:
    annotations = pod.metadata.annotations
    runtime = {"UUID": uuid, **({"temp": temp} if temp else {}), "memory": memory}

    assert pod.spec.node_name == node
    assert annotations["hami.io/vgpu-node"] == node
    assert (
        annotations["hami.io/Ascend310P-devices-allocated"]
        == f"{uuid},Ascend310P,{memory},0:;"
    )
    assert annotations["hami.io/Ascend310P-devices-to-allocate"] == ";"
    assert annotations["huawei.com/Ascend310P"] == json.dumps(
        [runtime], separators=(",", ":")
    )
    assert annotations["hami.io/bind-phase"] == "success"
    for key in ("hami.io/vgpu-time", "predicate-time", "hami.io/bind-time"):
        assert annotations[key].isdigit()
    assert pod.status.start_time is not None


@pytest.fixture
def binpack_core(sim_factory, tmp_path: Path) -> client.CoreV1Api:
    """A simulator whose HAMi scheduler binpacks chips: the chart's option
    (HAMi's default, and simcluster's, is spread: cmd/scheduler/main.go
    --gpu-scheduler-policy)."""
    sim = sim_factory(policy="binpack")
    return client.CoreV1Api(sim.kubernetes_client(tmp_path / "kc-binpack"))


def test_template_rule_and_binpack(binpack_core: client.CoreV1Api, wait_for) -> None:
    core = binpack_core
    core.create_namespaced_pod(
        "default", _pod("p3072", "Ascend310P", 3072, scheduler=HAMI)
    )
    _expect_slice(
        _running(core, wait_for, "p3072"), "npu-node-310p-01", CHIP0, 3072, "vir01"
    )
    core.create_namespaced_pod(
        "default", _pod("p5000", "Ascend310P", 5000, scheduler=HAMI)
    )
    _expect_slice(
        _running(core, wait_for, "p5000"), "npu-node-310p-01", CHIP0, 6144, "vir02"
    )
    core.create_namespaced_pod(
        "default", _pod("p12289", "Ascend310P", 12289, scheduler=HAMI)
    )
    # Larger than vir04 (12288): a whole card, which needs an empty chip; of
    # the empty ones (a tie) HAMi takes the highest index: its Fit walks its
    # sorted chips from the end (pkg/device/ascend/device.go)
    _expect_slice(
        _running(core, wait_for, "p12289"), "npu-node-310p-01", CHIP3, 21527, None
    )


def test_spread_prefers_unused_chips(sim_factory, tmp_path: Path, wait_for) -> None:
    sim = sim_factory(policy="spread")
    core = client.CoreV1Api(sim.kubernetes_client(tmp_path / "kc"))
    core.create_namespaced_pod(
        "default", _pod("spread", "Ascend310P", 3072, scheduler=HAMI)
    )
    # the lowest score (HAMi's ComputeScore), of three empty chips the last
    _expect_slice(
        _running(core, wait_for, "spread"), "npu-node-310p-01", CHIP3, 3072, "vir01"
    )


def test_a_pods_gpu_policy_annotation_overrides_the_schedulers(
    core: client.CoreV1Api, wait_for
) -> None:
    """HAMi v2.9.0 reads ``hami.io/gpu-scheduler-policy`` per pod
    (pkg/util/util.go ``GetGPUSchedulerPolicyByPod``); the default is spread."""
    core.create_namespaced_pod(
        "default", _pod("first", "Ascend310P", 3072, scheduler=HAMI)
    )
    first = _running(core, wait_for, "first").metadata.annotations
    used = first["hami.io/Ascend310P-devices-allocated"].split(",")[0]
    core.create_namespaced_pod(
        "default", _pod("spread-2", "Ascend310P", 3072, scheduler=HAMI)
    )
    spread = _running(core, wait_for, "spread-2").metadata.annotations
    assert spread["hami.io/Ascend310P-devices-allocated"].split(",")[0] != used
    packed = _pod(
        "packed", "Ascend310P", 3072, {"hami.io/gpu-scheduler-policy": "binpack"}, HAMI
    )
    core.create_namespaced_pod("default", packed)
    chip = (
        _running(core, wait_for, "packed")
        .metadata.annotations["hami.io/Ascend310P-devices-allocated"]
        .split(",")[0]
    )
    # binpack takes a chip that already holds a vNPU, never an empty one
    held = {used, spread["hami.io/Ascend310P-devices-allocated"].split(",")[0], CHIP0}
    assert chip in held


def test_pod_pinned_with_use_uuid(binpack_core: client.CoreV1Api, wait_for) -> None:
    core = binpack_core
    pinned = _pod(
        "pinned", "Ascend310P", 3072, {"hami.io/use-Ascend310P-uuid": CHIP3}, HAMI
    )
    core.create_namespaced_pod("default", pinned)
    _expect_slice(
        _running(core, wait_for, "pinned"), "npu-node-310p-01", CHIP3, 3072, "vir01"
    )
    avoid = _pod(
        "avoid", "Ascend310P", 3072, {"hami.io/no-use-Ascend310P-uuid": CHIP0}, HAMI
    )
    core.create_namespaced_pod("default", avoid)
    assert (
        _running(core, wait_for, "avoid")
        .metadata.annotations["hami.io/Ascend310P-devices-allocated"]
        .split(",")[0]
        == CHIP3
    )  # binpack, not chip 0


def test_node_selector_is_honoured(binpack_core: client.CoreV1Api, wait_for) -> None:
    core = binpack_core
    pod = _pod(
        "affine",
        "Ascend910B4",
        8192,
        scheduler=HAMI,
        affinity={
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {
                                    "key": "kubernetes.io/hostname",
                                    "operator": "In",
                                    "values": ["npu-node-910b-01"],
                                }
                            ]
                        }
                    ]
                }
            }
        },
    )
    core.create_namespaced_pod("default", pod)
    bound = _running(core, wait_for, "affine")
    # binpack: chip 6 already holds the fixture's vir05_1c_8g
    assert bound.metadata.annotations["hami.io/Ascend910B4-devices-allocated"] == (
        "8F6D0558-D0EDA82F-AE97BA94-2E44158B-1A61DBE2,Ascend910B4,8192,0:;"
    )
    wrong = _pod(
        "wrong-node",
        "Ascend310P",
        3072,
        nodeSelector={"kubernetes.io/hostname": "npu-node-910b-01"},
    )
    core.create_namespaced_pod("default", wrong)
    message = _failed_scheduling(core, wait_for, "wrong-node")
    assert "1 node(s) didn't match Pod's node affinity/selector" in message


def _failed_scheduling(core: client.CoreV1Api, wait_for, name: str) -> str:
    events = wait_for(
        lambda: (
            core.list_namespaced_event(
                "default",
                field_selector=f"involvedObject.name={name},reason=FailedScheduling",
            ).items
        )
    )
    event = events[0]
    assert event.involved_object.kind == "Pod"
    assert event.type == "Warning"
    pod = core.read_namespaced_pod(name, "default")
    assert pod.status.phase == "Pending"
    assert pod.spec.node_name is None
    condition = next(c for c in pod.status.conditions if c.type == "PodScheduled")
    assert condition.status == "False"
    assert condition.reason == "Unschedulable"
    assert condition.message == event.message
    return str(event.message)


def test_pod_that_fits_nowhere_stays_pending(core: client.CoreV1Api, wait_for) -> None:
    pinned_bad = _pod(
        "nofit",
        "Ascend910B4",
        8192,
        {"hami.io/use-Ascend910B4-uuid": "NO-SUCH-CHIP"},
        HAMI,
    )
    core.create_namespaced_pod("default", pinned_bad)
    message = _failed_scheduling(core, wait_for, "nofit")
    assert (
        message
        == "0/2 nodes are available: no Ascend910B4 chip with 8192 MB and a free slot"
    )
    core.create_namespaced_pod(
        "default", _pod("toolarge", "Ascend310P", 30000, scheduler="hami-scheduler")
    )
    message = _failed_scheduling(core, wait_for, "toolarge")
    assert message.startswith("0/2 nodes are available: ")
    assert "memoryCapacity" in message


def test_hami_binds_a_pod_pinned_to_the_sick_chip(
    core: client.CoreV1Api, wait_for
) -> None:
    """HAMi v2.9.0's Ascend ``Fit`` (pkg/device/ascend/device.go) reads no
    chip health: the real scheduler in kubestack binds a pod pinned to the
    guide's sick chip (tests/realstack/test_hami_scheduler.py), and so does
    the binder; the plugin hands the chip out and the pod runs."""
    core.create_namespaced_pod(
        "default",
        _pod(
            "onsick",
            "Ascend910B4",
            8192,
            {"hami.io/use-Ascend910B4-uuid": UNHEALTHY_910B},
            HAMI,
        ),
    )
    assert _chip_of(_running(core, wait_for, "onsick"), "Ascend910B4") == UNHEALTHY_910B


def test_volcano_reads_a_request_over_capacity_as_the_smallest_template(
    core: client.CoreV1Api, wait_for
) -> None:
    # Volcano's trimMemory books 0 MB and the vNPU is trimMemory(0): vir01.
    core.create_namespaced_pod("default", _pod("toolarge", "Ascend310P", 30000))
    bound = _running(core, wait_for, "toolarge")
    annotations = bound.metadata.annotations
    assert annotations["hami.io/Ascend310P-devices-allocated"].split(",")[2] == "0"
    assert json.loads(annotations["huawei.com/Ascend310P"])[0]["temp"] == "vir01"


def test_whole_cards_run_out(core: client.CoreV1Api, wait_for) -> None:
    for i in range(3):  # chips 1..3 are empty
        core.create_namespaced_pod("default", _pod(f"whole-{i}", "Ascend310P", None))
        _running(core, wait_for, f"whole-{i}")
    core.create_namespaced_pod("default", _pod("whole-3", "Ascend310P", None))
    message = _failed_scheduling(core, wait_for, "whole-3")
    assert "no empty Ascend310P chip for a whole card (21527 MB)" in message
    core.delete_namespaced_pod("whole-0", "default", grace_period_seconds=0)
    assert _running(core, wait_for, "whole-3").spec.node_name == "npu-node-310p-01"


def test_plain_pod_is_bound_and_started(core: client.CoreV1Api, wait_for) -> None:
    core.create_namespaced_pod(
        "default",
        {
            "metadata": {"name": "plain"},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]},
        },
    )
    pod = _running(core, wait_for, "plain")
    assert pod.spec.node_name in ("npu-node-310p-01", "npu-node-910b-01")
    assert "hami.io/vgpu-node" not in (pod.metadata.annotations or {})
    assert pod.status.pod_ip
    assert pod.status.container_statuses[0].ready


def test_binding_subresource(
    core: client.CoreV1Api, wait_for, sim_factory, tmp_path
) -> None:
    sim = sim_factory(binder=False)
    core = client.CoreV1Api(sim.kubernetes_client(tmp_path / "kc"))
    core.create_namespaced_pod(
        "default",
        {
            "metadata": {"name": "manual"},
            "spec": {
                "schedulerName": "my-scheduler",
                "containers": [{"name": "c", "image": "x"}],
            },
        },
    )
    assert core.read_namespaced_pod("manual", "default").spec.node_name is None
    core.create_namespaced_binding(
        "default",
        client.V1Binding(
            metadata=client.V1ObjectMeta(name="manual"),
            target=client.V1ObjectReference(kind="Node", name="npu-node-910b-01"),
        ),
        _preload_content=False,
    )
    assert _running(core, wait_for, "manual").spec.node_name == "npu-node-910b-01"


def test_run_seconds_finishes_pod(core: client.CoreV1Api, wait_for) -> None:
    pod = _pod("short", "Ascend310P", 3072, {"simcluster.io/run-seconds": "1"})
    core.create_namespaced_pod("default", pod)
    wait_for(
        lambda: (
            core.read_namespaced_pod("short", "default").status.phase == "Succeeded"
        ),
        timeout=6,
    )


def test_one_pass_over_many_pending_pods_never_overcommits_a_chip() -> None:
    """Ten vir04 pods (12,288 MB each) pending at once, scheduled in one pass:
    a 21,527 MB 310P chip takes one of them, never two."""
    from simcluster import hami, resources
    from simcluster.controllers.binder import Binder
    from simcluster.scenarios import guide
    from simcluster.store import Store

    store = Store()
    guide().load(store)
    binder = Binder(store)
    binder.resync()
    for n in range(10):
        pod = _pod(f"big-{n}", "Ascend310P", 12288)
        pod["metadata"]["namespace"] = "default"
        store.create(resources.POD, pod)
        binder.on_events(store.events_since(store.rv - 1, 0)[0])
    binder.tick(now=1e9)  # one pass over all ten

    capacity = 21527  # the guide's 310P memoryAllocatable
    used: dict[str, int] = {}
    bound = 0
    _, pods = store.list(resources.POD)
    for stored in pods:
        annotations = stored.obj["metadata"].get("annotations") or {}
        value = annotations.get(hami.allocated_key("Ascend310P"))
        if not value:
            continue
        bound += stored.obj["metadata"]["name"].startswith("big-")
        for container in hami.parse_pod_devices(value):
            for device in container:
                used[device.uuid] = used.get(device.uuid, 0) + device.usedmem
    assert bound == 4, bound  # one per 310P chip (chip 0 also keeps its vir01)
    over = {uuid: memory for uuid, memory in used.items() if memory > capacity}
    assert not over, over


def _chip_of(pod: client.V1Pod, cw: str = "Ascend310P") -> str:
    return pod.metadata.annotations[f"hami.io/{cw}-devices-allocated"].split(",")[0]


def test_volcano_ignores_the_pin_and_picks_at_random_reproducibly(
    sim_factory, tmp_path: Path, wait_for
) -> None:
    """The guide's Volcano conf has no SchedulePolicy: any fitting chip, in
    Go's map order; simcluster draws it from its seed."""
    chosen: list[list[str]] = []
    for run in range(2):
        sim = sim_factory(seed=11)
        core = client.CoreV1Api(sim.kubernetes_client(tmp_path / f"kc{run}"))
        picks = []
        for i in range(6):
            pinned = _pod(
                f"p{i}", "Ascend310P", 3072, {"hami.io/use-Ascend310P-uuid": CHIP3}
            )
            core.create_namespaced_pod("default", pinned)
            picks.append(_chip_of(_running(core, wait_for, f"p{i}")))
        chosen.append(picks)
    assert chosen[0] == chosen[1]  # the same seed, the same chips
    assert set(chosen[0]) != {CHIP3}  # the pin was not honoured
    assert len(set(chosen[0])) > 1  # no score: not packed onto one chip


def test_volcano_binpacks_with_a_schedule_policy_and_weight(
    core: client.CoreV1Api, wait_for
) -> None:
    from simcluster.guide_data import VOLCANO_SCHEDULER_CONF

    conf = VOLCANO_SCHEDULER_CONF.replace(
        "      deviceshare.KnownGeometriesCMName: hami-scheduler-device\n",
        "      deviceshare.KnownGeometriesCMName: hami-scheduler-device\n"
        "      deviceshare.SchedulePolicy: binpack\n"
        "      deviceshare.ScheduleWeight: 10\n",
    )
    core.patch_namespaced_config_map(
        "volcano-scheduler-configmap",
        "volcano-system",
        {"data": {"volcano-scheduler.conf": conf}},
    )
    for i in range(3):
        core.create_namespaced_pod("default", _pod(f"b{i}", "Ascend310P", 3072))
        # chip 0 already holds the guide's vir01: binpack keeps filling it
        assert _chip_of(_running(core, wait_for, f"b{i}")) == CHIP0


def test_a_quoted_weight_is_ignored_as_volcano_ignores_it() -> None:
    """framework/arguments.go ``GetInt`` keeps only a Go int: with
    ``ScheduleWeight: "10"`` Volcano scores no chip (any fitting one), and
    so does the binder; ``y`` is yaml.v2's true, as Volcano's reader has it."""
    from simcluster import resources
    from simcluster.controllers.binder import VOLCANO_CONFIG, read_volcano_rules
    from simcluster.guide_data import VOLCANO_SCHEDULER_CONF
    from simcluster.scenarios import guide
    from simcluster.store import Store

    store = Store()
    guide().load(store)

    def rules_with(weight: str):
        conf = VOLCANO_SCHEDULER_CONF.replace(
            "      deviceshare.KnownGeometriesCMName: hami-scheduler-device\n",
            "      deviceshare.KnownGeometriesCMName: hami-scheduler-device\n"
            "      deviceshare.SchedulePolicy: binpack\n"
            f"      deviceshare.ScheduleWeight: {weight}\n",
        )
        found = store.get(resources.CONFIGMAP, *VOLCANO_CONFIG)
        found.obj["data"]["volcano-scheduler.conf"] = conf
        return read_volcano_rules(store)

    assert rules_with("10").policy == "binpack"
    assert rules_with('"10"').policy == ""
    assert rules_with("10.0").policy == ""


@pytest.mark.slow
def test_volcano_hands_out_a_terminating_pods_room_and_the_vnpu_cannot_be_made(
    sim_factory, tmp_path: Path, wait_for
) -> None:
    """The plugin's Allocate (ascend-device-plugin v1.4.0,
    ``internal/server/server.go`` ``Allocate``) checks no usage, so the pod is
    admitted; the chip is hard-split and the terminating pod still holds its
    vNPU, so the runtime cannot create the new one and the container fails to
    start (INFERRED: docs/scheduler-behaviour.md). restartPolicy Never: Failed."""
    sim = sim_factory(pod_shutdown_seconds=4)
    core = client.CoreV1Api(sim.kubernetes_client(tmp_path / "kc"))
    for i in range(4):  # one vir04 on each 310P chip: no second fits anywhere
        core.create_namespaced_pod("default", _pod(f"big-{i}", "Ascend310P", 12288))
        _running(core, wait_for, f"big-{i}")
    victim = "big-1"
    freed = _chip_of(core.read_namespaced_pod(victim, "default"))
    core.delete_namespaced_pod(victim, "default")  # terminating for 4 s
    core.create_namespaced_pod(
        "default", _pod("taker", "Ascend310P", 12288, restartPolicy="Never")
    )

    def failed() -> client.V1Pod | None:
        pod = core.read_namespaced_pod("taker", "default")
        return pod if pod.status.phase == "Failed" else None

    # Volcano binds at once onto the victim's chip; Allocate hands it out
    taker = wait_for(failed, timeout=3)
    assert _chip_of(taker) == freed
    assert taker.status.reason is None  # admitted: no UnexpectedAdmissionError
    assert taker.metadata.annotations["hami.io/bind-phase"] == "success"
    (container,) = taker.status.container_statuses
    assert container.state.terminated.reason == "StartError"
    assert container.state.terminated.exit_code == 128
    assert f"chip {freed} cannot hold 12288 MB" in container.state.terminated.message
    assert core.read_namespaced_pod(victim, "default").metadata.deletion_timestamp

    # HAMi's scheduler waits until the victim is gone
    core.create_namespaced_pod(
        "default", _pod("waiter", "Ascend310P", 12288, scheduler=HAMI)
    )
    assert core.read_namespaced_pod("waiter", "default").spec.node_name is None
    assert _chip_of(_running(core, wait_for, "waiter")) == freed


def test_volcano_serves_the_less_used_queue_before_a_higher_priority() -> None:
    from simcluster import resources
    from simcluster.controllers.binder import Binder
    from simcluster.scenarios import guide
    from simcluster.store import Store

    store = Store()
    guide().load(store)
    binder = Binder(store)
    binder.resync()

    def pending(name: str, queue: str, priority: int) -> None:
        pod = _pod(
            name, "Ascend310P", 12288, {"scheduling.volcano.sh/queue-name": queue}
        )
        pod["metadata"]["namespace"] = "default"
        pod["spec"]["priority"] = priority
        store.create(resources.POD, pod)
        binder.on_events(store.events_since(store.rv - 1, 0)[0])

    for i in range(3):  # queue "busy" takes three of the four vir04 rooms
        pending(f"busy-{i}", "busy", 100)
    binder.tick(now=1e9)
    # the last room: a high-priority pod of "busy" and a low one of "idle", at once
    pending("urgent", "busy", 100000)
    pending("filler", "idle", 100)
    binder.tick(now=2e9)

    def node(name: str) -> str | None:
        found = store.get(resources.POD, "default", name)
        return (found.obj.get("spec") or {}).get("nodeName") if found else None

    assert [node(f"busy-{i}") for i in range(3)] == ["npu-node-310p-01"] * 3
    assert node("filler") == "npu-node-310p-01"  # the idle queue is served first
    assert node("urgent") is None


def test_a_pod_volcano_binds_to_the_sick_chip_runs_on_it(
    core: client.CoreV1Api, wait_for
) -> None:
    """ascend-device-plugin v1.1.0 to v1.4.0, ``internal/server/server.go``
    ``Allocate``: the chip is looked up by the UUID the scheduler wrote and
    handed out, healthy or not (kubelet admits the pod with a healthy vNPU ID).
    Volcano checks no chip health, so a whole card on each of the 910B4 node's
    seven empty chips (the guide's pod holds the eighth) puts one on the sick
    chip, and that one runs too."""
    names = [f"whole-{i}" for i in range(7)]
    for name in names:
        core.create_namespaced_pod("default", _pod(name, "Ascend910B4", None))
    chips = {_chip_of(_running(core, wait_for, n), "Ascend910B4") for n in names}
    assert UNHEALTHY_910B in chips
