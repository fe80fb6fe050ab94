"""What a stack holds once up: nodes, configuration, workloads, placed pods.

- ``guide``: the deployment guide's cluster: ``npu-node-310p-01`` (4 x 310P3) and
  ``npu-node-910b-01`` (8 x 910B4, chip 5 sick), the fixtures' die IDs; the device
  config and Volcano ConfigMaps; the guide's PriorityClasses; the Volcano and
  HAMi scheduler Deployments and the device plugin DaemonSet (their pods run on
  KWOK); two pods holding slices that the real Volcano places at start.
- ``empty``: the same control plane with no nodes and no pods.
- ``burst``: the guide's cluster plus more 310P nodes (``nodes_310p`` in all,
  ``npu-node-310p-02`` on, 4 x 310P3 each): room for a few hundred small vNPUs
  at once, for bursts of requests that the real Volcano must place.
- ``nodeconfig``: the guide with plugin v1.4.0 reading its node config
  (``hami-device-node-config`` mounted and passed with ``--node_config_file``),
  the device config in the wrapper shape and a 310P3 Duo node, as simcluster's
  ``nodeconfig``: the 910B4 node's sick chip and the Duo's card 1 left out.
  The guide and the others keep plugin v1.1.0 without the flag.
- ``scale``: ``nodes`` nodes of 8 chips (310P3 and 910B4 alternating) and
  ``pods`` pods, ``slice_pods`` of them holding a slice, created already bound
  and running (as if placed long ago: their status is written at creation, not
  by KWOK): for sync benchmarks, not for scheduling. Its nodes post their
  status and Volcano schedules less often, so that a thousand nodes leave the
  two cores of a small machine to the benchmark (see :class:`Scale`).
"""

from __future__ import annotations

import json
import random
import time
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from apps.inventory.hami.annotations import (
    ContainerDevice,
    allocated_key,
    encode_pod_devices,
)
from apps.inventory.hami.runtime_info import (
    RuntimeInfo,
    render_runtime_info,
)
from kubestack import hami, kwok, volcano
from kubestack.deviceplugin import REPORT_INTERVAL, NodeHardware
from kubestack.pluginpods import PLUGIN_DAEMONSET
from kubestack.processes import StackError, wait_until
from simcluster import guide_data
from simcluster.hardware import Chip, die_id
from simcluster.plugin_pods import (
    DUO_NODE,
    PLUGIN_IMAGE,
    PLUGIN_V14_IMAGE,
    node_config_map,
    node_config_yaml,
    plugin_container,
    plugin_volumes,
)
from simcluster.plugin_start import plugin_version

if TYPE_CHECKING:
    from kubestack.stack import KubeStack

PRIORITY_CLASSES = {"inference-high": 100000, "batch-medium": 1000, "batch-low": 100}
IMAGE = "swr.cn-south-1.myhuaweicloud.com/ascendhub/ascend-pytorch:24.0.RC1-A2-1.11.0-ubuntu20.04"


def node_manifest(node: NodeHardware) -> dict[str, Any]:
    """A Node as its kubelet registers it (before the device plugin reports)."""
    resources = {"cpu": "192", "memory": "1056432196Ki", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": node.name,
            "labels": {
                "kubernetes.io/hostname": node.name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "arm64",
                "ascend": "on",
                kwok.NODE_LABEL: "true",
                **node.labels,
            },
            "annotations": {"kwok.x-k8s.io/node": "fake"},
        },
        "status": {
            "capacity": resources,
            "allocatable": resources,
            "nodeInfo": {
                "architecture": "arm64",
                "operatingSystem": "linux",
                "machineID": "",
                "systemUUID": "",
                "bootID": "",
                "kernelVersion": "5.10.0-136.12.0.86.oe2203sp1.aarch64",
                "kubeProxyVersion": "",
                "osImage": "openEuler 22.03 (LTS-SP2)",
                "kubeletVersion": "v1.35.3",
                "containerRuntimeVersion": "containerd://1.7.22",
            },
        },
    }


