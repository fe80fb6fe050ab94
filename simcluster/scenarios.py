"""Scenarios: the objects and hardware a simulated cluster starts with."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from simcluster import guide_data, hami, resources
from simcluster.controllers.device_plugin import apply_registration
from simcluster.controllers.kubelet import node_ip, pod_ip, start_pod
from simcluster.controllers.workloads import pod_from_template
from simcluster.hardware import Chip, Hardware, die_id
from simcluster.plugin_pods import (
    DUO_NODE,
    NODE_CONFIG_PATH,
    PLUGIN_IMAGE,
    PLUGIN_V14_IMAGE,
    daemonset,
    node_config_map,
    node_config_yaml,
)
from simcluster.plugin_start import NodeSettings, node_settings, plugin_version
from simcluster.resources import ResourceType
from simcluster.store import Obj, Store

SCENARIOS = ("guide", "scale", "empty", "burst", "nodeconfig")
PRIORITY_CLASSES: dict[str, tuple[int, str]] = {
    "system-node-critical": (
        2000001000,
        "Used for system critical pods that must not be moved from their current node.",
    ),
    "system-cluster-critical": (
        2000000000,
        "Used for system critical pods that must run in the cluster, "
        "but can be moved to another node if necessary.",
    ),
    "inference-high": (100000, "Online inference: scheduled first."),
    "batch-medium": (1000, "Batch jobs of normal importance."),
    "batch-low": (100, "Best-effort batch jobs."),
}
HAMI_V29_IMAGE = "projecthami/hami:v2.9.0"
# The schedulers of the real stack (kubestack): Volcano v1.15.1, whose
# deviceshare the binder models, and a HAMi scheduler that reads the list shape
# (v2.9+ reads only the wrapper and would crash on the guide's config).
VOLCANO_IMAGE = "volcanosh/vc-scheduler:v1.15.1"
HAMI_IMAGE = "projecthami/hami:v2.5.0"
SYSTEM_NAMESPACES = (
    "default",
    "kube-system",
    "kube-public",
    "kube-node-lease",
    "volcano-system",
)


@dataclass
class Scenario:
    """Objects to load (in order) and the simulated chips."""

    objects: list[tuple[ResourceType, Obj]] = field(default_factory=list)
    hardware: Hardware = field(default_factory=Hardware)

    def add(self, res: ResourceType, obj: Obj) -> Obj:
        """Queue an object for loading."""
        self.objects.append((res, obj))
        return obj

    def load(self, store: Store) -> None:
        """Create every object in the store (no watch history)."""
        for res, obj in self.objects:
            store.create(res, obj, record=False)


def _namespace(name: str) -> Obj:
    return {
        "metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name}},
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    }


def _pod_defaults(pod: Obj) -> Obj:
    spec = pod["spec"]
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    name = spec.get("priorityClassName")
    spec["priority"] = PRIORITY_CLASSES[name][0] if name in PRIORITY_CLASSES else 0
    return pod


def _running(pod: Obj) -> Obj:
    pod.setdefault("metadata", {}).setdefault("uid", str(uuid.uuid4()))
    start_pod(pod, None, ready=True)
    return pod


def _base(scn: Scenario, device_config: str = guide_data.DEVICE_CONFIG_YAML) -> None:
    """Namespaces, the two ConfigMaps, PriorityClasses and Volcano queues."""
    for name in SYSTEM_NAMESPACES:
        scn.add(resources.NAMESPACE, _namespace(name))
    scn.add(
        resources.CONFIGMAP,
        {
            "metadata": {
                "name": "hami-scheduler-device",
                "namespace": "kube-system",
                "labels": dict(guide_data.DEVICE_CONFIG_LABELS),
            },
            "data": {"device-config.yaml": device_config},
        },
    )
    scn.add(
        resources.CONFIGMAP,
        {
            "metadata": {
                "name": "volcano-scheduler-configmap",
                "namespace": "volcano-system",
            },
            "data": {
                "volcano-scheduler.conf": guide_data.VOLCANO_SCHEDULER_CONF_UPSTREAM
            },
        },
    )
    for name, (value, description) in PRIORITY_CLASSES.items():
        scn.add(
            resources.PRIORITYCLASS,
            {
                "metadata": {"name": name},
                "value": value,
                "globalDefault": False,
                "description": description,
                "preemptionPolicy": "PreemptLowerPriority",
            },
        )
    for name, weight in (("root", 1), ("default", 1)):
        queue: Obj = {
            "metadata": {"name": name},
            "spec": {"weight": weight, "reclaimable": name != "root"},
            "status": {"state": "Open"},
        }
        if name == "default":
            queue["spec"]["parent"] = "root"
        scn.add(resources.QUEUE, queue)


def _container(name: str, image: str, args: list[str] | None = None) -> Obj:
    container: Obj = {
        "name": name,
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
    }
    if args:
        container["args"] = args
    return container


def _deployment(
    scn: Scenario,
    namespace: str,
    name: str,
    image: str,
    nodes: list[str],
    args: list[str],
) -> None:
    labels = {"app": name}
    deploy: Obj = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": str(uuid.uuid4()),
            "generation": 1,
            "labels": dict(labels),
        },
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": dict(labels)},
            "strategy": {"type": "RollingUpdate"},
            "template": {
                "metadata": {"labels": dict(labels)},
                "spec": {
                    "priorityClassName": "system-cluster-critical",
                    "containers": [_container(name, image, args)],
                },
            },
        },
        "status": {
            "observedGeneration": 1,
            "replicas": 1,
            "updatedReplicas": 1,
            "readyReplicas": 1,
            "availableReplicas": 1,
            "conditions": [
                {
                    "type": "Available",
                    "status": "True",
                    "reason": "MinimumReplicasAvailable",
                },
                {
                    "type": "Progressing",
                    "status": "True",
                    "reason": "NewReplicaSetAvailable",
                },
            ],
        },
    }
    scn.add(resources.DEPLOYMENT, deploy)
    if nodes:
        scn.add(
            resources.POD, _running(_pod_defaults(pod_from_template(deploy, nodes[0])))
        )


def _node(
    name: str,
    chips: list[Chip],
    chip_types: list[hami.ChipTypeSpec],
    uid: str | None = None,
    created: str | None = None,
    plugin: tuple[tuple[int, int], NodeSettings] = (
        plugin_version(PLUGIN_IMAGE),
        NodeSettings(),
    ),
) -> Obj:
    node: Obj = {
        "metadata": {
            "name": name,
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/arch": "arm64",
                "kubernetes.io/os": "linux",
                "ascend": "on",
            },
            "annotations": {},
        },
        "spec": {},
        "status": json.loads(json.dumps(guide_data.NODE_STATUS)),
    }
    if uid:
        node["metadata"]["uid"] = uid
    if created:
        node["metadata"]["creationTimestamp"] = created
    for field_name in ("capacity", "allocatable"):
        node["status"][field_name] = {
            k: v
            for k, v in node["status"][field_name].items()
            if not k.startswith("huawei.com/")
        }
    digest = die_id(name).replace("-", "").lower()
    node["status"]["nodeInfo"].update(
        {
            "machineID": digest[:32],
            "systemUUID": str(uuid.UUID(digest[:32])),
            "bootID": str(uuid.UUID(digest[8:40])),
            "kernelVersion": "5.10.0-182.0.0.95.oe2203sp3.aarch64",
            "kubeProxyVersion": "",
            "operatingSystem": "linux",
        }
    )
    node["status"]["daemonEndpoints"] = {"kubeletEndpoint": {"Port": 10250}}
    node["status"]["addresses"] = [
        {"type": "InternalIP", "address": node_ip(name)},
        {"type": "Hostname", "address": name},
    ]
    apply_registration(
        node, chips, chip_types, False, datetime.now(UTC), plugin[0], plugin[1]
    )
    return node


Layout = list[tuple[str, str, list[tuple[str, bool]], list[int | None]]]


def _guide_nodes(
    scn: Scenario,
    chip_types: list[hami.ChipTypeSpec],
    version: tuple[int, int],
    nodes_310p: int,
    node_config: str | None,
) -> list[str]:
    """Add the guide's nodes (and the burst and Duo ones) registered as a
    plugin of ``version`` reading ``node_config`` registers them."""
    layout: Layout = [
        (guide_data.NODE_310P, "310P3", guide_data.CHIPS_310P, [None] * 4),
        (guide_data.NODE_910B, "910B4", guide_data.CHIPS_910B, [None] * 8),
        *(
            (
                f"npu-node-310p-{index:02d}",
                "310P3",
                [(die_id(f"burst-{index}-{chip}"), True) for chip in range(4)],
                [None] * 4,
            )
            for index in range(2, nodes_310p + 1)
        ),
    ]
    if node_config is not None:
        duo = [(die_id(f"duo-{chip}"), True) for chip in range(4)]
        layout.append((DUO_NODE, "310P3", duo, [0, 0, 1, 1]))
    names = []
    for name, chip_name, chip_list, cards in layout:
        chips = [
            Chip(uid, chip_name, healthy, card)
            for (uid, healthy), card in zip(chip_list, cards, strict=True)
        ]
        scn.hardware.set_node(name, chips)
        settings = NodeSettings()
        if node_config is not None:
            settings = node_settings(node_config, NODE_CONFIG_PATH, name, version)[0]
        scn.add(
            resources.NODE,
            _node(
                name,
                chips,
                chip_types,
                guide_data.NODE_UIDS.get(name)
                or str(uuid.uuid5(uuid.NAMESPACE_DNS, name)),
                guide_data.NODE_CREATED,
                (version, settings),
            ),
        )
        names.append(name)
    return names


def guide(nodes_310p: int = 1, node_config: bool = False) -> Scenario:
    """Two Ascend nodes of the guide, system workloads and the two fixture pods.

    Also what the pipeline example of docs/pipelines.md uses (namespace ``ci`` and the
    Volcano queue ``ci``), so the example runs verbatim against the demo.
    ``nodes_310p`` above 1 adds 310P nodes ``npu-node-310p-02`` on (4 healthy
    310P3 each): the ``burst`` scenario, as kubestack's. ``node_config``:
    ``nodeconfig``, with plugin v1.4.0 reading its node config, the wrapper
    shape, HAMi v2.9.0 and a 310P3 Duo node (simcluster/plugin_pods.py).
    """
    scn = Scenario()
    device_config = guide_data.DEVICE_CONFIG_YAML
    plugin_image = PLUGIN_IMAGE
    if node_config:
        device_config = guide_data.DEVICE_CONFIG_WRAPPER_YAML
        plugin_image = PLUGIN_V14_IMAGE
    _base(scn, device_config)
    scn.add(resources.NAMESPACE, _namespace("ci"))
    scn.add(
        resources.QUEUE,
        {
            "metadata": {"name": "ci"},
            "spec": {"weight": 1, "reclaimable": True, "parent": "root"},
            "status": {"state": "Open"},
        },
    )
    text = node_config_yaml() if node_config else None
    if text is not None:
        scn.add(resources.CONFIGMAP, node_config_map(text))
    names = _guide_nodes(
        scn,
        hami.chip_types_from_text(device_config),
        plugin_version(plugin_image),
        nodes_310p,
        text,
    )
    ds, plugin_pods = daemonset(names, plugin_image, node_config)
    scn.add(resources.DAEMONSET, ds)
    for pod in plugin_pods:
        scn.add(resources.POD, _running(_pod_defaults(pod)))
    _deployment(
        scn,
        "volcano-system",
        "volcano-scheduler",
        VOLCANO_IMAGE,
        names,
        ["--scheduler-conf=/volcano.scheduler/volcano-scheduler.conf"],
    )
    _deployment(
        scn,
        "kube-system",
        "hami-scheduler",
        HAMI_V29_IMAGE if node_config else HAMI_IMAGE,
        names,
        ["--device-config-file=/device-config.yaml"],
    )
    for fixture in (guide_data.POD_310P, guide_data.POD_910B):
        pod = json.loads(json.dumps(fixture))
        pod.pop("apiVersion", None)
        pod.pop("kind", None)
        kept = dict(pod["status"])
        _running(pod)
        pod["status"].update(kept)
        pod["status"]["podIPs"] = [{"ip": kept["podIP"]}]
        pod["status"]["hostIPs"] = [{"ip": kept["hostIP"]}]
        scn.add(resources.POD, pod)
    return scn


def _slice_annotations(
    node: str, cw: str, chip_uuid: str, memory: int, template: str, stamp: str
) -> dict[str, str]:
    device = hami.ContainerDevice(chip_uuid, cw, memory, 0)
    return {
        hami.VGPU_NODE: node,
        "hami.io/vgpu-time": stamp,
        "predicate-time": stamp,
        hami.to_allocate_key(cw): hami.encode_pod_devices([[]]),
        hami.allocated_key(cw): hami.encode_pod_devices([[device]]),
        f"huawei.com/{cw}": hami.render_runtime_info(
            [hami.RuntimeInfo(chip_uuid, template, memory, 0)]
        ),
        hami.BIND_PHASE: "success",
        "hami.io/bind-time": stamp,
    }


def scale(nodes: int = 1000, pods: int = 30000, slice_pods: int = 20000) -> Scenario:
    """``nodes`` nodes of 8 chips (310P3 and 910B4 alternating) and ``pods`` pods.

    The first ``slice_pods`` pods (while room lasts) hold a vNPU slice, taken
    round-robin over the healthy chips; the others run without one.
    """
    scn = Scenario()
    _base(scn)
    node_names, chips_free = _scale_nodes(scn, nodes)
    _deployment(
        scn,
        "volcano-system",
        "volcano-scheduler",
        VOLCANO_IMAGE,
        node_names,
        [],
    )
    _deployment(scn, "kube-system", "hami-scheduler", HAMI_IMAGE, node_names, [])
    namespaces = [f"team-{k:02d}" for k in range(20)]
    for ns in namespaces:
        scn.add(resources.NAMESPACE, _namespace(ns))
    stamp = str(int(datetime.now(UTC).timestamp()))
    created = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    cursor = 0
    made_slices = 0
    for n in range(pods):
        ns = namespaces[n % len(namespaces)]
        name = f"job-{n:06d}"
        uid = str(uuid.uuid4())
        pod: Obj = {
            "metadata": {
                "name": name,
                "namespace": ns,
                "uid": uid,
                "creationTimestamp": created,
                "labels": {"app": name},
            },
            "spec": {
                "containers": [
                    {"name": "main", "image": "busybox:1.36", "resources": {}}
                ]
            },
        }
        placed = None
        if made_slices < slice_pods and chips_free:
            placed, cursor = _next_free_chip(chips_free, cursor, n)
        if placed is not None:
            entry, template = placed
            node = _give_slice(pod, entry, template, stamp)
            made_slices += 1
        else:
            node = node_names[n % len(node_names)]
        pod["spec"]["nodeName"] = node
        _pod_defaults(pod)
        pod["status"] = _running_status(node, uid, created)
        scn.add(resources.POD, pod)
    return scn


def _scale_nodes(scn: Scenario, nodes: int) -> tuple[list[str], list[list[Any]]]:
    """Add the scale scenario's nodes, one chip in 400 unhealthy.

    Returns:
        The node names, and per healthy chip ``[node, chip, chip type, slots
        left, memory left]``, in order.
    """
    chip_types = {
        c.chip_name: c for c in hami.chip_types_from_text(guide_data.DEVICE_CONFIG_YAML)
    }
    all_types = list(chip_types.values())
    chips_free: list[list[Any]] = []  # [node, chip, chip_type, slots left, memory left]
    node_names: list[str] = []
    for i in range(nodes):
        name = f"npu-node-{i:04d}"
        chip_name = "310P3" if i % 2 == 0 else "910B4"
        chips = [
            Chip(die_id(f"{name}/{k}"), chip_name, not (i % 50 == 7 and k == 7))
            for k in range(8)
        ]
        scn.hardware.set_node(name, chips)
        scn.add(resources.NODE, _node(name, chips, all_types))
        node_names.append(name)
        spec = chip_types[chip_name]
        count = hami.slots_per_chip(spec.memory_allocatable, spec.templates)
        chips_free.extend(
            [name, chip, spec, count, spec.memory_allocatable]
            for chip in chips
            if chip.healthy
        )
    return node_names, chips_free


def _next_free_chip(
    chips_free: list[list[Any]], cursor: int, n: int
) -> tuple[tuple[list[Any], Any] | None, int]:
    """Book a template on the next chip (round-robin from ``cursor``) with room.

    The template rotates with the round and the pod number ``n``, so the
    slices mix every template of the chip type.

    Returns:
        ``(chip entry, template)`` or None when no chip has room, and the
        cursor to start from next.
    """
    for _ in range(len(chips_free)):
        entry = chips_free[cursor % len(chips_free)]
        cursor += 1
        spec = entry[2]
        template = spec.templates[(cursor // len(chips_free) + n) % len(spec.templates)]
        if entry[3] > 0 and entry[4] >= template.memory:
            entry[3] -= 1
            entry[4] -= template.memory
            return (entry, template), cursor
    return None, cursor


def _give_slice(pod: Obj, entry: list[Any], template: Any, stamp: str) -> str:
    """Make ``pod`` hold a slice of ``template`` on the entry's chip, as HAMi
    annotates a bound pod; returns the chip's node."""
    node, chip, spec, _, _ = entry
    cw = spec.common_word
    limits = {
        spec.resource_name: "1",
        spec.resource_memory_name: str(template.memory),
    }
    pod["spec"]["containers"][0]["resources"] = {
        "limits": limits,
        "requests": dict(limits),
    }
    pod["spec"]["schedulerName"] = "volcano"
    pod["spec"]["priorityClassName"] = "batch-medium"
    pod["metadata"]["annotations"] = _slice_annotations(
        node, cw, chip.uuid, template.memory, template.name, stamp
    )
    return node


