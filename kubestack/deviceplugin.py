"""The Ascend device plugin of every fake node, simulated against the real API server.

What the real HAMi ascend-device-plugin does that the scheduler and the portal
can see, without hardware:

- **Registration**: one chip type per node (the first ``chipName`` of the device
  config that matches the node's hardware; none matching is the real plugin's
  crash loop: nothing is registered). Chips are indexed 0..n-1, each with
  ``devicepairscore``; a sick chip is registered unhealthy and its slots leave
  ``huawei.com/<commonWord>`` in the node's capacity and allocatable.
  ``hami-vnpu-core`` is written only by plugin versions that write it (v1.3+).
- **Allocate**: after Volcano bound a pod (``hami.io/bind-phase: allocating``),
  the plugin hands out the chips the scheduler wrote (devices-to-allocate
  emptied, bind-phase ``success``), checking neither health nor usage, as the
  real one does: a pod bound to a sick chip runs. Only a chip that is not on
  the node fails the pod as the kubelet fails it on an Allocate error (phase
  Failed, reason UnexpectedAdmissionError). Either way the plugin then lifts
  the node lock (``hami.io/mutex.lock``) that HAMi's scheduler took for this
  pod at its bind: HAMi never lifts it itself on success, and binds nothing
  else on that node until it is gone or five minutes old.
- **Creating the vNPU**: the chips are hard-split, and a terminating pod still
  holds its vNPU until it is gone; a pod whose vNPU does not fit its chip
  (restartPolicy Never) ends Failed with its container terminated
  ``StartError`` (exit 128). A restartable pod in that clash is started
  anyway here: KWOK has no container back-off to model (simcluster has).

The device config is read when the plugin starts and when its DaemonSet is
rolled (:meth:`DevicePlugin.reload`), as the real plugin reads its mounted file
once per process.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from apps.inventory.hami.annotations import (
    BIND_PHASE,
    NODE_LOCK,
    AnnotationError,
    DeviceInfo,
    allocated_key,
    encode_pod_devices,
    parse_node_register,
    parse_pod_devices,
    render_handshake_reported,
    to_allocate_key,
)
from apps.inventory.hami.deviceconfig import ChipTypeSpec, parse_device_config
from simcluster.controllers.allocate import (
    allocate_error,
    allocate_failure_message,
    create_error,
    start_error_status,
)
from simcluster.controllers.device_plugin import REPORT_OFFSET, apply_registration
from simcluster.controllers.kubelet import pod_ip
from simcluster.hardware import Chip

log = logging.getLogger("kubestack.deviceplugin")

DEVICE_CONFIGMAP = ("kube-system", "hami-scheduler-device")
DEVICE_CONFIG_KEY = "device-config.yaml"
REPORT_INTERVAL = 30.0  # the real plugin's default
REPORT_THREADS = 8
# A watch event's line holds this when its pod waits for the plugin (a pod's
# annotations are JSON strings: the quotes inside them are escaped).
ALLOCATING = f'"{BIND_PHASE}":"allocating"'
ERROR_EVENT = '{"type":"ERROR"'
# The first resourceVersion of a watch event is its object's (metadata comes first).
RESOURCE_VERSION = re.compile(r'"resourceVersion":"(\d+)"')


@dataclass
class NodeHardware:
    """A fake node's chips and its plugin's version."""

    name: str
    chips: list[Chip]
    plugin_version: tuple[int, int] = (1, 1)  # the guide's v1.1.0
    labels: dict[str, str] = field(default_factory=dict)


def registration(
    node: NodeHardware, chip_types: list[ChipTypeSpec], vnpu_core: bool
) -> tuple[dict[str, Any], list[DeviceInfo]] | None:
    """What the plugin writes on ``node`` (annotations, allocatable) and its
    chips; None is the crash loop (no ``chipName`` matches).

    The registration itself is simcluster's (one writer of the real plugin's
    rules: one chip type per node, sick chips out of allocatable,
    ``devicepairscore``, ``hami-vnpu-core`` from v1.3 on); here it is written
    to the real API server instead of simcluster's store.
    """
    written: dict[str, Any] = {"metadata": {}}
    if not apply_registration(
        written,
        node.chips,
        chip_types,
        vnpu_core,
        datetime.now(UTC),
        node.plugin_version,
    ):
        return None
    annotations = written["metadata"]["annotations"]
    devices = [
        device
        for key, value in annotations.items()
        if key.startswith("hami.io/node-register-")
        for device in parse_node_register(value)
    ]
    return written, devices


class DevicePlugin:
    """The plugin of every fake node of a scenario (see module docstring)."""

    def __init__(
        self, api_client: Any, report_interval: float = REPORT_INTERVAL
    ) -> None:
        from kubernetes import client

        self.core = client.CoreV1Api(api_client)
        # Seconds between reports; 0: only when asked (a start, a reload, a
        # chip's health), for the scale scenario: two writes a node every 30 s
        # are 67 node writes a second at a thousand nodes.
        self.report_interval = report_interval
        self.nodes: dict[str, NodeHardware] = {}  # added as their Node objects exist
        self.chip_types: list[ChipTypeSpec] = []
        self.vnpu_core = False
        self.registered: dict[str, list[DeviceInfo] | None] = {}
        self.allocations = 0
        self._last_report = datetime.min.replace(tzinfo=UTC)
        self.failures = 0
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._watch: Any = None  # the open watch response

    def start(self) -> None:
        """Serve in the background (nodes come with :meth:`add_nodes`)."""
        for target, name in (
            (self._report_loop, "report"),
            (self._allocate_loop, "allocate"),
        ):
            thread = threading.Thread(
                target=target, name=f"device-plugin-{name}", daemon=True
            )
            thread.start()
            self._threads.append(thread)

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        # Cut the watch rather than wait up to its 30 s for the next event.
        with contextlib.suppress(Exception):
            if self._watch is not None:
                self._watch.shutdown()
        for thread in self._threads:
            thread.join(timeout=5)

    def reload(self) -> None:
        """Re-read the device config and report now (the plugin restarted)."""
        try:
            cm = self.core.read_namespaced_config_map(
                DEVICE_CONFIGMAP[1], DEVICE_CONFIGMAP[0]
            )
            document = parse_device_config((cm.data or {}).get(DEVICE_CONFIG_KEY, ""))
            self.chip_types = document.chip_types()
            self.vnpu_core = bool(document.hami_vnpu_core)
        except Exception as error:
            log.warning("device config unreadable: %s", str(error).splitlines()[0])
            self.chip_types = []
        self.report()

    def set_chip_health(self, node: str, index: int, healthy: bool) -> None:
        """Mark a chip healthy or sick and report at once (as dcmi's health watch)."""
        with self._lock:
            chips = self.nodes[node].chips
            chips[index] = replace(chips[index], healthy=healthy)
        self.report()

    def add_nodes(self, nodes: list[NodeHardware]) -> None:
        """Serve more nodes (their Node objects exist): read the config, report."""
        with self._lock:
            self.nodes.update((node.name, node) for node in nodes)
        self.reload()

    def remove_nodes(self, names: list[str]) -> None:
        """Stop serving these nodes (their Node objects are being deleted)."""
        with self._lock:
            for name in names:
                self.nodes.pop(name, None)
                self.registered.pop(name, None)

    def report(self) -> None:
        """Write every node's registration, handshake and allocatable.

        Every report changes the Node (the handshake moves on by at least a
        second, its resolution): Volcano rebuilds a node's devices only on a
        node event, and two reports within one second would otherwise make the
        second patch a no-op that no watcher sees.
        """
        moment = max(datetime.now(UTC), self._last_report + timedelta(seconds=1))
        self._last_report = moment
        with self._lock:
            nodes = list(self.nodes.values())
        if len(nodes) <= 1:
            for node in nodes:
                self._report_node(node, moment)
            return
        # A few nodes at a time: a thousand nodes one after another took a minute.
        with ThreadPoolExecutor(min(REPORT_THREADS, len(nodes))) as pool:
            for _ in pool.map(lambda node: self._report_node(node, moment), nodes):
                pass

    def _report_node(self, node: NodeHardware, moment: datetime) -> None:
        if self._stop.is_set():
            return  # the stack is stopping: the API server may be gone
        found = registration(node, self.chip_types, self.vnpu_core)
        self.registered[node.name] = found[1] if found else None
        if found is None:
            return  # crash loop: no chipName matches this node's chips
        written, _ = found
        annotations = written["metadata"]["annotations"]
        # The handshake moves on with this report (see report's docstring).
        for key in annotations:
            if key.startswith("hami.io/node-handshake-"):
                annotations[key] = render_handshake_reported(moment + REPORT_OFFSET)
        try:
            # The answers are not read into models (see _allocate_loop).
            self.core.patch_node(
                node.name,
                {"metadata": {"annotations": annotations}},
                _preload_content=False,
            ).drain_conn()
            self.core.patch_node_status(
                node.name,
                {
                    "status": {
                        "capacity": written["status"]["capacity"],
                        "allocatable": written["status"]["allocatable"],
                    }
                },
                _preload_content=False,
            ).drain_conn()
        except Exception as error:
            log.warning("registering %s failed: %s", node.name, error)

    def _report_loop(self) -> None:
        if not self.report_interval:
            return
        while not self._stop.wait(self.report_interval):
            self.report()

    def _allocate_loop(self) -> None:
        """List the pods once, then follow their events from that list's
        resourceVersion; list again only when the watch fails (410 Gone, a cut
        connection). Raw JSON: the typed client's models cost milliseconds a
        pod, and a scenario has tens of thousands of pods."""
        resource_version = ""
        while not self._stop.is_set():
            try:
                if not resource_version:
                    resource_version = self._serve_pending()
                resource_version = self._follow(resource_version)
            except Exception as error:
                resource_version = ""
                if not self._stop.is_set():
                    log.warning("allocation watch restarted: %s", error)
                    time.sleep(0.5)

    def _follow(self, resource_version: str) -> str:
        """Serve the pods that a watch from ``resource_version`` shows waiting
        for their vNPUs, for up to 30 s; returns the resourceVersion to go on
        from ("" to list again)."""
        from kubernetes.watch.watch import iter_resp_lines

        response = self.core.list_pod_for_all_namespaces(
            watch=True,
            resource_version=resource_version,
            allow_watch_bookmarks=True,
            timeout_seconds=30,
            _request_timeout=40,
            _preload_content=False,
        )
        self._watch = response
        try:
            for line in iter_resp_lines(response):
                if self._stop.is_set():
                    break
                if ALLOCATING not in line and not line.startswith(ERROR_EVENT):
                    # Not one to serve: only where to resume from. Parsed
                    # whole, the events of 30,000 pods created at once kept
                    # this thread so late that the API server cut the watch.
                    found = RESOURCE_VERSION.search(line)
                    if found:
                        resource_version = found.group(1)
                    continue
                event = json.loads(line)
                pod = event.get("object") or {}
                if event.get("type") == "ERROR":
                    return ""  # 410 Gone (history compacted): list again
                resource_version = (pod.get("metadata") or {}).get(
                    "resourceVersion", resource_version
                )
                if event.get("type") in ("ADDED", "MODIFIED") and (
                    self._wants_allocate(pod)
                ):
                    self._serve_pending(pod["spec"]["nodeName"])
        finally:
            response.release_conn()
        return resource_version

    def _wants_allocate(self, pod: dict[str, Any]) -> bool:
        spec = pod.get("spec") or {}
        metadata = pod.get("metadata") or {}
        annotations = metadata.get("annotations") or {}
        return (
            spec.get("nodeName") in self.nodes
            and annotations.get(BIND_PHASE) == "allocating"
            and not metadata.get("deletionTimestamp")
        )

    def _serve_pending(self, node_name: str | None = None) -> str:
        """Allocate every bound pod waiting for its vNPUs (of one node, or all).

        Returns the list's resourceVersion.
        """
        selector = f"spec.nodeName={node_name}" if node_name else ""
        response = self.core.list_pod_for_all_namespaces(
            field_selector=selector, _preload_content=False
        )
        found = json.loads(response.data)
        pods = found.get("items") or []
        by_node: dict[str, list[dict[str, Any]]] = {}
        for pod in pods:
            node = (pod.get("spec") or {}).get("nodeName")
            if node in self.nodes:
                by_node.setdefault(node, []).append(pod)
        for node, node_pods in by_node.items():
            registered = self.registered.get(node)
            devices = {d.id: d for d in registered} if registered else {}
            for pod in sorted(
                node_pods, key=lambda p: p["metadata"].get("creationTimestamp", "")
            ):
                annotations = pod["metadata"].get("annotations") or {}
                if annotations.get(BIND_PHASE) != "allocating" or pod["metadata"].get(
                    "deletionTimestamp"
                ):
                    continue
                reason = allocate_error(pod, devices)
                if reason is not None:
                    self._fail(pod, reason)
                    pod.setdefault("status", {})["phase"] = "Failed"
                    continue
                reason = create_error(pod, node_pods, devices)
                if reason is not None and pod["spec"].get("restartPolicy") == "Never":
                    self._cannot_create(pod, reason)
                    pod.setdefault("status", {})["phase"] = "Failed"
                else:
                    self._succeed(pod)
                annotations[BIND_PHASE] = "success"  # counts for the next pod
        return str((found.get("metadata") or {}).get("resourceVersion", ""))

    def _succeed(self, pod: dict[str, Any]) -> None:
        meta = pod["metadata"]
        self.core.patch_namespaced_pod(
            meta["name"],
            meta["namespace"],
            {"metadata": {"annotations": self._allocated(pod)}},
        )
        self._release_node_lock(pod)
        self.allocations += 1

    @staticmethod
    def _allocated(pod: dict[str, Any]) -> dict[str, str]:
        """The annotations Allocate writes: bind-phase success, devices handed out."""
        annotations = pod["metadata"].get("annotations") or {}
        patch: dict[str, str] = {BIND_PHASE: "success"}
        for key, value in annotations.items():
            if key.startswith("hami.io/") and key.endswith("-devices-to-allocate"):
                cw = key[len("hami.io/") : -len("-devices-to-allocate")]
                try:
                    containers = parse_pod_devices(value)
                except AnnotationError:
                    continue
                patch[to_allocate_key(cw)] = encode_pod_devices(
                    [[] for _ in containers]
                )
                # Volcano writes -allocated itself; keep it if present.
                patch.setdefault(
                    allocated_key(cw), annotations.get(allocated_key(cw), value)
                )
        return patch

    def _cannot_create(self, pod: dict[str, Any], reason: str) -> None:
        """Allocate succeeded, then the runtime could not make the vNPU.

        One write through pods/status (which may change annotations): Allocate's
        bind-phase success and the Failed status land together, so nobody sees
        the one without the other; and never a Pending pod with bind-phase
        success, which KWOK would start.
        """
        meta = pod["metadata"]
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        ip = pod_ip(meta.get("uid", ""))
        self.core.patch_namespaced_pod_status(
            meta["name"],
            meta["namespace"],
            {
                "metadata": {"annotations": self._allocated(pod)},
                "status": start_error_status(pod, reason, now, ip),
            },
        )
        self._release_node_lock(pod)
        self.allocations += 1
        self.failures += 1
        log.info(
            "vNPU not created for %s/%s: %s", meta["namespace"], meta["name"], reason
        )

    def _release_node_lock(self, pod: dict[str, Any]) -> None:
        """Lift HAMi's node lock if this pod holds it (the real plugin's
        ``ReleaseNodeLock`` after Allocate; its value ends ``,<ns>,<pod>``)."""
        from kubernetes.client.rest import ApiException

        meta = pod["metadata"]
        for _ in range(5):
            node = self.core.read_node(pod["spec"]["nodeName"])
            lock = (node.metadata.annotations or {}).get(NODE_LOCK, "")
            if not lock.endswith(f",{meta['namespace']},{meta['name']}"):
                return
            # Only the lock read above: a newer one is another pod's.
            precondition = {"resourceVersion": node.metadata.resource_version}
            try:
                self.core.patch_node(
                    node.metadata.name,
                    {"metadata": {"annotations": {NODE_LOCK: None}, **precondition}},
                )
                return
            except ApiException as error:
                if error.status != 409:  # a report wrote the node meanwhile
                    raise

    def _fail(self, pod: dict[str, Any], reason: str) -> None:
        meta = pod["metadata"]
        message = allocate_failure_message(reason)
        self.core.patch_namespaced_pod(
            meta["name"],
            meta["namespace"],
            {"metadata": {"annotations": {BIND_PHASE: "failed"}}},
        )
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        self.core.patch_namespaced_pod_status(
            meta["name"],
            meta["namespace"],
            {
                "status": {
                    "phase": "Failed",
                    "reason": "UnexpectedAdmissionError",
                    "message": message,
                    "startTime": now,
                }
            },
        )
        self._release_node_lock(pod)
        self.failures += 1
        log.info(
            "allocate failed for %s/%s: %s", meta["namespace"], meta["name"], reason
        )