# How long a pod whose process stops on SIGTERM takes to go once deleted (KWOK
# removes a deleted pod at its deletionTimestamp, kwok.py). Without a grace
# period of its own a pod is ``sleep``, which ignores SIGTERM and holds its
# vNPU for Kubernetes' default 30 s: every test that preempted or drained one
# waited that out. A few seconds still leave a terminating pod on its chip
# for longer than Volcano takes to bind into it (it runs a session a second).
STOPS_ON_SIGTERM_SECONDS = 3


def slice_pod(
    name: str,
    chip_type: str,
    memory: int,
    priority_class: str = "batch-low",
    namespace: str = "default",
    queue: str | None = None,
    grace_seconds: int | None = None,
) -> dict[str, Any]:
    """A pod asking Volcano for one vNPU of ``memory`` MB of ``chip_type``;
    ``grace_seconds`` is its termination grace period (Kubernetes' 30 s
    unless given)."""
    resources = {
        "cpu": "1",
        "memory": "1000Mi",
        f"huawei.com/{chip_type}": "1",
        f"huawei.com/{chip_type}-memory": str(memory),
    }
    annotations = {"scheduling.volcano.sh/queue-name": queue} if queue else {}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {"app": name},
            "annotations": annotations,
        },
        "spec": {
            "schedulerName": "volcano",
            "priorityClassName": priority_class,
            "restartPolicy": "Never",
            **(
                {}
                if grace_seconds is None
                else {"terminationGracePeriodSeconds": grace_seconds}
            ),
            "containers": [
                {
                    "name": "npu-container",
                    "image": IMAGE,
                    "command": ["sleep"],
                    "args": ["100000"],
                    "resources": {"limits": resources, "requests": resources},
                }
            ],
        },
    }


def _workload(
    kind: str, namespace: str, name: str, image: str, node_selector: dict[str, str]
) -> dict[str, Any]:
    labels = {"app": name}
    template = {
        "metadata": {"labels": labels},
        "spec": {
            "nodeSelector": node_selector,
            "tolerations": [{"operator": "Exists"}],
            # KWOK keeps a deleted pod until its grace period ends (kwok.py); the
            # default 30 s would make every rollout restart in the tests last 30 s.
            "terminationGracePeriodSeconds": 2,
            "containers": [{"name": name, "image": image}],
        },
    }
    spec: dict[str, Any] = {"selector": {"matchLabels": labels}, "template": template}
    if kind == "Deployment":
        spec["replicas"] = 1
    return {
        "apiVersion": "apps/v1",
        "kind": kind,
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": spec,
    }