def _running_status(node: str, uid: str, created: str) -> dict[str, Any]:
    """The status of a pod running (and Ready) on ``node`` since ``created``."""
    return {
        "phase": "Running",
        "startTime": created,
        "hostIP": node_ip(node),
        "podIP": pod_ip(uid),
        "qosClass": "BestEffort",
        "conditions": [
            {
                "type": t,
                "status": "True",
                "lastProbeTime": None,
                "lastTransitionTime": created,
            }
            for t in ("Initialized", "Ready", "ContainersReady", "PodScheduled")
        ],
    }


def build(
    name: str, *, nodes: int = 1000, pods: int = 30000, slice_pods: int = 20000
) -> Scenario:
    """Build a scenario by name (``guide``, ``scale``, ``empty``, ``burst``:
    the guide with ``nodes`` 310P nodes, ``nodeconfig``: the guide with plugin
    v1.4.0 reading its node config)."""
    if name == "guide":
        return guide()
    if name == "burst":
        return guide(nodes_310p=nodes)
    if name == "nodeconfig":
        return guide(node_config=True)
    if name == "scale":
        return scale(nodes, pods, slice_pods)
    if name == "empty":
        scn = Scenario()
        for ns in SYSTEM_NAMESPACES[:4]:
            scn.add(resources.NAMESPACE, _namespace(ns))
        return scn
    raise ValueError(f"unknown scenario {name!r}; choose one of {', '.join(SCENARIOS)}")
