"""What a device plugin process reads when its pod starts, as each version reads it.

The real plugin (``cmd/main.go``) reads, once per process: its version (here,
the pod's image tag), ``--config_file`` and ``--node_config_file`` (files
mounted from ConfigMaps at those paths, by ``subPath`` in the upstream
manifests) and ``--node_name`` (default: ``$NODE_NAME``, the pod's node).
Pure: the ConfigMaps come through a :data:`ConfigMapReader`, so simcluster's
plugin (its store) and kubestack's (the real API server) start a plugin by
the same rules (docs/node-config.md):

- v1.1.0, v1.2.0: no such flag; given ``--node_config_file`` the plugin exits
  at start (Go's ``flag provided but not defined``, exit code 2) and
  registers nothing;
- v1.3.0: the node's entry sets ``hami-vnpu-core`` (an entry without the key
  turns it off); ``vDeviceCount`` is parsed but not applied;
- v1.4.0: also ``vDeviceCount`` (> 0) and ``filterDevices`` (a chip whose die
  UUID or whose card id is listed is left out).

A node config file that does not load is logged and the plugin runs on
defaults; so does a node without an entry.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from simcluster import hami
from simcluster.hardware import Chip, card_id
from simcluster.nodeconfig import NodeConfigError, entry_for, parse_node_config

Obj = dict[str, Any]
#: ``(namespace, name)`` -> the ConfigMap's ``data``, or None when it does not exist.
ConfigMapReader = Callable[[str, str], dict[str, str] | None]

NODE_CONFIG_SINCE = (1, 3)  # --node_config_file: hami-vnpu-core (parses vDeviceCount)
FILTER_SINCE = (1, 4)  # filterDevices, and vDeviceCount applied
DEVICE_CONFIG = ("hami-scheduler-device", "device-config.yaml")
FLAG_EXIT_CODE = 2  # Go's flag.ExitOnError on an unknown flag
UNKNOWN_FLAG = "flag provided but not defined: -node_config_file"


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
        lines: What it printed at start (klog level and text; level "" for
            Go's own output before klog starts).
    """

    pod_uid: str
    version: tuple[int, int]
    chip_types: list[hami.ChipTypeSpec]
    vnpu_core: bool
    settings: NodeSettings = field(default_factory=NodeSettings)
    exited: bool = False
    lines: list[tuple[str, str]] = field(default_factory=list)


def plugin_version(image: str) -> tuple[int, int]:
    """``(major, minor)`` of the plugin image's tag (``...:v1.4.0``); (0, 0) if none."""
    match = re.search(r":v?(\d+)\.(\d+)", image or "")
    return (int(match.group(1)), int(match.group(2))) if match else (0, 0)


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


def _mounted_key(mount: Obj, source: Obj, path: str) -> str | None:
    """The ConfigMap key a mount shows at ``path`` (``subPath``: that key; a
    directory mount: the key, or an ``items`` path, under it); None: not here."""
    mount_path = str(mount.get("mountPath", "")).rstrip("/")
    sub_path = mount.get("subPath")
    if sub_path:
        if mount_path != path:
            return None
        relative = str(sub_path)
    elif path.startswith(mount_path + "/"):
        relative = path[len(mount_path) + 1 :]
    else:
        return None
    items = source.get("items")
    if items:
        return next((i["key"] for i in items if i.get("path") == relative), "")
    return relative


def mounted_file(pod: Obj, path: str, read_configmap: ConfigMapReader) -> str | None:
    """The text of the file at ``path`` in the pod's first container, when a
    ConfigMap volume is mounted there. None: no such file."""
    spec = pod.get("spec") or {}
    container = (spec.get("containers") or [{}])[0]
    volumes = {v.get("name"): v for v in spec.get("volumes") or []}
    for mount in container.get("volumeMounts") or []:
        source = (volumes.get(mount.get("name")) or {}).get("configMap")
        if not source:
            continue
        key = _mounted_key(mount, source, path)
        if key is None:
            continue
        data = read_configmap(pod["metadata"].get("namespace", ""), source["name"])
        if data is None:
            return None
        value = data.get(key)
        return None if value is None else str(value)
    return None


def read_device_config(
    pod: Obj | None, path: str | None, read_configmap: ConfigMapReader
) -> tuple[list[hami.ChipTypeSpec], bool]:
    """The chip types and ``hamiVnpuCore`` of the device config the plugin
    reads: the file mounted at ``path``, else ``kube-system/hami-scheduler-device``
    (a pod without the mount, or no DaemonSet: what the simulators always read).
    A config that does not parse gives no chip types (the real plugin exits)."""
    text = mounted_file(pod, path, read_configmap) if pod is not None and path else None
    if text is None:
        data = read_configmap("kube-system", DEVICE_CONFIG[0]) or {}
        text = data.get(DEVICE_CONFIG[1], "")
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


def start_plugin(pod: Obj, read_configmap: ConfigMapReader) -> PluginRun:
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
    chip_types, vnpu_core = read_device_config(pod, config_path, read_configmap)
    run = PluginRun(uid, version, chip_types, vnpu_core)
    if node_path is not None and version < NODE_CONFIG_SINCE:
        run.exited = True
        run.lines = [("", UNKNOWN_FLAG)]
        return run
    run.lines.append(("I", f"using config file: {config_path}"))
    if node_path:
        run.settings, lines = node_settings(
            mounted_file(pod, node_path, read_configmap), node_path, node_name, version
        )
        run.lines.extend(lines)
    return run