class Scenario:
    """Base: nodes, and the objects every scenario has."""

    name = "empty"
    # KWOK posts each node's status after a delay it draws from these two
    # (kwok.py: KWOK's duration and jitter, the jitter an upper bound); the
    # device plugin reports every plugin_report_seconds; Volcano opens a
    # scheduling session every schedule_period_seconds.
    heartbeat_seconds: float = kwok.HEARTBEAT_SECONDS
    heartbeat_jitter_seconds: float = kwok.HEARTBEAT_JITTER_SECONDS
    plugin_report_seconds: float = REPORT_INTERVAL
    schedule_period_seconds: float = 1
    plugin_daemonset = True  # the device plugin's DaemonSet (a pod a node)
    # The guide's plugin (v1.1.0) reading the list shape; the node config
    # (``hami-device-node-config``'s text) wired into the DaemonSet, or None.
    plugin_image = PLUGIN_IMAGE
    device_config = guide_data.DEVICE_CONFIG_YAML
    node_config: str | None = None

    def __init__(self, seed: int | None = None) -> None:
        self.random = random.Random(seed)  # noqa: S311 - test data, not secrets
        self.nodes: list[NodeHardware] = []
        self.placed: list[tuple[str, str]] = []  # (namespace, name) Volcano placed

    def install(self, stack: KubeStack) -> None:
        """Create configuration, nodes and workloads; start vc-scheduler (and,
        with ``--scheduler hami``, HAMi's scheduler)."""
        on_hami = stack.scheduler == "hami"
        device_config = self.device_config
        if on_hami:
            # What a HAMi v2.9.0 site has: the same chip types and templates
            # in the only shape v2.9.0 reads, and a device plugin (v1.3.0)
            # that reads it too (hami.py).
            device_config = hami.wrapper_shape(device_config)
            for node in self.nodes:
                node.plugin_version = max(node.plugin_version, hami.PLUGIN_VERSION)
        documents: list[dict[str, Any]] = [
            {
                "apiVersion": "scheduling.k8s.io/v1",
                "kind": "PriorityClass",
                "metadata": {"name": name},
                "value": value,
                "globalDefault": False,
            }
            for name, value in PRIORITY_CLASSES.items()
        ]
        documents += [
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {
                    "name": "hami-scheduler-device",
                    "namespace": "kube-system",
                    "labels": guide_data.DEVICE_CONFIG_LABELS,
                },
                "data": {"device-config.yaml": device_config},
            },
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {
                    "name": volcano.SCHEDULER_CONFIGMAP[1],
                    "namespace": volcano.SCHEDULER_CONFIGMAP[0],
                },
                "data": {volcano.SCHEDULER_CONF_KEY: volcano.SCHEDULER_CONF},
            },
        ]
        if self.node_config is not None:
            documents.append(
                {"apiVersion": "v1", "kind": "ConfigMap"}
                | node_config_map(self.node_config)
            )
        stack.create_objects(documents)
        create_nodes(stack, [node_manifest(node) for node in self.nodes])
        selector = {"ascend": "on"}
        documents = [
            _workload(
                "Deployment",
                "volcano-system",
                "volcano-scheduler",
                "volcanosh/vc-scheduler:v1.15.1",
                selector,
            ),
            _workload(
                "Deployment",
                "kube-system",
                "hami-scheduler",
                hami.IMAGE if on_hami else "projecthami/hami:v2.5.0",
                selector,
            ),
        ]
        if self.plugin_daemonset:
            documents.append(self._plugin_daemonset(on_hami))
        stack.create_objects(documents)
        if stack.device_plugin is None:
            raise StackError("the device plugin must run before a scenario installs")
        # The plugin starts on each node as its DaemonSet pod runs there.
        stack.device_plugin.add_nodes(self.nodes)
        stack.start_volcano_scheduler()
        if self.nodes:
            # A second more for every ten nodes: KWOK readies a thousand in turn.
            wait_nodes_ready(stack, self.nodes, 60 + len(self.nodes) // 10)
            stack.wait_plugins([node.name for node in self.nodes])
        stack.say(f"{len(self.nodes)} nodes created, their chips registered")
        stack.wait_volcano_ready()
        if on_hami:
            stack.start_hami()
            stack.say("HAMi's scheduler, its kube-scheduler and webhook ready")

    def _plugin_daemonset(self, on_hami: bool) -> dict[str, Any]:
        """The plugin's DaemonSet as the upstream manifest has it (simcluster's
        container: the device config, and the node config when wired,
        mounted by ``subPath``); under HAMi's scheduler at least v1.3.0."""
        image = self.plugin_image
        if on_hami and plugin_version(image) < plugin_version(hami.PLUGIN_IMAGE):
            image = hami.PLUGIN_IMAGE
        wired = self.node_config is not None
        ds = _workload(
            "DaemonSet", "kube-system", PLUGIN_DAEMONSET[1], image, {"ascend": "on"}
        )
        spec = ds["spec"]["template"]["spec"]
        spec["priorityClassName"] = "system-node-critical"
        spec["containers"] = [plugin_container(wired, image)]
        spec["volumes"] = plugin_volumes(wired)
        return ds

    def place(self, stack: KubeStack) -> None:
        """Create the pods Volcano must place, and wait until they run."""


def create_nodes(stack: KubeStack, nodes: list[dict[str, Any]]) -> None:
    """Create Node objects a few at a time (``kubectl create`` makes them one
    after another: a thousand took half a minute)."""
    from kubernetes import client

    core = client.CoreV1Api(stack.kubernetes_client(pool_size=CREATE_THREADS))
    with ThreadPoolExecutor(CREATE_THREADS) as pool:
        for _ in pool.map(
            lambda node: core.create_node(node, _preload_content=False).drain_conn(),
            nodes,
        ):
            pass


def wait_nodes_ready(
    stack: KubeStack, nodes: list[NodeHardware], timeout: float
) -> None:
    """Wait until KWOK has made every one of ``nodes`` Ready.

    One list of KWOK's nodes a look (``kubectl wait`` asks node by node, a
    thousand one after another).
    """
    api = stack.kubernetes_client()
    names = {node.name for node in nodes}

    def ready() -> bool:
        response = api.call_api(
            "/api/v1/nodes",
            "GET",
            query_params=[("labelSelector", f"{kwok.NODE_LABEL}=true")],
            header_params={"Accept": "application/json"},
            auth_settings=["BearerToken"],
            _preload_content=False,
            _return_http_data_only=True,
        )
        found = {
            item["metadata"]["name"]
            for item in json.loads(response.data).get("items") or []
            if any(
                condition.get("type") == "Ready" and condition.get("status") == "True"
                for condition in (item.get("status") or {}).get("conditions") or []
            )
        }
        return names <= found

    wait_until("the nodes to be Ready", ready, timeout, list(stack.processes.values()))


class Guide(Scenario):
    """The deployment guide's two nodes (see module docstring)."""

    name = "guide"

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(seed)
        self.nodes = [
            NodeHardware(
                guide_data.NODE_310P,
                [
                    Chip(uuid, "310P3", healthy)
                    for uuid, healthy in guide_data.CHIPS_310P
                ],
            ),
            NodeHardware(
                guide_data.NODE_910B,
                [
                    Chip(uuid, "910B4", healthy)
                    for uuid, healthy in guide_data.CHIPS_910B
                ],
            ),
        ]

    def place(self, stack: KubeStack) -> None:
        pods = [
            slice_pod("npu-pod-310p", "Ascend310P", 3072, "batch-low"),
            slice_pod("npu-pod-910b", "Ascend910B4", 8192, "inference-high"),
        ]
        if stack.scheduler == "hami":
            for pod in pods:
                # As HAMi's docs write them: its webhook sets the scheduler.
                del pod["spec"]["schedulerName"]
        self.placed = place_until_running(stack, pods, timeout=120)
        off_the_sick_chip(stack, pods[1])


def off_the_sick_chip(
    stack: KubeStack,
    pod: dict[str, Any],
    tries: int = 10,
    sick: set[str] | None = None,
) -> None:
    """Place the guide's 910B4 pod again until it runs on a healthy chip.

    The guide's sick chip holds nothing, and the tests of chip health rely on
    it (tests/realstack/test_guarantees.py). But Volcano checks no chip
    health and picks any fitting chip of the node: about one stack start in
    eight it bound this pod to the sick chip, and those tests then failed.
    """
    if sick is None:
        sick = {uuid for uuid, healthy in guide_data.CHIPS_910B if not healthy}
    name = pod["metadata"]["name"]
    for _ in range(tries):
        found = json.loads(stack.kubectl("get", "pod", name, "-o", "json").stdout)
        annotations = found["metadata"].get("annotations") or {}
        chip = annotations.get(allocated_key("Ascend910B4"), "").split(",")[0]
        if chip not in sick:
            return
        stack.kubectl("delete", "pod", name, "--grace-period=0", "--force")
        place_until_running(stack, [json.loads(json.dumps(pod))], timeout=120)
    raise StackError(f"{name} was bound to the sick chip {tries} times in a row")


class Burst(Guide):
    """The guide's cluster with ``nodes_310p`` 310P nodes (see module docstring).

    All-310P extra nodes because their chips are healthy (Volcano does not
    check chip health, so a burst onto the 910B4 node meets its sick chip)
    and small: seven vir01 (or a vir04, a vir02 and a vir01) fill a chip.
    """

    name = "burst"

    def __init__(self, seed: int | None = None, nodes_310p: int = 12) -> None:
        super().__init__(seed)
        self.nodes += more_310p_nodes(nodes_310p)


class NodeConfig(Guide):
    """The guide's cluster with plugin v1.4.0 reading its node config.

    As simcluster's ``nodeconfig``: the device config in the wrapper shape
    (the only one v1.3+ reads), a 310P3 Duo node (two chips a card), and
    ``hami-device-node-config`` mounted and passed with
    ``--node_config_file``, leaving out the 910B4 node's sick chip by UUID and
    card 1 of the Duo node (both its chips) by index.
    """

    name = "nodeconfig"
    plugin_image = PLUGIN_V14_IMAGE
    device_config = guide_data.DEVICE_CONFIG_WRAPPER_YAML
    node_config = node_config_yaml()

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(seed)
        self.nodes.append(
            NodeHardware(
                DUO_NODE,
                [
                    Chip(die_id(f"duo-{chip}"), "310P3", card=chip // 2)
                    for chip in range(4)
                ],
            )
        )


def more_310p_nodes(nodes_310p: int) -> list[NodeHardware]:
    """310P nodes ``npu-node-310p-02`` to ``-<nodes_310p>`` (the guide has ``-01``),
    4 healthy 310P3 each, with the die IDs simcluster's ``burst`` gives them."""
    return [
        NodeHardware(
            f"npu-node-310p-{index:02d}",
            [Chip(die_id(f"burst-{index}-{chip}"), "310P3") for chip in range(4)],
        )
        for index in range(2, nodes_310p + 1)
    ]


def place_until_running(
    stack: KubeStack, pods: list[dict[str, Any]], timeout: float
) -> list[tuple[str, str]]:
    """Create ``pods`` and wait until each runs with its vNPU.

    Volcano checks no chip health, so on the 910B4 node (chip 5 sick) it may
    bind a pod to the sick chip; the device plugin's Allocate checks none
    either, so that pod runs there, as on a real node. Returns the
    (namespace, name) list.
    """
    keys = [
        (p["metadata"].get("namespace", "default"), p["metadata"]["name"]) for p in pods
    ]
    stack.create_objects(pods)
    wait_running(stack, keys, timeout=timeout)
    return keys


def wait_running(stack: KubeStack, pods: list[tuple[str, str]], timeout: float) -> None:
    """Wait until every pod runs with its vNPU allocated (bind-phase success)."""

    def done() -> bool:
        for namespace, name in pods:
            out = stack.kubectl(
                "get",
                "pod",
                "-n",
                namespace,
                name,
                "-o",
                "jsonpath={.status.phase}/{.metadata.annotations.hami\\.io/bind-phase}",
                check=False,
            ).stdout
            if out.startswith("Failed"):
                raise StackError(f"pod {namespace}/{name} failed: {out}")
            if out != "Running/success":
                return False
        return True

    try:
        wait_until(
            "the scheduler to place the scenario's pods",
            done,
            timeout,
            list(stack.processes.values()),
            interval=0.5,
        )
    except StackError as error:
        events = stack.kubectl(
            "get", "events", "-A", "--sort-by=.lastTimestamp", check=False
        ).stdout
        states = "\n".join(
            f"  {namespace}/{name}: "
            + stack.kubectl(
                "get",
                "pod",
                "-n",
                namespace,
                name,
                "-o",
                "jsonpath={.status.phase} bind-phase={.metadata.annotations.hami\\.io/bind-phase}",
                check=False,
            ).stdout
            for namespace, name in pods
        )
        raise StackError(
            f"{error}\npods (phase, bind-phase):\n{states}\nevents:\n{events[-3000:]}"
        ) from None


SCALE_GROUP = "scale"  # the PodGroup of every scale pod, one a namespace
CREATE_THREADS = 16
# Every KWOK node's address (stack.py: --node-ip): where the API server
# reaches its kubelet endpoint (kubestack/kubeletfront.py).
NODE_IP = "127.0.0.1"


def start_pods(
    stack: KubeStack, pods: list[dict[str, Any]], threads: int = CREATE_THREADS
) -> None:
    """Create ``pods`` and write each one's status as its kubelet would once
    its container started, on ``threads`` connections (the answers left
    unparsed: the typed client's models cost milliseconds a pod here).

    For pods labelled :data:`kwok.STARTED_BY_CREATOR`, which KWOK leaves
    alone. Left to KWOK, 30,000 pods kept it behind its watch: the API server
    cut it as too slow, KWOK listed every pod again and started thousands
    twice (each second start refused: two pod IPs): at 1x KWOK used 200 CPU
    seconds (the API server 360).
    """
    from kubernetes import client

    core = client.CoreV1Api(stack.kubernetes_client(pool_size=threads))

    def start(indexed: tuple[int, dict[str, Any]]) -> None:
        index, pod = indexed
        meta = pod["metadata"]
        core.create_namespaced_pod(
            meta["namespace"], pod, _preload_content=False
        ).drain_conn()
        core.patch_namespaced_pod_status(
            meta["name"],
            meta["namespace"],
            {"status": running_status(pod, scale_pod_ip(index))},
            _content_type="application/merge-patch+json",
            _preload_content=False,
        ).drain_conn()

    with ThreadPoolExecutor(threads) as pool:
        for _ in pool.map(start, enumerate(pods)):
            pass


def scale_pod_ip(index: int) -> str:
    """A pod IP of its own (10.64.0.1 on), apart from KWOK's 172.16.0.0/16."""
    n = index + 1
    return f"10.{64 + n // 65536}.{n // 256 % 256}.{n % 256}"


def running_status(pod: dict[str, Any], pod_ip: str) -> dict[str, Any]:
    """The status of ``pod`` once its containers run (as KWOK's pod-ready writes)."""
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return {
        "phase": "Running",
        "startTime": now,
        "hostIP": NODE_IP,
        "hostIPs": [{"ip": NODE_IP}],
        "podIP": pod_ip,
        "podIPs": [{"ip": pod_ip}],
        "conditions": [
            {"type": kind, "status": "True", "lastTransitionTime": now}
            for kind in ("Initialized", "Ready", "ContainersReady", "PodScheduled")
        ],
        "containerStatuses": [
            {
                "name": container["name"],
                "image": container["image"],
                "imageID": "",
                "ready": True,
                "started": True,
                "restartCount": 0,
                "state": {"running": {"startedAt": now}},
            }
            for container in pod["spec"]["containers"]
        ],
    }


def count_not_running(api: Any, label: str, limit: int) -> int:
    """How many pods labelled ``label`` are not Running, counted up to ``limit``
    (their metadata only, one page)."""
    response = api.call_api(
        "/api/v1/pods",
        "GET",
        query_params=[
            ("labelSelector", label),
            ("fieldSelector", "status.phase!=Running"),
            ("limit", limit),
        ],
        header_params={
            "Accept": "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"
        },
        auth_settings=["BearerToken"],
        _preload_content=False,
        _return_http_data_only=True,
    )
    found = json.loads(response.data)
    more = 1 if (found.get("metadata") or {}).get("continue") else 0
    return len(found.get("items") or []) + more


def wait_all_running(stack: KubeStack, label: str, timeout: float) -> None:
    """Wait until every pod labelled ``label`` is Running.

    Each look asks for one pod that is not (:func:`count_not_running`), so it
    costs the API server a filter of its cache and this process nothing,
    however many pods there are.
    """
    api = stack.kubernetes_client()
    try:
        wait_until(
            "the scale pods to run",
            lambda: count_not_running(api, label, 1) == 0,
            timeout,
            list(stack.processes.values()),
            interval=1.0,
        )
    except StackError as error:
        waiting = count_not_running(api, label, 1_000_000)
        raise StackError(f"{error}\n{waiting} pods not running") from None


class Scale(Scenario):
    """Many nodes and pods, pods created bound (see module docstring)."""

    name = "scale"
    # A cluster this size on the two cores it shares with the portal being
    # measured: what a real one does on machines of their own is slowed here.
    # 1,000 nodes posting every 10 s and the plugin's two writes a node every
    # 30 s were 150 node writes a second: both cores, with every watcher of
    # nodes (Volcano rebuilds a node's devices on each). A kubelet posts its
    # status every 5 min when nothing changed (a Lease says it lives); here
    # every 2 to 3 min (the lifecycle controller's grace stretched to match;
    # any other write to a node restarts KWOK's delay), and the plugin
    # registers once. Volcano's session clones every node and
    # pod: every second, at 6,000 pods that was a quarter of a core; nothing
    # here is left to schedule (the pods come placed), so once a minute.
    heartbeat_seconds = 120
    heartbeat_jitter_seconds = 180
    plugin_report_seconds = 0
    schedule_period_seconds = 60
    # simcluster's scale has no plugin pods either: the same pods on both.
    plugin_daemonset = False

    def __init__(
        self,
        seed: int | None = None,
        nodes: int = 200,
        pods: int = 5000,
        slice_pods: int = 3000,
    ) -> None:
        super().__init__(seed)
        self.pod_count, self.slice_pods = pods, slice_pods
        self.created_in = 0.0
        self.nodes = [
            NodeHardware(
                f"npu-node-{index:04d}",
                [
                    Chip(
                        f"{index:04X}{chip:04X}-0000-0000-0000-{self.random.getrandbits(48):012X}",
                        "310P3" if index % 2 else "910B4",
                    )
                    for chip in range(8)
                ],
            )
            for index in range(nodes)
        ]

    def place(self, stack: KubeStack) -> None:
        """Create the pods bound and running (:func:`start_pods`); ``created_in``
        is how long that took."""
        namespaces = [f"team-{i:02d}" for i in range(10)]
        stack.create_objects(
            [
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
                for ns in namespaces
            ]
            + [
                {
                    "apiVersion": "scheduling.volcano.sh/v1beta1",
                    "kind": "PodGroup",
                    "metadata": {"name": SCALE_GROUP, "namespace": ns},
                    "spec": {"minMember": 1, "queue": "default"},
                }
                for ns in namespaces
            ]
        )
        for ns in namespaces:
            wait_until(
                f"ServiceAccount {ns}/default",
                lambda ns=ns: (
                    stack.kubectl(
                        "get", "sa", "-n", ns, "default", check=False
                    ).returncode
                    == 0
                ),
                60,
                [],
            )
        manifests = list(self._bound_pods(namespaces))
        started = time.monotonic()
        start_pods(stack, manifests)
        self.created_in = time.monotonic() - started
        stack.say(
            f"{len(manifests)} pods created and started in {self.created_in:.1f} s "
            f"({len(manifests) / max(self.created_in, 1e-9):.0f}/s)"
        )
        wait_all_running(stack, kwok.STARTED_BY_CREATOR, 60)

    def _bound_pods(self, namespaces: list[str]) -> Any:
        slots: list[tuple[NodeHardware, Chip]] = [
            (node, chip) for node in self.nodes for chip in node.chips
        ]
        stamp = str(int(time.time()))
        for index in range(self.pod_count):
            node, chip = slots[index % len(slots)]
            namespace = namespaces[index % len(namespaces)]
            name = f"work-{index:06d}"
            if index < self.slice_pods:
                cw = "Ascend310P" if chip.chip_name == "310P3" else "Ascend910B4"
                memory, template = (
                    (3072, "vir01") if cw == "Ascend310P" else (8192, "vir05_1c_8g")
                )
                pod = slice_pod(name, cw, memory, namespace=namespace)
                encoded = encode_pod_devices(
                    [[ContainerDevice(chip.uuid, cw, memory, 0)]]
                )
                pod["metadata"]["annotations"] = {
                    "hami.io/vgpu-node": node.name,
                    "hami.io/vgpu-time": stamp,
                    f"hami.io/{cw}-devices-to-allocate": ";",
                    f"hami.io/{cw}-devices-allocated": encoded,
                    f"huawei.com/{cw}": render_runtime_info(
                        [RuntimeInfo(chip.uuid, template, memory, 0)]
                    ),
                    "hami.io/bind-phase": "success",
                    "hami.io/bind-time": stamp,
                }
            else:
                pod = slice_pod(name, "Ascend310P", 0, namespace=namespace)
                pod["spec"]["containers"][0]["resources"] = {
                    "requests": {"cpu": "100m"}
                }
            pod["spec"]["nodeName"] = node.name
            pod["spec"]["schedulerName"] = "volcano"
            # Placed by Volcano long ago: in a PodGroup already (else Volcano's
            # controller makes one a pod, and patches the pod, 60,000 writes).
            pod["metadata"]["annotations"]["scheduling.k8s.io/group-name"] = SCALE_GROUP
            pod["metadata"]["labels"][kwok.STARTED_BY_CREATOR] = "true"
            yield pod


SCENARIOS: dict[str, type[Scenario]] = {
    "guide": Guide,
    "empty": Scenario,
    "scale": Scale,
    "burst": Burst,
    "nodeconfig": NodeConfig,
}
