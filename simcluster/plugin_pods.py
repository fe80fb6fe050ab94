"""The device plugin's DaemonSet in the scenarios, and the node config of ``nodeconfig``.

The DaemonSet is the upstream manifest's in what the simulated plugin reads:
the device config (and, when wired, the node config) mounted from ConfigMaps
by ``subPath``, ``NODE_NAME`` from the node, and ``--node_config_file`` only
when the node config is wired (upstream mounts the file but leaves the flag
out).
"""

from __future__ import annotations

import uuid

from simcluster import guide_data
from simcluster.controllers.workloads import pod_from_template
from simcluster.store import Obj

# The guide's plugin (v1.1.0): it reads the list shape of the device config the
# scenario has (v1.3+ reads only the wrapper shape) and writes no hami-vnpu-core.
PLUGIN_IMAGE = "projecthami/ascend-device-plugin:v1.1.0"
# The nodeconfig scenario's plugin, the first to read filterDevices, with the
# node config wired.
PLUGIN_V14_IMAGE = "projecthami/ascend-device-plugin:v1.4.0"
NODE_CONFIG = ("hami-device-node-config", "node-config.yaml")
NODE_CONFIG_PATH = "/node-config.yaml"


DUO_NODE = "npu-node-310p-duo-01"


def node_config_yaml() -> str:
    """The nodeconfig scenario's ``node-config.yaml``: the 910B4 node's sick
    chip left out by its UUID, and card 1 of the 310P3 Duo node (both its
    chips) by its index, a card id."""
    sick = next(uid for uid, healthy in guide_data.CHIPS_910B if not healthy)
    return (
        "nodes:\n"
        "  # the failing chip, isolated by its die UUID (the remaining chips\n"
        "  # register with indexes 0..6: chips 6 and 7 become 5 and 6)\n"
        f"  - name: {guide_data.NODE_910B}\n"
        "    filterDevices:\n"
        f'      uuid: ["{sick}"]\n'
        "  # a 310P3 Duo: index is a card id, so 1 leaves out both chips of card 1\n"
        f"  - name: {DUO_NODE}\n"
        "    filterDevices:\n"
        "      index: [1]\n"
    )


def node_config_map(text: str) -> Obj:
    """The ConfigMap ``kube-system/hami-device-node-config`` holding ``text``."""
    return {
        "metadata": {"name": NODE_CONFIG[0], "namespace": "kube-system"},
        "data": {NODE_CONFIG[1]: text},
    }


def plugin_container(node_config: bool, image: str) -> Obj:
    """The plugin's container as the upstream manifest has it: the device
    config (and, from v1.3, the node config) mounted from ConfigMaps by
    ``subPath``, ``NODE_NAME`` from the node; ``--node_config_file`` only
    when ``node_config``."""
    args = ["--config_file", "/device-config.yaml"]
    mounts: list[Obj] = [
        {
            "name": "ascend-config",
            "mountPath": "/device-config.yaml",
            "subPath": "device-config.yaml",
        }
    ]
    if node_config:
        args += ["--node_config_file", NODE_CONFIG_PATH]
        mounts.append(
            {
                "name": "ascend-node-config",
                "mountPath": NODE_CONFIG_PATH,
                "subPath": NODE_CONFIG[1],
            }
        )
    container: Obj = {
        "name": "device-plugin",
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
        "args": args,
        "volumeMounts": mounts,
    }
    container["env"] = [
        {
            "name": "NODE_NAME",
            "valueFrom": {
                "fieldRef": {"apiVersion": "v1", "fieldPath": "spec.nodeName"}
            },
        }
    ]
    return container


def plugin_volumes(node_config: bool) -> list[Obj]:
    volumes: list[Obj] = [
        {"name": "ascend-config", "configMap": {"name": "hami-scheduler-device"}}
    ]
    if node_config:
        volumes.append(
            {"name": "ascend-node-config", "configMap": {"name": NODE_CONFIG[0]}}
        )
    return volumes


def daemonset(
    nodes: list[str],
    image: str = PLUGIN_IMAGE,
    node_config: bool = False,
) -> tuple[Obj, list[Obj]]:
    """The plugin DaemonSet and its pods (not yet running) on ``nodes``."""
    labels = {
        "app.kubernetes.io/component": "hami-device-plugin",
        "app": "hami-ascend-device-plugin",
    }
    ds: Obj = {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {
            "name": "hami-ascend-device-plugin",
            "namespace": "kube-system",
            "uid": str(uuid.uuid4()),
            "generation": 1,
            "labels": dict(labels),
        },
        "spec": {
            "selector": {"matchLabels": dict(labels)},
            "updateStrategy": {"type": "RollingUpdate"},
            "template": {
                "metadata": {"labels": dict(labels)},
                "spec": {
                    "nodeSelector": {"ascend": "on"},
                    "priorityClassName": "system-node-critical",
                    "containers": [plugin_container(node_config, image)],
                    "volumes": plugin_volumes(node_config),
                },
            },
        },
        "status": {
            "observedGeneration": 1,
            "desiredNumberScheduled": len(nodes),
            "currentNumberScheduled": len(nodes),
            "numberMisscheduled": 0,
            "numberReady": len(nodes),
            "numberAvailable": len(nodes),
            "updatedNumberScheduled": len(nodes),
        },
    }
    return ds, [pod_from_template(ds, node) for node in nodes]
