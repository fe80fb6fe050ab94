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
import re
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from simcluster import hami, podutil, resources
from simcluster.controllers.base import Controller
from simcluster.controllers.kubelet import container_id
from simcluster.hardware import Chip, Hardware, card_id
from simcluster.nodeconfig import NodeConfigError, entry_for, parse_node_config
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
NODE_CONFIG_SINCE = (
    1,
    3,
)  # --node_config_file: hami-vnpu-core (and parses vDeviceCount)
FILTER_SINCE = (1, 4)  # filterDevices, and vDeviceCount applied
DEVICE_CONFIG = ("hami-scheduler-device", "device-config.yaml")


@dataclass(frozen=True)
class NodeSettings:
    """What a plugin applies from its node's entry of the node config.

    Attributes:
        vnpu_core: The entry's ``hami-vnpu-core`` (v1.3+), which replaces the
            device config's ``hamiVnpuCore``; None: no entry, the global.
        slots: ``vDeviceCount`` when above 0 (v1.4+), else 0 (the default).
        filter_uuids: Die UUIDs of chips to leave out (v1.4+).
        filter_cards: Card ids whose chips are left out (v1.4+).
    """

    vnpu_core: bool | None = None
    slots: int = 0
    filter_uuids: frozenset[str] = frozenset()
    filter_cards: frozenset[int] = frozenset()

    def ignores(self, chips: tuple[Chip, ...] | list[Chip], position: int) -> bool:
        """``shouldIgnoreDevice``: listed by its UUID or by its card id."""
        chip = chips[position]
        return (bool(chip.uuid) and chip.uuid in self.filter_uuids) or (
            card_id(chips, position) in self.filter_cards
        )


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


def plugin_version(image: str) -> tuple[int, int]:
    """``(major, minor)`` of the plugin image's tag (``...:v1.4.0``); (0, 0) if none."""
    match = re.search(r":v?(\d+)\.(\d+)", image or "")
    return (int(match.group(1)), int(match.group(2))) if match else (0, 0)


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


def flag_value(args: list[str], name: str) -> str | None:
    """A Go ``flag`` value from ``args`` (``--name v``, ``--name=v``, one dash
    too); None when not given."""
    for i, arg in enumerate(args):
        for dashes in ("--", "-"):
            if arg == dashes + name:
                return args[i + 1] if i + 1 < len(args) else ""
            if arg.startswith(f"{dashes}{name}="):
                return arg.split("=", 1)[1]
    return None


def mounted_file(store: Store, pod: Obj, path: str) -> str | None:
    """The text of the file at ``path`` in the pod's first container, when a
    ConfigMap volume is mounted there (``subPath``: that key; a directory
    mount: the key, or an ``items`` path, under it). None: no such file."""
    spec = pod.get("spec") or {}
    container = (spec.get("containers") or [{}])[0]
    volumes = {v.get("name"): v for v in spec.get("volumes") or []}
    for mount in container.get("volumeMounts") or []:
        source = (volumes.get(mount.get("name")) or {}).get("configMap")
        if not source:
            continue
        mount_path = str(mount.get("mountPath", "")).rstrip("/")
        sub_path = mount.get("subPath")
        if sub_path:
            if mount_path != path:
                continue
            relative = str(sub_path)
        elif path.startswith(mount_path + "/"):
            relative = path[len(mount_path) + 1 :]
        else:
            continue
        key = relative
        items = source.get("items")
        if items:
            key = next((i["key"] for i in items if i.get("path") == relative), "")
        found = store.get(
            resources.CONFIGMAP, pod["metadata"].get("namespace", ""), source["name"]
        )
        if found is None:
            return None
        value = (found.obj.get("data") or {}).get(key)
        return None if value is None else str(value)
    return None


