"""The HAMi Ascend device plugin, simulated on every node that has chips.

It writes the node registration (``hami.io/node-register-<cw>``, one chip type
per node), the handshake (``Reported_...``) and, from plugin v1.3 on,
``hami-vnpu-core`` annotations, and the extended resource ``huawei.com/<cw>`` =
healthy chips x count, at an interval.

One plugin process runs per node, as the pod of the plugin DaemonSet on that
node: it starts when that pod runs (a new pod: a restart), and reads then, and
only then, what the real plugin reads at start (``cmd/main.go``): its version
(the pod's image tag), ``--config_file`` and ``--node_config_file`` (the files
mounted from ConfigMaps at those paths) and ``--node_name`` (default: the
node). Editing a ConfigMap changes nothing until the pod on that node is
replaced (deleted, or the DaemonSet rolled). What each version does with the
node config (simcluster/nodeconfig.py, docs/node-config.md):

- v1.1.0, v1.2.0: no such flag; given ``--node_config_file`` the plugin exits
  at start (Go's ``flag provided but not defined``) and registers nothing;
- v1.3.0: the node's entry sets ``hami-vnpu-core`` (an entry without the key
  turns it off); ``vDeviceCount`` is parsed but not applied (v1.3.0's
  ``VDeviceCount()`` ignores it; honoured from v1.4.0, upstream e4a4d77);
- v1.4.0: also ``vDeviceCount`` (> 0) and ``filterDevices``: a chip whose die
  UUID or whose **card id** is listed is left out, and the others register
  with indexes 0..n-1.

A file that does not load is logged (the pod's log and this module's logger)
and the plugin runs on defaults. Without a DaemonSet (the ``scale`` scenario)
one default plugin (v1.3 behaviour, no node config) serves every node.
"""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from simcluster import hami, podutil, resources
from simcluster.controllers.base import Controller
from simcluster.controllers.kubelet import container_id
from simcluster.hardware import Chip, Hardware
from simcluster.plugin_start import (
    NodeSettings,
    PluginRun,
    read_device_config,
    start_plugin,
)
from simcluster.podlogs import LogBook
from simcluster.store import Obj, Store, WatchEvent

log = logging.getLogger("simcluster.device-plugin")

PLUGIN_DAEMONSET = ("kube-system", "hami-ascend-device-plugin")
REPORT_OFFSET = timedelta(seconds=1)  # the plugin's --report_time_offset default
VNPU_CORE_SINCE = (1, 3)  # plugin versions that write (and read) hami-vnpu-core
# From v1.4.0 a hami-core node's chips register devcore 100 (a percent,
# HamiVnpuCoreMaxPercent in register.go); v1.3.0 registers the config's aiCore
# even then, so a ``-core`` percent above it never fits.
CORE_PERCENT_SINCE = (1, 4)


def network_id(common_word: str, index: int) -> int:
    """``getDeviceNetworkID``: 0 for index <= 3, else 1; always 0 for Ascend910C."""
    if common_word == "Ascend910C":
        return 0
    return 0 if index <= 3 else 1


def device_infos(
    chips: tuple[Chip, ...] | list[Chip],
    chip_type: hami.ChipTypeSpec,
    core_percent: bool,
    slots: int = 0,
) -> list[hami.DeviceInfo]:
    """The ``DeviceInfo`` list the plugin registers for chips of one type,
    indexed by position in ``chips``; ``devcore`` is 100 when ``core_percent``
    (a v1.4+ plugin in hami-core mode), else the config's aiCore; ``count``
    is ``slots`` when above 0, else memoryAllocatable // smallest template."""
    count = slots or hami.slots_per_chip(
        chip_type.memory_allocatable, chip_type.templates
    )
    cw = chip_type.common_word
    out = []
    for index, chip in enumerate(chips):
        if chip.chip_name != chip_type.chip_name:
            continue
        custom: dict[str, Any] = {}
        if cw.startswith("Ascend910"):
            custom = {"NetworkID": network_id(cw, index)}
        out.append(
            hami.DeviceInfo(
                id=chip.uuid,
                index=index,
                count=count,
                devmem=chip_type.memory_allocatable,
                devcore=100 if core_percent else (chip_type.ai_core or 0),
                type=cw,
                health=chip.healthy,
                custominfo=custom,
            )
        )
    return out


