"""The device plugin's pods and its node config, as an operator handles them
through the ``kubernetes`` client: the same on simcluster and on the real
control plane (tests/simcluster/test_node_config.py,
tests/realstack/test_node_config.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from kubernetes import client

NS = "kube-system"
DS = "hami-ascend-device-plugin"
CM = "hami-device-node-config"
KEY = "node-config.yaml"


def chips(core: client.CoreV1Api, node: str, cw: str) -> list[dict[str, Any]]:
    """The chips the plugin registered on ``node`` (``hami.io/node-register-<cw>``)."""
    text = core.read_node(node).metadata.annotations[f"hami.io/node-register-{cw}"]
    return json.loads(text)


def allocatable(core: client.CoreV1Api, node: str, cw: str) -> str:
    """``huawei.com/<cw>`` in the node's allocatable."""
    return core.read_node(node).status.allocatable[f"huawei.com/{cw}"]


def plugin_pod(core: client.CoreV1Api, node: str) -> client.V1Pod | None:
    """The running plugin pod on ``node`` (not one being deleted), or None."""
    pods = core.list_namespaced_pod(
        NS, label_selector=f"app={DS}", field_selector=f"spec.nodeName={node}"
    ).items
    running = [
        p
        for p in pods
        if p.status.phase == "Running" and p.metadata.deletion_timestamp is None
    ]
    return running[0] if running else None


def restart_plugin(
    core: client.CoreV1Api, node: str, wait_for: Callable[..., Any]
) -> client.V1Pod:
    """Delete the plugin pod on ``node``; the DaemonSet makes a new one."""
    old = plugin_pod(core, node)
    assert old is not None
    core.delete_namespaced_pod(old.metadata.name, NS)

    def replaced() -> client.V1Pod | None:
        pod = plugin_pod(core, node)
        return pod if pod is not None and pod.metadata.uid != old.metadata.uid else None

    return wait_for(replaced)


def node_config(core: client.CoreV1Api) -> str:
    """The text of ``node-config.yaml`` in the ConfigMap."""
    return core.read_namespaced_config_map(CM, NS).data[KEY]


def set_node_config(core: client.CoreV1Api, text: str) -> None:
    """Replace ``node-config.yaml`` (nothing else is restarted)."""
    body = {"metadata": {"name": CM, "namespace": NS}, "data": {KEY: text}}
    core.replace_namespaced_config_map(CM, NS, body)


def set_plugin(apps: client.AppsV1Api, version: str, flag: bool) -> None:
    """Roll the plugin DaemonSet to ``version``, with or without the flag."""
    ds = apps.read_namespaced_daemon_set(DS, NS)
    container = ds.spec.template.spec.containers[0]
    args = ["--config_file", "/device-config.yaml"]
    if flag:
        args += ["--node_config_file", "/node-config.yaml"]
    image = f"projecthami/ascend-device-plugin:{version}"
    patch = {"name": container.name, "image": image, "args": args}
    apps.patch_namespaced_daemon_set(
        DS, NS, {"spec": {"template": {"spec": {"containers": [patch]}}}}
    )
