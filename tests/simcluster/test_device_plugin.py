"""The simulated HAMi Ascend device plugin: node registration as upstream writes it."""

from __future__ import annotations

import json
import re
from pathlib import Path

from kubernetes import client

from apps.inventory.hami.annotations import parse_node_register
from simcluster.controllers.device_plugin import DevicePlugin

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

FIELDS = ("id", "index", "count", "devmem", "devcore", "type", "health", "custominfo")


def _registered(node: client.V1Node, cw: str) -> list[tuple]:
    devices = parse_node_register(
        node.metadata.annotations[f"hami.io/node-register-{cw}"]
    )
    return [
        tuple(
            getattr(d, f) if f != "custominfo" else dict(d.custominfo) for f in FIELDS
        )
        for d in devices
    ]


def _as_the_real_plugin_writes(fixture: dict, cw: str) -> dict:
    """The fixture node as a released plugin writes it.

    The fixtures were constructed from the plugin's source, not captured; the
    real plugin (docs/scheduler-behaviour.md, and kubestack) also writes
    ``"devicepairscore":{}`` in each chip, drops a sick chip's slots from
    ``huawei.com/<cw>``, and (v1.1.0, the guide's) writes no ``hami-vnpu-core``.
    """
    annotations = dict(fixture["metadata"]["annotations"])
    key = f"hami.io/node-register-{cw}"
    chips = json.loads(annotations[key])
    annotations[key] = json.dumps(
        [{**chip, "devicepairscore": {}} for chip in chips], separators=(",", ":")
    )
    annotations.pop("hami-vnpu-core", None)
    healthy = sum(1 for chip in chips if chip.get("health"))
    slots = str(healthy * chips[0]["count"])
    return {"annotations": annotations, "slots": slots}


def test_registration_equals_fixtures(core: client.CoreV1Api) -> None:
    for fixture, cw in (
        ("node-310p3.json", "Ascend310P"),
        ("node-910b4.json", "Ascend910B4"),
    ):
        expected = json.loads((FIXTURES / fixture).read_text())
        real = _as_the_real_plugin_writes(expected, cw)
        node = core.read_node(expected["metadata"]["name"])
        fake = client.V1Node(
            metadata=client.V1ObjectMeta(annotations=real["annotations"])
        )
        assert _registered(node, cw) == _registered(fake, cw)
        # Byte-exact too: the plugin marshals like Go's json.Marshal with omitempty.
        key = f"hami.io/node-register-{cw}"
        assert node.metadata.annotations[key] == real["annotations"][key]
        assert "hami-vnpu-core" not in node.metadata.annotations
        assert re.fullmatch(
            r"Reported_\d{4}\.\d\d\.\d\d \d\d:\d\d:\d\d",
            node.metadata.annotations[f"hami.io/node-handshake-{cw}"],
        )
        assert node.status.capacity[f"huawei.com/{cw}"] == real["slots"]
        assert node.status.allocatable[f"huawei.com/{cw}"] == real["slots"]
    # the 910B4 node's sick chip 5 is not counted: 7 healthy chips x 4 slots
    assert (
        core.read_node("npu-node-910b-01").status.allocatable["huawei.com/Ascend910B4"]
        == "28"
    )


def test_unhealthy_chip_loses_health_key(sim_factory, tmp_path: Path, wait_for) -> None:
    sim = sim_factory(plugin_interval=60)
    core = client.CoreV1Api(sim.kubernetes_client(tmp_path / "kc"))
    sim.set_chip_health("npu-node-310p-01", 2, False)

    def unhealthy() -> bool:
        node = core.read_node("npu-node-310p-01")
        return not _registered(node, "Ascend310P")[2][FIELDS.index("health")]

    wait_for(unhealthy)
    raw = core.read_node("npu-node-310p-01").metadata.annotations[
        "hami.io/node-register-Ascend310P"
    ]
    assert (
        '"index":2,"count":7,"devmem":21527,"devcore":8,"type":"Ascend310P",'
        '"devicepairscore":{}}' in raw
    )
    # and its seven slots leave the node's allocatable: 3 healthy chips x 7
    node = core.read_node("npu-node-310p-01")
    assert node.status.allocatable["huawei.com/Ascend310P"] == "21"


def test_config_is_reread_when_the_daemonset_is_restarted(
    sim_factory, tmp_path: Path, wait_for
) -> None:
    sim = sim_factory(plugin_interval=0.2)
    api = sim.kubernetes_client(tmp_path / "kc")
    core, apps = client.CoreV1Api(api), client.AppsV1Api(api)
    cm = core.read_namespaced_config_map("hami-scheduler-device", "kube-system")
    text = cm.data["device-config.yaml"].replace("memory: 3072", "memory: 4096")
    core.patch_namespaced_config_map(
        "hami-scheduler-device", "kube-system", {"data": {"device-config.yaml": text}}
    )
    # several reports later, the running plugin still has the config it started with
    plugin = next(c for c in sim.manager.controllers if isinstance(c, DevicePlugin))
    after = plugin.reports + 3
    wait_for(lambda: plugin.reports >= after, timeout=5)
    node = core.read_node("npu-node-310p-01")
    assert _registered(node, "Ascend310P")[0][FIELDS.index("count")] == 7
    apps.patch_namespaced_daemon_set(
        "hami-ascend-device-plugin",
        "kube-system",
        {
            "spec": {
                "template": {
                    "metadata": {
                        "annotations": {
                            "kubectl.kubernetes.io/restartedAt": "2026-12-01T00:00:00Z"
                        }
                    }
                }
            }
        },
    )
    wait_for(
        lambda: (
            _registered(core.read_node("npu-node-310p-01"), "Ascend310P")[0][
                FIELDS.index("count")
            ]
            == 21527 // 4096
        )
    )
    assert (
        core.read_node("npu-node-310p-01").status.allocatable["huawei.com/Ascend310P"]
        == "20"
    )