def served_chip_type(
    chips: tuple[Chip, ...] | list[Chip], chip_types: list[hami.ChipTypeSpec]
) -> hami.ChipTypeSpec | None:
    """The one chip type the plugin serves on a node: the first ``chipName`` of
    the config that the node's chips have. None is the real plugin's crash loop."""
    names = {chip.chip_name for chip in chips}
    return next((ct for ct in chip_types if ct.chip_name in names), None)


def apply_registration(
    node: Obj,
    chips: tuple[Chip, ...] | list[Chip],
    chip_types: list[hami.ChipTypeSpec],
    vnpu_core: bool,
    moment: datetime,
    version: tuple[int, int] = VNPU_CORE_SINCE,
    settings: NodeSettings | None = None,
) -> bool:
    """Write the plugin's annotations and resources into a node; False: crash loop.

    As the real plugin: one chip type per node; a sick chip is registered with
    its health false and its slots leave ``huawei.com/<cw>``; every chip has
    ``devicepairscore``; ``hami-vnpu-core`` only from plugin v1.3 on, and
    ``devcore`` 100 in that mode only from v1.4 on. ``settings`` (what the
    plugin took from its node config, already cut to its version) can switch
    the mode, set the count and leave chips out: the chips left are numbered
    from 0, so a chip's index shifts while its UUID stays.
    """
    chip_type = served_chip_type(chips, chip_types)
    if chip_type is None:
        return False
    settings = settings or NodeSettings()
    kept = [chip for i, chip in enumerate(chips) if not settings.ignores(chips, i)]
    annotations = node["metadata"].setdefault("annotations", {})
    status = node.setdefault("status", {})
    if settings.vnpu_core is not None:
        vnpu_core = settings.vnpu_core
    core_mode = vnpu_core and version >= VNPU_CORE_SINCE
    devices = device_infos(
        kept, chip_type, core_mode and version >= CORE_PERCENT_SINCE, settings.slots
    )
    cw = chip_type.common_word
    annotations[hami.register_key(cw)] = hami.render_node_register(
        devices, pair_scores=True
    )
    annotations[hami.handshake_key(cw)] = hami.render_handshake_reported(
        moment + REPORT_OFFSET
    )
    healthy = sum(1 for device in devices if device.health)
    total = str(healthy * devices[0].count if devices else 0)
    for part in ("capacity", "allocatable"):
        status.setdefault(part, {})[chip_type.resource_name] = total
    if version >= VNPU_CORE_SINCE:
        annotations["hami-vnpu-core"] = "true" if core_mode else "false"
    return True


def klog_line(level: str, text: str, at: datetime) -> str:
    """``text`` as klog prints it (``E1206 20:00:00.123456       1 main.go] ...``)."""
    if not level:
        return text
    source = "main.go" if level == "E" or text.startswith("using") else "manager.go"
    stamp = at.strftime("%m%d %H:%M:%S.%f")
    return f"{level}{stamp}       1 {source}] {text}"


