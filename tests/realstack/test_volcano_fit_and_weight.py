"""What the real Volcano v1.15.1 counts, and what it ignores, beside the
portal's model of it (issue 35).

- Its fit counts no template pod's AICore: a chip takes template pods whose
  AICore adds up to more than the chip has, and the portal's room model
  (``apps/scheduling/allocator/volcano_room.py``) says the same.
- A quoted ``deviceshare.ScheduleWeight: "10"`` in its scheduler conf is
  ignored (weight 0), and the portal's reader of the conf says so.

Each test puts its own node in the session's stack and takes it out again.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from apps.inventory.hami.annotations import (
    allocated_key,
    node_locks,
    parse_pod_devices,
)
from apps.inventory.hami.deviceconfig import parse_device_config
from apps.inventory.hami.goconf import get_int, load_go_yaml
from apps.scheduling.allocator import places_all
from apps.scheduling.allocator.volcano_room import ChipRoom
from kubestack.deviceplugin import NodeHardware
from kubestack.scenarios import slice_pod, wait_running
from simcluster import guide_data
from simcluster.hardware import Chip, die_id
from tests.polling import wait_for

pytestmark = [pytest.mark.realstack, pytest.mark.slow]

CW = "Ascend310P"
DEVICE_CM = ("hami-scheduler-device", "kube-system")
DEVICE_KEY = "device-config.yaml"
VOLCANO_CM = ("volcano-scheduler-configmap", "volcano-system")
VOLCANO_KEY = "volcano-scheduler.conf"
ANCHOR = "      deviceshare.KnownGeometriesCMName: hami-scheduler-device\n"
WEIGHT = "deviceshare.ScheduleWeight"


@pytest.fixture
def one_chip_node(kube_stack) -> Iterator[str]:
    """A 310P node with a single (healthy) 310P3 chip, for this test only."""
    name = "npu-node-310p-aicore"
    kube_stack.add_nodes([NodeHardware(name, [Chip(die_id(f"{name}-0"), "310P3")])])
    try:
        yield name
    finally:
        kube_stack.remove_nodes([name])


@pytest.fixture
def two_310p_nodes(kube_stack) -> Iterator[tuple[str, str]]:
    """Two 310P nodes of one 310P3 chip each, for this test only."""
    names = ("npu-node-310p-packed", "npu-node-310p-preferred")
    kube_stack.add_nodes(
        [NodeHardware(name, [Chip(die_id(f"{name}-0"), "310P3")]) for name in names]
    )
    try:
        yield names
    finally:
        kube_stack.remove_nodes(list(names))


def _on_node(pod: dict[str, Any], node: str) -> dict[str, Any]:
    pod["spec"]["nodeSelector"] = {"kubernetes.io/hostname": node}
    return pod


def _phase(kube_core, name: str) -> tuple[str, str, str, str]:
    """(phase, bind-phase, node, the PodScheduled=False reason) of a pod."""
    pod = kube_core.read_namespaced_pod(name, "default")
    annotations = pod.metadata.annotations or {}
    unscheduled = next(
        (
            c.reason or ""
            for c in pod.status.conditions or []
            if c.type == "PodScheduled" and c.status == "False"
        ),
        "",
    )
    return (
        pod.status.phase,
        annotations.get("hami.io/bind-phase", ""),
        pod.spec.node_name or "",
        unscheduled,
    )


# --- AICore is not in Volcano's fit --------------------------------------------------

# A 310P3 template whose AICore is heavy for its memory: four of them fit the
# chip's 21527 MB and ask for 16 of its 8 AICores.
CORE_HEAVY = "  - name: vir02c\n    memory: 5120\n    aiCore: 4\n    aiCPU: 2\n"


def test_the_real_volcano_fills_a_chip_past_its_aicore_as_the_portal_models_it(
    kube_stack, kube_core, one_chip_node, real_cluster, cleanup
):
    """volcano-sh/volcano v1.15.1, ``pkg/scheduler/api/devices/ascend/hami/
    device_info.go``: ``ResourceReqs`` calls ``devices.ExtractResourceRequest``
    (``pkg/scheduler/api/devices/util.go``) with an empty core resource name,
    so every template pod's ``Coresreq`` is 0; ``fit`` compares ``Devcore -
    Usedcores`` with it and nothing else counts cores (``CreateAnnotations``
    writes the 0 into the pod, which is what ``addResource`` adds back). The
    fit is the slots and the memory.

    With a template of 5120 MB and 4 AICore, the real Volcano binds as many of
    them to one 310P3 chip as its memory holds (four: 16 AICore on a chip of
    8), all run, and the next one stays unschedulable. The portal's room model
    (``places_all``) gives the same answer from the chip the portal synced:
    the four are placed whatever Volcano picks (the node is not "unsafe"), a
    fifth is not. A model counting AICore would send two."""
    from apps.inventory.models import Chip as ChipRow
    from apps.inventory.sync.engine import sync_once

    original = kube_core.read_namespaced_config_map(*DEVICE_CM).data
    text = guide_data.DEVICE_CONFIG_YAML.replace(
        "  - name: vir02\n", CORE_HEAVY + "  - name: vir02\n", 1
    )
    assert text != guide_data.DEVICE_CONFIG_YAML
    (rules,) = [
        c for c in parse_device_config(text).chip_types() if c.common_word == CW
    ]
    (heavy,) = [t for t in rules.templates if t.name == "vir02c"]
    try:
        kube_core.patch_namespaced_config_map(*DEVICE_CM, {"data": {DEVICE_KEY: text}})
        kube_stack.restart_volcano_scheduler()  # it reads the templates once
        sync_once(real_cluster)
        (chip,) = ChipRow.objects.filter(cluster=real_cluster, node__name=one_chip_node)
        room = ChipRoom(slots=chip.slots, memory=chip.memory)
        fits = min(chip.slots, chip.memory // heavy.memory)
        assert fits * heavy.ai_core > chip.aicore > 0, (fits, chip.aicore)

        names = [f"aicore-{i}" for i in range(fits + 1)]
        cleanup.extend(("default", n) for n in names)
        kube_stack.create_objects(
            [_on_node(slice_pod(n, CW, heavy.memory), one_chip_node) for n in names]
        )

        def settled() -> dict[str, tuple[str, str, str, str]] | None:
            seen = {n: _phase(kube_core, n) for n in names}
            running = [n for n, s in seen.items() if s[:2] == ("Running", "success")]
            left = [n for n, s in seen.items() if n not in running]
            if len(running) == fits and all(
                seen[n][2] == "" and seen[n][3] == "Unschedulable" for n in left
            ):
                return seen
            return None

        seen = wait_for(
            settled,
            lambda: (
                f"{fits} running and the rest unschedulable: "
                f"{ {n: _phase(kube_core, n) for n in names} }"
            ),
            timeout=120,
        )
        bound = [n for n, s in seen.items() if s[0] == "Running"]
        devices = [
            device
            for n in bound
            for container in parse_pod_devices(
                kube_core.read_namespaced_pod(n, "default").metadata.annotations[
                    allocated_key(CW)
                ]
            )
            for device in container
        ]
        # all on the one chip, each the template's memory and 0 cores
        # (Coresreq), whatever the template's AICore
        assert {(d.uuid, d.usedmem, d.usedcores) for d in devices} == {
            (chip.uuid, heavy.memory, 0)
        }
        assert len(devices) == fits
        assert len(bound) * heavy.ai_core > chip.aicore

        # the portal's model agrees: the node takes them all, and no more
        assert places_all([room], [heavy.memory] * len(bound))
        assert not places_all([room], [heavy.memory] * (len(bound) + 1))
    finally:
        kube_core.patch_namespaced_config_map(*DEVICE_CM, {"data": original})
        kube_stack.restart_volcano_scheduler()


# --- a quoted ScheduleWeight is ignored ------------------------------------------


def _chip_policy(real_cluster) -> dict[str, Any]:
    from apps.inventory.deviceconfig.health import cluster_health
    from apps.inventory.sync.engine import sync_once

    sync_once(real_cluster)
    (check,) = [
        c for c in cluster_health(real_cluster)["checks"] if c["id"] == "chip_policy"
    ]
    return check


def _deviceshare_arguments(text: str) -> dict[str, Any]:
    conf = load_go_yaml(text)
    (args,) = [
        plugin.get("arguments") or {}
        for tier in conf["tiers"]
        for plugin in tier["plugins"]
        if plugin["name"] == "deviceshare"
    ]
    return args


def _wait_unlocked(kube_core, nodes: list[str]) -> None:
    """Wait until no scheduler holds a lock on ``nodes``.

    Volcano (``NodeLockEnable``) locks a node while it binds a pod there, and
    the lock is lifted after the pod's Allocate, a moment after its bind
    phase reads ``success``: a pod created in that moment finds the node
    locked, and Volcano filters it out whatever the scores (seen once: the
    third pod went to the other node).
    """

    def locked() -> dict[str, list[str]]:
        return {
            node: sorted(held)
            for node in nodes
            if (
                held := node_locks(kube_core.read_node(node).metadata.annotations or {})
            )
        }

    wait_for(lambda: not locked(), lambda: f"no node lock: {locked()}", timeout=30)


def _place_one_by_one(
    kube_stack, kube_core, cleanup, prefix: str, nodes: list[str], preferred: str
) -> list[str]:
    """vir01 pods, each allowed on ``nodes`` and preferring ``preferred`` (node
    affinity, weight 100), created one after another; the node of each."""
    placed = []
    for i in range(3):
        name = f"{prefix}-{i}"
        cleanup.append(("default", name))
        pod = slice_pod(name, CW, 3072)
        pod["spec"]["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {
                                    "key": "kubernetes.io/hostname",
                                    "operator": "In",
                                    "values": nodes,
                                }
                            ]
                        }
                    ]
                },
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "weight": 100,
                        "preference": {
                            "matchExpressions": [
                                {
                                    "key": "kubernetes.io/hostname",
                                    "operator": "In",
                                    "values": [preferred],
                                }
                            ]
                        },
                    }
                ],
            }
        }
        _wait_unlocked(kube_core, nodes)
        kube_stack.kubectl("create", "-f", "-", stdin=json.dumps(pod))
        wait_running(kube_stack, [("default", name)], timeout=60)
        placed.append(kube_core.read_namespaced_pod(name, "default").spec.node_name)
    kube_stack.kubectl(
        "delete",
        "pod",
        *[f"{prefix}-{i}" for i in range(3)],
        "--grace-period=0",
        "--force",
        "--wait=true",
        check=False,
    )
    return placed


def test_a_quoted_schedule_weight_is_ignored_by_the_real_volcano_and_the_portal(
    kube_stack, kube_core, two_310p_nodes, real_cluster, cleanup
):
    """volcano-sh/volcano v1.15.1, ``pkg/scheduler/framework/arguments.go``
    ``GetInt``: ``argv.(int)``, so a quoted ``"10"`` (a string after
    gopkg.in/yaml.v2) logs "Could not parse argument" and leaves deviceshare's
    ``scheduleWeight`` 0; ``pkg/scheduler/plugins/deviceshare/deviceshare.go``
    ``OnSessionOpen`` adds the device score (``getDeviceScore`` x weight) to a
    node's only while the weight is above 0.

    Two 310P nodes of one chip whose scores differ: "packed", its chip
    holding a vir04 (``CalScore`` binpack: 100 x 12288/21527 = 57, x 10 =
    570, more with each pod), and "preferred", empty, which every pod prefers
    by node affinity (nodeorder: at most 100 x 2 = 200). With
    ``ScheduleWeight: 10`` the pods go to "packed"; with ``"10"`` to
    "preferred", as with no weight at all. The portal's
    reader (``apps.inventory.hami.goconf``, its health check) says the
    quoted weight stays 0, and does not say so of the unquoted one."""
    packed, preferred = two_310p_nodes
    nodes = [packed, preferred]
    original = kube_core.read_namespaced_config_map(*VOLCANO_CM).data
    conf = original[VOLCANO_KEY]
    assert ANCHOR in conf

    def with_weight(weight: str) -> str:
        return conf.replace(
            ANCHOR,
            ANCHOR
            + "      deviceshare.SchedulePolicy: binpack\n"
            + f"      {WEIGHT}: {weight}\n",
        )

    cleanup.append(("default", "weight-filler"))
    kube_stack.create_objects([_on_node(slice_pod("weight-filler", CW, 12288), packed)])
    wait_running(kube_stack, [("default", "weight-filler")], timeout=60)
    try:
        # the weight honoured: the device score outweighs the affinity
        text = with_weight("10")
        assert get_int(_deviceshare_arguments(text), WEIGHT) == 10
        kube_core.patch_namespaced_config_map(
            *VOLCANO_CM, {"data": {VOLCANO_KEY: text}}
        )
        kube_stack.restart_volcano_scheduler()
        assert "weight stays 0" not in _chip_policy(real_cluster)["message"]
        honoured = _place_one_by_one(
            kube_stack, kube_core, cleanup, "weighted", nodes, preferred
        )
        assert honoured == [packed] * 3, honoured

        # quoted: the real Volcano says it cannot read it, and places by the
        # affinity as if there were no weight
        text = with_weight('"10"')
        assert get_int(_deviceshare_arguments(text), WEIGHT) is None
        kube_core.patch_namespaced_config_map(
            *VOLCANO_CM, {"data": {VOLCANO_KEY: text}}
        )
        kube_stack.restart_volcano_scheduler()
        scheduler = kube_stack.processes["vc-scheduler"]
        wait_for(
            lambda: (
                f"Could not parse argument: 10 for key {WEIGHT} to int"
                in scheduler.output()
            ),
            lambda: f"vc-scheduler to reject the quoted weight: {scheduler.tail(5)}",
            timeout=30,
        )
        check = _chip_policy(real_cluster)
        assert check["check_status"] == "warn", check
        assert "weight stays 0" in check["message"], check
        ignored = _place_one_by_one(
            kube_stack, kube_core, cleanup, "quoted", nodes, preferred
        )
        assert ignored == [preferred] * 3, ignored
    finally:
        kube_core.patch_namespaced_config_map(*VOLCANO_CM, {"data": original})
        kube_stack.restart_volcano_scheduler()