@dataclass
class PluginRun:
    """One plugin process: what it read when it started.

    Attributes:
        pod_uid: The plugin pod it runs in ("": the default plugin, no DaemonSet).
        version: ``(major, minor)`` of its image.
        chip_types: The device config's chip types.
        vnpu_core: The device config's ``hamiVnpuCore``.
        settings: What it took from its node config.
        exited: It exited at start (registers nothing).
        lines: What it printed at start (klog lines, without the header).
    """

    pod_uid: str
    version: tuple[int, int]
    chip_types: list[hami.ChipTypeSpec]
    vnpu_core: bool
    settings: NodeSettings = field(default_factory=NodeSettings)
    exited: bool = False
    lines: list[tuple[str, str]] = field(default_factory=list)


def read_device_config(
    store: Store, pod: Obj | None, path: str | None
) -> tuple[list[hami.ChipTypeSpec], bool]:
    """The chip types and ``hamiVnpuCore`` of the device config the plugin
    reads: the file mounted at ``path``, else ``kube-system/hami-scheduler-device``
    (a pod without the mount, or no DaemonSet: what simcluster always read).
    A config that does not parse gives no chip types (the real plugin exits)."""
    text = mounted_file(store, pod, path) if pod is not None and path else None
    if text is None:
        found = store.get(resources.CONFIGMAP, "kube-system", DEVICE_CONFIG[0])
        text = (found.obj.get("data") or {}).get(DEVICE_CONFIG[1], "") if found else ""
    try:
        doc = hami.parse_device_config(text)
        return doc.chip_types(), bool(doc.hami_vnpu_core)
    except ValueError:
        return [], False


def node_settings(
    text: str | None, path: str, node_name: str, version: tuple[int, int]
) -> tuple[NodeSettings, list[tuple[str, str]]]:
    """What a plugin of ``version`` takes from the node config file at start,
    and the lines it logs (``LoadNodeConfig``)."""
    if text is None:
        error = f"open {path}: no such file or directory"
        return NodeSettings(), [
            ("W", f"Failed to load node config from {path}: {error}"),
            ("E", f"load node config failed: {error}"),
        ]
    filters = version >= FILTER_SINCE
    try:
        entries = parse_node_config(text, filters=filters)
    except NodeConfigError as exc:
        return NodeSettings(), [
            ("W", f"Failed to load node config from {path}: {exc}"),
            ("E", f"load node config failed: {exc}"),
        ]
    entry = entry_for(entries, node_name)
    if entry is None:
        return NodeSettings(), [
            (
                "I",
                f"No specific config found for node {node_name}, "
                "will use default settings",
            )
        ]
    settings = NodeSettings(
        vnpu_core=entry.hami_vnpu_core,
        slots=entry.v_device_count if filters and entry.v_device_count > 0 else 0,
        filter_uuids=frozenset(entry.filter_uuids) if filters else frozenset(),
        filter_cards=frozenset(entry.filter_indexes) if filters else frozenset(),
    )
    return settings, [
        ("I", f"Successfully matched node config for {node_name}: {entry}")
    ]


def start_plugin(store: Store, pod: Obj) -> PluginRun:
    """The plugin starting in ``pod``: its version, args and mounted files."""
    container = ((pod.get("spec") or {}).get("containers") or [{}])[0]
    version = plugin_version(container.get("image", ""))
    args = [str(a) for a in (container.get("command") or [])[1:]] + [
        str(a) for a in container.get("args") or []
    ]
    config_path = flag_value(args, "config_file")
    node_path = flag_value(args, "node_config_file")
    node_name = flag_value(args, "node_name") or (pod.get("spec") or {}).get(
        "nodeName", ""
    )
    uid = pod["metadata"].get("uid", "")
    chip_types, vnpu_core = read_device_config(store, pod, config_path)
    run = PluginRun(uid, version, chip_types, vnpu_core)
    if node_path is not None and version < NODE_CONFIG_SINCE:
        run.exited = True
        run.lines = [("", "flag provided but not defined: -node_config_file")]
        return run
    run.lines.append(("I", f"using config file: {config_path}"))
    if node_path:
        run.settings, lines = node_settings(
            mounted_file(store, pod, node_path), node_path, node_name, version
        )
        run.lines.extend(lines)
    return run


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
                            self.store, None, None
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
            run = start_plugin(self.store, pod)
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