class DevicePlugin(Controller):
    """Keeps the registration of every node with chips (see module docstring)."""

    name = "device-plugin"

    def __init__(
        self,
        store: Store,
        hardware: Hardware,
        interval: float = 30.0,
        logs: LogBook | None = None,
    ) -> None:
        self.store = store
        self.hardware = hardware
        self.interval = interval
        self.logs = logs
        self.runs: dict[str, PluginRun] = {}  # node -> its running plugin
        self._dirty: set[str] | None = None  # nodes to look at; None: all
        self._fresh: set[str] = set()  # plugins just started: report now
        self._next = 0.0
        self._hardware_version = -1
        self.reports = 0  # rounds of registrations written

    def resync(self) -> None:
        """Look at every node's plugin pod again."""
        self._dirty = None
        self._next = 0.0

    def on_events(self, events: list[WatchEvent]) -> None:
        """A plugin pod that starts, ends or goes restarts (or stops) the
        plugin on its node; the DaemonSet appearing or going, all of them."""
        for event in events:
            if event.res_key == resources.DAEMONSET.key:
                meta = event.obj["metadata"]
                if (event.namespace, meta["name"]) == PLUGIN_DAEMONSET:
                    self._dirty = None
            elif (
                event.res_key == resources.POD.key
                and event.namespace == PLUGIN_DAEMONSET[0]
                and self._dirty is not None
            ):
                for obj in (event.obj, event.prev or {}):
                    node = (obj.get("spec") or {}).get("nodeName")
                    if node:
                        self._dirty.add(node)

    def _configmap(self, namespace: str, name: str) -> dict[str, str] | None:
        """A ConfigMap's data as a plugin pod's volume sees it (None: none)."""
        found = self.store.get(resources.CONFIGMAP, namespace, name)
        return None if found is None else dict(found.obj.get("data") or {})

    def _plugin_pods(self, ds: Obj) -> dict[str, Obj]:
        """The running plugin pod of each node (not terminating)."""
        uid = ds["metadata"].get("uid")
        out: dict[str, Obj] = {}
        for stored in self.store.list(resources.POD, PLUGIN_DAEMONSET[0])[1]:
            pod = stored.obj
            owners = pod["metadata"].get("ownerReferences") or []
            if not any(o.get("controller") and o.get("uid") == uid for o in owners):
                continue
            node = (pod.get("spec") or {}).get("nodeName")
            if (
                node
                and podutil.phase(pod) == "Running"
                and not podutil.is_terminating(pod)
            ):
                out[node] = pod
        return out

    def _refresh(self) -> None:
        """Start the plugin of every node whose pod is new; stop the gone ones."""
        dirty = self._dirty
        self._dirty = set()
        if dirty is not None and not dirty:
            return
        nodes = self.hardware.nodes() if dirty is None else sorted(dirty)
        ds = self.store.get(resources.DAEMONSET, *PLUGIN_DAEMONSET)
        pods = self._plugin_pods(ds.obj) if ds is not None else {}
        default: PluginRun | None = None
        for node in nodes:
            if not self.hardware.chips(node):
                continue
            current = self.runs.get(node)
            if ds is None:
                if current is None or current.pod_uid:
                    if default is None:
                        chip_types, vnpu_core = read_device_config(
                            None, None, self._configmap
                        )
                        default = PluginRun("", VNPU_CORE_SINCE, chip_types, vnpu_core)
                    self.runs[node] = default
                    self._fresh.add(node)
                continue
            pod = pods.get(node)
            if pod is None:
                self.runs.pop(node, None)
                continue
            if current is not None and current.pod_uid == pod["metadata"].get("uid"):
                continue
            run = start_plugin(pod, self._configmap)
            self.runs[node] = run
            self._fresh.add(node)
            self._print(pod, run)

    def _print(self, pod: Obj, run: PluginRun) -> None:
        """What the plugin logged at start: into its pod's log, and ours."""
        now = datetime.now(UTC)
        lines = [klog_line(level, text, now) for level, text in run.lines]
        where = f"{pod['metadata'].get('name')} on {pod['spec'].get('nodeName')}"
        for level, text in run.lines:
            if level in ("", "E", "W"):
                log.warning("device plugin %s: %s", where, text)
        if self.logs is None:
            return
        name = ((pod.get("spec") or {}).get("containers") or [{}])[0].get("name", "")
        at = time.time_ns()
        self.logs.start(
            run.pod_uid,
            container_id(run.pod_uid, name),
            [(at, line) for line in lines],
        )

    def tick(self, now: float) -> None:
        """Report every interval, at once when the hardware changed, and on a
        node whose plugin just started."""
        self._refresh()
        changed = self.hardware.version != self._hardware_version
        if now < self._next and not changed and not self._fresh:
            return
        if now >= self._next or changed:
            self._next = now + self.interval
            nodes = sorted(self.runs)
        else:
            nodes = sorted(self._fresh & set(self.runs))
        self._fresh = set()
        self._hardware_version = self.hardware.version
        self.reports += 1  # for tests that wait for the next reports
        moment = datetime.now(UTC)
        for name in nodes:
            run = self.runs[name]
            if run.exited:
                continue
            chips = self.hardware.chips(name)

            def write(
                node: Obj, chips: tuple[Chip, ...] = chips, run: PluginRun = run
            ) -> Any:
                return (
                    None
                    if apply_registration(
                        node,
                        chips,
                        run.chip_types,
                        run.vnpu_core,
                        moment,
                        run.version,
                        run.settings,
                    )
                    else False
                )

            self.store.mutate(resources.NODE, "", name, write)
