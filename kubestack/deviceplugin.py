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

One plugin process per node, as the pod of the plugin DaemonSet there (a
real DaemonSet: kube-controller-manager makes a new pod when one is deleted or
the DaemonSet is rolled; kubestack/pluginpods.py). When a node's pod runs, its
plugin starts and reads, then and only then, what the real plugin reads at
start (simcluster/plugin_start.py, the same rules as simcluster's plugin):
its version from the image tag, ``--config_file``, ``--node_config_file`` and
``--node_name``, the files being the ConfigMaps mounted at those paths. So the
node config (``hami-device-node-config``) is applied per node, version by
version: v1.1.0 and v1.2.0 exit at start on ``--node_config_file`` (the pod
shows CrashLoopBackOff, nothing is registered from it); v1.3.0 takes the
mode; v1.4.0 also ``vDeviceCount`` and ``filterDevices`` (chips left out by
UUID or card id, the rest registered as 0..n-1, allocatable shrinking). A
file that does not load is logged and ignored. A ConfigMap edited under a
running pod changes nothing until that pod is replaced;
:meth:`DevicePlugin.reload` restarts every node's plugin at once (what a roll
ends with). Without a DaemonSet (the ``scale`` scenario) one default plugin
serves every node, of each node's ``plugin_version``.
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
from apps.inventory.hami.deviceconfig import ChipTypeSpec
from kubestack.pluginpods import configmap_reader, crash_status, running_plugin_pods
from simcluster.controllers.allocate import (
    allocate_error,
    allocate_failure_message,
    create_error,
    start_error_status,
)
from simcluster.controllers.device_plugin import REPORT_OFFSET, apply_registration
from simcluster.controllers.kubelet import pod_ip
from simcluster.hardware import Chip
from simcluster.plugin_start import PluginRun, read_device_config, start_plugin

log = logging.getLogger("kubestack.deviceplugin")

