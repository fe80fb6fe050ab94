"""The simulated device plugin and its per-node config (``hami-device-node-config``).

As the real plugin (docs/node-config.md): read once at start, only with
``--node_config_file``, version by version; a file that does not load is
logged and ignored; filtered chips leave the registration and the rest are
renumbered from 0. Everything goes through the API: the ConfigMap is
edited and the plugin pod deleted as an operator would.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from simcluster import guide_data
from simcluster.controllers.allocate import allocate_error
from simcluster.scenarios import DUO_NODE
from tests import plugin_pods as pods
from tests.plugin_pods import CM, DS, NS

NODE_310P = guide_data.NODE_310P
NODE_910B = guide_data.NODE_910B
CW_310P, CW_910B = "Ascend310P", "Ascend910B4"


def _log(core: client.CoreV1Api, pod: client.V1Pod) -> str:
    answer = core.read_namespaced_pod_log(pod.metadata.name, NS, _preload_content=False)
    return answer.data.decode()


@pytest.fixture
def nodeconfig(sim_factory, tmp_path: Path) -> tuple[client.CoreV1Api, Any]:
    sim = sim_factory("nodeconfig", plugin_interval=0.2, pod_shutdown_seconds=0.1)
    api = sim.kubernetes_client(tmp_path / "kc")
    return client.CoreV1Api(api), client.AppsV1Api(api)


def test_the_nodeconfig_scenario_filters_by_uuid_and_by_card(
    nodeconfig, wait_for
) -> None:
    core, apps = nodeconfig
    ds = apps.read_namespaced_daemon_set(DS, NS)
    container = ds.spec.template.spec.containers[0]
    assert container.image.endswith(":v1.4.0")
    assert "--node_config_file" in container.args
    assert any(m.mount_path == "/node-config.yaml" for m in container.volume_mounts)
    text = core.read_namespaced_config_map(CM, NS).data["node-config.yaml"]
    assert f"name: {NODE_910B}" in text
    # the sick chip (guide index 5) is left out by its UUID: 7 chips, 0..6
    sick = next(uid for uid, healthy in guide_data.CHIPS_910B if not healthy)
    chips = pods.chips(core, NODE_910B, CW_910B)
    assert [c["id"] for c in chips] == [
        uid for uid, _ in guide_data.CHIPS_910B if uid != sick
    ]
    assert [c.get("index", 0) for c in chips] == list(range(7))
    # the fixture pod's chip (guide index 6) registers as index 5 now
    assert chips[5]["id"] == guide_data.CHIPS_910B[6][0]
    assert all(c["health"] for c in chips)
    assert pods.allocatable(core, NODE_910B, CW_910B) == "28"
    # the 310P3 Duo: index 1 is card 1, which holds two of its four chips
    duo = pods.chips(core, DUO_NODE, CW_310P)
    assert len(duo) == 2
    assert [c.get("index", 0) for c in duo] == [0, 1]
    assert pods.allocatable(core, DUO_NODE, CW_310P) == "14"
    # a node without an entry registers all its chips
    assert len(pods.chips(core, NODE_310P, CW_310P)) == 4
    # the plugin said which entry it took (its log is written as it starts,
    # a moment after the scenario's registration is in place)
    pod = pods.plugin_pod(core, NODE_910B)
    wait_for(
        lambda: f"Successfully matched node config for {NODE_910B}" in _log(core, pod)
    )


def test_the_guide_keeps_plugin_v1_1_0_without_a_node_config(
    api_client: client.ApiClient,
) -> None:
    core, apps = client.CoreV1Api(api_client), client.AppsV1Api(api_client)
    container = apps.read_namespaced_daemon_set(DS, NS).spec.template.spec.containers[0]
    assert container.image.endswith(":v1.1.0")
    assert "--node_config_file" not in container.args
    assert CM not in {
        cm.metadata.name for cm in core.list_namespaced_config_map(NS).items
    }
    assert len(pods.chips(core, NODE_910B, CW_910B)) == 8


def test_the_node_config_is_read_only_when_the_plugin_starts(
    nodeconfig, wait_for
) -> None:
    core, _ = nodeconfig
    entry = f"  - name: {NODE_310P}\n    vDeviceCount: 2\n"
    text = core.read_namespaced_config_map(CM, NS).data["node-config.yaml"]
    pods.set_node_config(core, text + entry)
    # several reports later the running plugin still has what it started with
    first = core.read_node(NODE_310P).metadata.annotations[
        f"hami.io/node-handshake-{CW_310P}"
    ]
    wait_for(
        lambda: (
            core.read_node(NODE_310P).metadata.annotations[
                f"hami.io/node-handshake-{CW_310P}"
            ]
            != first
        ),
        timeout=5,
    )
    assert {c["count"] for c in pods.chips(core, NODE_310P, CW_310P)} == {7}
    # the DaemonSet recreates the deleted pod: that plugin reads the new entry
    pods.restart_plugin(core, NODE_310P, wait_for)
    wait_for(lambda: {c["count"] for c in pods.chips(core, NODE_310P, CW_310P)} == {2})
    assert pods.allocatable(core, NODE_310P, CW_310P) == "8"
    # the 910B4 node's plugin was not restarted: unchanged
    assert len(pods.chips(core, NODE_910B, CW_910B)) == 7


def test_a_node_config_that_does_not_load_is_logged_and_ignored(
    nodeconfig, wait_for, caplog: pytest.LogCaptureFixture
) -> None:
    core, _ = nodeconfig
    text = core.read_namespaced_config_map(CM, NS).data["node-config.yaml"]
    # a quoted count is a string: Go's json will not put it in an int
    pods.set_node_config(core, text + f'  - name: {NODE_310P}\n    vDeviceCount: "2"\n')
    pod = pods.restart_plugin(core, NODE_910B, wait_for)
    # defaults: the filtered chip is back, all 8 registered
    wait_for(lambda: len(pods.chips(core, NODE_910B, CW_910B)) == 8)
    assert (
        pods.allocatable(core, NODE_910B, CW_910B) == "28"
    )  # the sick chip's slots stay out
    line = wait_for(
        lambda: next(
            (
                ln
                for ln in _log(core, pod).splitlines()
                if "load node config failed" in ln
            ),
            None,
        )
    )
    assert line.startswith("E")
    assert "vDeviceCount of type int" in line
    assert any("load node config failed" in r.getMessage() for r in caplog.records)


def _roll_to(core, apps, version: str, flag: bool, wait_for) -> client.V1Pod:
    old = pods.plugin_pod(core, NODE_310P)
    pods.set_plugin(apps, version, flag)

    def started() -> client.V1Pod | None:
        pod = pods.plugin_pod(core, NODE_310P)
        if pod is None or pod.metadata.uid == old.metadata.uid:
            return None
        return pod if pod.spec.containers[0].image.endswith(version) else None

    return wait_for(started)


ENTRY_310P = (
    f"  - name: {NODE_310P}\n"
    "    hami-vnpu-core: true\n"
    "    vDeviceCount: 2\n"
    "    filterDevices:\n"
    f'      uuid: ["{guide_data.CHIPS_310P[0][0]}"]\n'
)


@pytest.mark.parametrize(
    ("version", "chips", "count", "devcore", "mode"),
    [
        # v1.4.0: the mode, the count and the filter; devcore a percent
        ("v1.4.0", 3, 2, 100, "true"),
        # v1.3.0: the mode only (vDeviceCount parsed, not applied; no
        # filterDevices); devcore the config's aiCore even in hami-core mode
        ("v1.3.0", 4, 7, 8, "true"),
    ],
)
def test_what_each_plugin_version_takes_from_its_entry(
    nodeconfig, wait_for, version, chips, count, devcore, mode
) -> None:
    core, apps = nodeconfig
    text = core.read_namespaced_config_map(CM, NS).data["node-config.yaml"]
    pods.set_node_config(core, text + ENTRY_310P)
    if version == "v1.4.0":  # the scenario's: restart it to read the new entry
        pods.restart_plugin(core, NODE_310P, wait_for)
    else:
        _roll_to(core, apps, version, True, wait_for)

    def registered() -> bool:
        node = core.read_node(NODE_310P)
        got = json.loads(node.metadata.annotations[f"hami.io/node-register-{CW_310P}"])
        return (
            len(got),
            {c["count"] for c in got},
            {c["devcore"] for c in got},
            node.metadata.annotations["hami-vnpu-core"],
        ) == (chips, {count}, {devcore}, mode)

    wait_for(registered)
    got = pods.chips(core, NODE_310P, CW_310P)
    assert [c.get("index", 0) for c in got] == list(range(chips))
    assert pods.allocatable(core, NODE_310P, CW_310P) == str(chips * count)


def test_plugins_before_v1_3_exit_on_the_flag_and_ignore_the_file(
    nodeconfig, wait_for
) -> None:
    core, apps = nodeconfig
    text = core.read_namespaced_config_map(CM, NS).data["node-config.yaml"]
    pods.set_node_config(core, text + ENTRY_310P)
    # v1.2.0 with --node_config_file: Go's flag package stops it at start
    pod = _roll_to(core, apps, "v1.2.0", True, wait_for)
    wait_for(
        lambda: "flag provided but not defined: -node_config_file" in _log(core, pod)
    )
    # without the flag it runs, and the file mounted beside it changes nothing
    _roll_to(core, apps, "v1.2.0", False, wait_for)
    wait_for(lambda: len(pods.chips(core, NODE_910B, CW_910B)) == 8)
    got = pods.chips(core, NODE_310P, CW_310P)
    assert (len(got), {c["count"] for c in got}) == (4, {7})
    assert pods.allocatable(core, DUO_NODE, CW_310P) == "28"


def test_allocate_checks_neither_health_nor_usage() -> None:
    """``Allocate`` looks the chip up by UUID and hands it out
    (scheduler-behaviour.md, corrections of 2026-12-05): a sick chip or one
    whose slots are all taken is no refusal; a chip not on the node is.
    (A pod bound to a sick chip running end to end: test_binder.py.)"""
    from apps.inventory.hami.annotations import (
        ContainerDevice,
        DeviceInfo,
        encode_pod_devices,
    )

    uuid = guide_data.CHIPS_910B[5][0]
    sick_and_full = DeviceInfo(
        id=uuid, index=5, count=1, devmem=8192, devcore=20, type=CW_910B, health=False
    )
    pod = {
        "metadata": {
            "annotations": {
                f"hami.io/{CW_910B}-devices-to-allocate": encode_pod_devices(
                    [[ContainerDevice(uuid, CW_910B, 32768, 0)]]
                )
            }
        }
    }
    assert allocate_error(pod, {uuid: sick_and_full}) is None
    assert "is not on this node" in (allocate_error(pod, {}) or "")
