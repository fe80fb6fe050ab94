"""Is the node config read at all? Health on the simulated cluster, over HTTP.

The guide scenario runs device plugin v1.1.0 with no node config wired; the
``nodeconfig`` scenario runs v1.4.0 with ``--node_config_file`` and the mount.
A DaemonSet is changed through the API as an operator would, and the patch the
portal offers is applied with kubectl, exactly as printed.
"""

from __future__ import annotations

import shlex
import subprocess

import pytest
from kubernetes import client, config

from apps.inventory.errors import NodeConfigNotRead
from apps.inventory.nodeconfig.health import (
    node_config_health,
    node_config_read_guard,
    node_config_readable,
)
from simcluster import guide_data

NS = "kube-system"
DS = "hami-ascend-device-plugin"
NODE_CONFIG_MAP = "hami-device-node-config"
pytestmark = pytest.mark.django_db
NODECONFIG = pytest.mark.parametrize("sim_options", [{"scenario": "nodeconfig"}])


@pytest.fixture
def api(kubeconfig) -> client.ApiClient:
    return config.new_client_from_config(config_file=str(kubeconfig))


@pytest.fixture
def mirror_node_config(cluster, api):
    """Store ``hami-device-node-config`` read from the cluster as sync's mirror
    of it would (that mirror is built separately)."""

    def run() -> None:
        from apps.inventory.sync.writer import ClusterWriter

        obj = api.sanitize_for_serialization(
            client.CoreV1Api(api).read_namespaced_config_map(NODE_CONFIG_MAP, NS)
        )
        ClusterWriter(cluster).replace_objects("ConfigMap", NS, NODE_CONFIG_MAP, [obj])

    return run


def _by_id(answer):
    return {c["id"]: c for c in answer["checks"]}


def test_guide_v110_is_not_read_and_says_why_with_the_patch(cluster):
    answer = node_config_health(cluster)
    checks = _by_id(answer)
    # then the version is why: v1.1.0 has no flag
    version = checks["plugin_version"]
    assert version["check_status"] == "fail"
    assert "device plugin v1.1.0 reads no node config" in version["message"]
    assert "--node_config_file" in version["message"]
    # and the fix upgrades the image, passes the flag, mounts the file, and
    # says the list-shaped device config must become the wrapper first
    fix = version["fix"]
    assert "projecthami/ascend-device-plugin:v1.4.0" in fix
    assert "wrapper shape" in fix
    patch = answer["patch"]
    (container,) = patch["spec"]["template"]["spec"]["containers"]
    assert container["name"] == "device-plugin"
    assert container["image"] == "projecthami/ascend-device-plugin:v1.4.0"
    assert container["args"][-2:] == ["--node_config_file", "/node-config.yaml"]
    # the other argument is kept: a strategic merge replaces args whole
    assert container["args"][:2] == ["--config_file", "/device-config.yaml"]
    assert container["volumeMounts"] == [
        {
            "name": "ascend-node-config",
            "mountPath": "/node-config.yaml",
            "subPath": "node-config.yaml",
        }
    ]
    assert patch["spec"]["template"]["spec"]["volumes"] == [
        {"name": "ascend-node-config", "configMap": {"name": "hami-device-node-config"}}
    ]
    assert answer["kubectl"].startswith(f"kubectl -n {NS} patch daemonset {DS} ")
    assert checks["node_config_flag"]["check_status"] == "fail"
    assert answer["readable"] is False
    # every Ascend node is told its node config is not read
    nodes = {row["name"]: row for row in answer["nodes"]}
    assert set(nodes) >= {guide_data.NODE_310P, guide_data.NODE_910B}
    row = nodes[guide_data.NODE_910B]
    assert row["check_status"] == "fail"
    assert row["plugin_version"] == "v1.1.0"
    assert row["applies"] == []
    assert row["version_source"] == "daemonset"


def test_guide_publish_guard_refuses_unless_confirmed(cluster):
    problems = node_config_readable(cluster)
    assert [p["id"] for p in problems] == [
        "plugin_version",
        "node_config_flag",
        "node_config_mount",
    ]
    with pytest.raises(NodeConfigNotRead) as refused:
        node_config_read_guard(cluster, confirmed=False)
    (said,) = refused.value.detail["confirm_unread"]
    assert "v1.1.0 reads no node config" in said
    assert said.endswith("send confirm_unread: true to write it anyway")
    assert node_config_read_guard(cluster, confirmed=True) == problems


@NODECONFIG
def test_nodeconfig_scenario_is_wired_and_healthy(cluster, mirror_node_config):
    mirror_node_config()
    answer = node_config_health(cluster)
    checks = _by_id(answer)
    assert {c["id"]: c["check_status"] for c in answer["checks"]} == {
        "device_plugin_daemonset": "ok",
        "plugin_version": "ok",
        "node_config_flag": "ok",
        "node_config_mount": "ok",
        "node_config_map": "ok",
    }
    assert "subPath" in checks["node_config_mount"]["message"]
    assert answer["readable"] is True
    assert answer["patch"] is None
    assert answer["kubectl"] == ""
    assert node_config_readable(cluster) == []
    nodes = {row["name"]: row for row in answer["nodes"]}
    isolated = nodes[guide_data.NODE_910B]
    assert isolated["has_entry"] is True
    assert isolated["applies"] == ["hami-vnpu-core", "vDeviceCount", "filterDevices"]
    assert "1 chip filtered by uuid" in isolated["message"]
    assert nodes[guide_data.NODE_310P]["has_entry"] is False
    assert "runs on the plugin's defaults" in nodes[guide_data.NODE_310P]["message"]


@NODECONFIG
@pytest.mark.tools  # runs the kubectl it prints: waits for kubectl's build first
def test_nodeconfig_scenario_without_the_flag_and_the_offered_patch(
    cluster, api, resync, kubeconfig
):
    # given the DaemonSet as upstream ships it: the file mounted, the flag left out
    apps = client.AppsV1Api(api)
    ds = apps.read_namespaced_daemon_set(DS, NS)
    container = ds.spec.template.spec.containers[0]
    container.args = ["--config_file", "/device-config.yaml"]
    apps.replace_namespaced_daemon_set(DS, NS, ds)
    resync()
    # then exactly that is the problem, and publishing would be refused
    answer = node_config_health(cluster)
    flag = _by_id(answer)["node_config_flag"]
    assert flag["check_status"] == "fail"
    assert flag["message"] == (
        "the file is mounted at /node-config.yaml but container device-plugin of "
        f"{NS}/{DS} is not given --node_config_file: the plugin never reads the "
        "node config (the upstream manifest leaves the flag out)"
    )
    assert _by_id(answer)["node_config_mount"]["check_status"] == "ok"
    assert [p["id"] for p in node_config_readable(cluster)] == ["node_config_flag"]
    # the patch only adds the argument (the mount is there)
    (patched,) = answer["patch"]["spec"]["template"]["spec"]["containers"]
    assert set(patched) == {"name", "args"}
    # when the kubectl command it prints is run as printed
    argv = shlex.split(answer["kubectl"])
    done = subprocess.run(
        [argv[0], "--kubeconfig", str(kubeconfig), *argv[1:]],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    resync()
    # then the plugin reads the node config again
    assert node_config_readable(cluster) == []
    live = apps.read_namespaced_daemon_set(DS, NS).spec.template.spec.containers[0]
    assert live.args == [
        "--config_file",
        "/device-config.yaml",
        "--node_config_file",
        "/node-config.yaml",
    ]