REPORT_INTERVAL = 30.0  # the real plugin's default
REPORT_THREADS = 8
# How often the plugin pods are looked at: a deleted pod's successor starts
# its plugin within this of running (a watch would be quicker, but the
# DaemonSet's few pods cost the API server next to nothing to list).
PODS_POLL_SECONDS = 0.5
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
    node: NodeHardware, run: PluginRun
) -> tuple[dict[str, Any], list[DeviceInfo]] | None:
    """What the plugin ``run`` writes on ``node`` (annotations, allocatable)
    and its chips; None is the crash loop (no ``chipName`` matches).

    The registration itself is simcluster's (one writer of the real plugin's
    rules: one chip type per node, sick chips out of allocatable,
    ``devicepairscore``, ``hami-vnpu-core`` from v1.3 on, what the node config
    gave the run: mode, slot count, chips left out and the rest renumbered
    from 0); here it is written to the real API server instead of
    simcluster's store.
    """
    written: dict[str, Any] = {"metadata": {}}
    if not apply_registration(
        written,
        node.chips,
        run.chip_types,
        run.vnpu_core,
        datetime.now(UTC),
        run.version,
        run.settings,
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
        self,
        api_client: Any,
        report_interval: float = REPORT_INTERVAL,
        plugin_pods: bool = True,
    ) -> None:
        from kubernetes import client

        self.core = client.CoreV1Api(api_client)
        self.apps = client.AppsV1Api(api_client)
        # Seconds between reports; 0: only when asked (a start, a reload, a
        # chip's health), for the scale scenario: two writes a node every 30 s
        # are 67 node writes a second at a thousand nodes.
        self.report_interval = report_interval
        # Whether a plugin runs as the DaemonSet's pod on its node (else, and
        # while there is no DaemonSet, one default plugin serves every node).
        self.plugin_pods = plugin_pods
        self.nodes: dict[str, NodeHardware] = {}  # added as their Node objects exist
        self.runs: dict[str, PluginRun] = {}  # node -> the plugin running there
        self.registered: dict[str, list[DeviceInfo] | None] = {}
        self.allocations = 0
        self.starts = 0  # plugin processes started (a node's pod, or a reload)
        self._last_report = datetime.min.replace(tzinfo=UTC)
        self.failures = 0
        self._read_configmap = configmap_reader(self.core)
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._lock = threading.Lock()
        self._start_lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._watch: Any = None  # the open watch response

    def start(self) -> None:
        """Serve in the background (nodes come with :meth:`add_nodes`)."""
        loops = [(self._report_loop, "report"), (self._allocate_loop, "allocate")]
        if self.plugin_pods:
            loops.append((self._pods_loop, "pods"))
        for target, name in loops:
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
        """Restart every node's plugin now, from the pod it runs in (it reads
        its config files again), and report every node: what a roll of the
        DaemonSet ends with."""
        self.refresh(restart=True)
        self.report()

    def refresh(self, restart: bool = False) -> list[str]:
        """Start the plugin of every node whose plugin pod is new (``restart``:
        of every node), stop those whose pod is gone; the nodes started.

        A plugin reads its version, arguments and mounted files only here,
        when it starts (:func:`simcluster.plugin_start.start_plugin`): a
        ConfigMap edited under a running pod changes nothing.
        """
        with self._start_lock:
            with self._lock:
                nodes = dict(self.nodes)
            pods = (
                running_plugin_pods(self.core, self.apps) if self.plugin_pods else None
            )
            started: list[str] = []
            default: tuple[list[ChipTypeSpec], bool] | None = None
            for name, node in nodes.items():
                current = self.runs.get(name)
                if pods is None:  # no DaemonSet: the default plugin
                    if restart or current is None or current.pod_uid:
                        if default is None:
                            default = read_device_config(
                                None, None, self._read_configmap
                            )
                        self.runs[name] = PluginRun("", node.plugin_version, *default)
                        started.append(name)
                    continue
                pod = pods.get(name)
                if pod is None:
                    self.runs.pop(name, None)  # its registration stays, unreported
                    continue
                uid = pod["metadata"].get("uid", "")
                if restart or current is None or current.pod_uid != uid:
                    self.runs[name] = self._start_plugin(pod)
                    started.append(name)
            self.starts += len(started)
            return started

    def _start_plugin(self, pod: dict[str, Any]) -> PluginRun:
        """Start the plugin in ``pod``: what it logs; a start that exits shows
        on the pod as the kubelet shows it (CrashLoopBackOff)."""
        run = start_plugin(pod, self._read_configmap)
        where = f"{pod['metadata']['name']} on {pod['spec']['nodeName']}"
        for level, text in run.lines:
            if level in ("", "E", "W"):
                log.warning("device plugin %s: %s", where, text)
            else:
                log.info("device plugin %s: %s", where, text)
        if run.exited:
            meta = pod["metadata"]
            try:
                self.core.patch_namespaced_pod_status(
                    meta["name"], meta["namespace"], {"status": crash_status(pod)}
                )
            except Exception as error:
                log.warning("marking %s exited failed: %s", where, error)
        return run

    def running(self, names: list[str]) -> bool:
        """Whether a plugin has started on each of these nodes."""
        return all(name in self.runs for name in names)

    def set_chip_health(self, node: str, index: int, healthy: bool) -> None:
        """Mark a chip healthy or sick and report at once (as dcmi's health watch)."""
        with self._lock:
            chips = self.nodes[node].chips
            chips[index] = replace(chips[index], healthy=healthy)
        self.report()

    def add_nodes(self, nodes: list[NodeHardware]) -> None:
        """Serve more nodes (their Node objects exist): the plugin starts on
        each as its pod runs (at once without a DaemonSet), and reports."""
        with self._lock:
            self.nodes.update((node.name, node) for node in nodes)
        started = self.refresh()
        if started:
            self.report(started)

    def remove_nodes(self, names: list[str]) -> None:
        """Stop serving these nodes (their Node objects are being deleted)."""
        with self._lock:
            for name in names:
                self.nodes.pop(name, None)
                self.registered.pop(name, None)
                self.runs.pop(name, None)

    def report(self, names: list[str] | None = None) -> None:
        """Write the registration, handshake and allocatable of every node
        whose plugin runs (or of ``names``).

        Every report changes the Node (the handshake moves on by at least a
        second, its resolution): Volcano rebuilds a node's devices only on a
        node event, and two reports within one second would otherwise make the
        second patch a no-op that no watcher sees.
        """
        moment = max(datetime.now(UTC), self._last_report + timedelta(seconds=1))
        self._last_report = moment
        with self._lock:
            nodes = [
                node
                for node in self.nodes.values()
                if names is None or node.name in names
            ]
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
        run = self.runs.get(node.name)
        if run is None or run.exited:
            return  # no plugin runs there: nothing is written
        found = registration(node, run)
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

    def _pods_loop(self) -> None:
        """Follow the plugin pods: a node's new pod starts its plugin, which
        reports at once (as the real one registers when it starts)."""
        while not self._stop.wait(PODS_POLL_SECONDS):
            try:
                started = self.refresh()
                if started:
                    self.report(started)
            except Exception as error:
                if not self._stop.is_set():
                    log.warning("plugin pods: %s", error)

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