def test_daemonset_has_one_pod_per_ascend_node(
    api_client: client.ApiClient, wait_for
) -> None:
    core, apps = client.CoreV1Api(api_client), client.AppsV1Api(api_client)
    pods = core.list_namespaced_pod(
        "kube-system", label_selector="app=hami-ascend-device-plugin"
    ).items
    assert sorted(p.spec.node_name for p in pods) == [
        "npu-node-310p-01",
        "npu-node-910b-01",
    ]
    assert all(p.metadata.owner_references[0].kind == "DaemonSet" for p in pods)
    core.patch_node("npu-node-910b-01", {"metadata": {"labels": {"ascend": "off"}}})

    def shrunk() -> bool:
        status = apps.read_namespaced_daemon_set(
            "hami-ascend-device-plugin", "kube-system"
        ).status
        return status.desired_number_scheduled == 1 and status.number_ready == 1

    wait_for(shrunk)
    wait_for(
        lambda: (
            [
                p.spec.node_name
                for p in core.list_namespaced_pod(
                    "kube-system", label_selector="app=hami-ascend-device-plugin"
                ).items
            ]
            == ["npu-node-310p-01"]
        )
    )


def test_one_chip_type_per_node_and_a_crash_loop_when_none_matches() -> None:
    from datetime import UTC, datetime

    from apps.inventory.hami.deviceconfig import parse_device_config
    from simcluster.controllers.device_plugin import apply_registration
    from simcluster.guide_data import DEVICE_CONFIG_YAML
    from simcluster.hardware import Chip

    chip_types = parse_device_config(DEVICE_CONFIG_YAML).chip_types()
    mixed = [Chip("A-1", "310P3"), Chip("B-1", "910B4"), Chip("A-2", "310P3")]
    node: dict = {"metadata": {}}
    assert apply_registration(node, mixed, chip_types, False, datetime.now(UTC))
    registered = [k for k in node["metadata"]["annotations"] if "node-register" in k]
    # the config lists 910B4 first: the plugin serves that one type only
    assert registered == ["hami.io/node-register-Ascend910B4"]
    assert node["status"]["allocatable"] == {"huawei.com/Ascend910B4": "4"}
    # plugin v1.3+ writes hami-vnpu-core; v1.1.0 (the guide's) does not
    assert node["metadata"]["annotations"]["hami-vnpu-core"] == "false"
    older: dict = {"metadata": {}}
    apply_registration(older, mixed, chip_types, False, datetime.now(UTC), (1, 1))
    assert "hami-vnpu-core" not in older["metadata"]["annotations"]

    unknown: dict = {"metadata": {}}
    assert not apply_registration(
        unknown, [Chip("C-1", "910C")], chip_types, False, datetime.now(UTC)
    )
    assert unknown == {"metadata": {}}  # nothing registered: the crash loop


def test_a_hami_core_node_registers_devcore_100_only_from_plugin_v1_4() -> None:
    """register.go: v1.4.0 registers HamiVnpuCoreMaxPercent (100) in hami-core
    mode; v1.3.0 registers the config's aiCore whatever the mode."""
    from datetime import UTC, datetime

    from apps.inventory.hami.annotations import parse_node_register, register_key
    from apps.inventory.hami.deviceconfig import parse_device_config
    from simcluster.controllers.device_plugin import apply_registration
    from simcluster.guide_data import DEVICE_CONFIG_YAML
    from simcluster.hardware import Chip

    chip_types = parse_device_config(DEVICE_CONFIG_YAML).chip_types()
    ai_core = next(ct for ct in chip_types if ct.common_word == "Ascend310P").ai_core
    chips = [Chip("A-1", "310P3"), Chip("A-2", "310P3")]

    def devcores(vnpu_core: bool, version: tuple[int, int]) -> set[int]:
        node: dict = {"metadata": {}}
        assert apply_registration(
            node, chips, chip_types, vnpu_core, datetime.now(UTC), version
        )
        text = node["metadata"]["annotations"][register_key("Ascend310P")]
        return {device.devcore for device in parse_node_register(text)}

    assert ai_core
    assert ai_core != 100
    assert devcores(True, (1, 4)) == {100}
    assert devcores(True, (1, 3)) == {ai_core}  # hami-core mode, yet aiCore
    assert devcores(False, (1, 4)) == {ai_core}
    assert devcores(True, (1, 1)) == {ai_core}  # no hami-core mode before v1.3
