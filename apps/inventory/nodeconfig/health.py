"""Is the node config read at all? Checks per cluster and per node, from what sync mirrored.

The device plugin reads ``hami-device-node-config`` once at start, only when
its container is given ``--node_config_file`` pointing at the mounted file,
and only from v1.3.0 (docs/node-config.md): v1.1.0 and v1.2.0 have no such
flag and exit at start when given it; v1.3.0 applies ``hami-vnpu-core`` only
(it parses ``vDeviceCount`` and ignores it); v1.4.0 applies ``vDeviceCount``
and ``filterDevices`` too. Anything short of that and an edit publishes
without error and changes nothing, so each problem here says why and how to
fix it, with the DaemonSet patch that wires the file in.

Like the device config's health (``apps.inventory.deviceconfig.health``) this
makes no API call: the DaemonSet is mirrored whole by sync
(``ClusterObject``, its args, volumes and mounts included), the nodes and
chips too. The version is the DaemonSet's image tag: sync does not record
each node's plugin pod, so a node whose pod still runs an older image during
a rollout is not told apart (the answer says where the version comes from).
``node_config_readable`` is what a publish calls before it writes, and
``node_config_read_guard`` refuses it, as the device config's shape guard
does, unless the caller confirms.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db.models import Q

from apps.inventory.deviceconfig.checks import RANK, check, mirrored_object
from apps.inventory.deviceconfig.versions import (
    Version,
    format_version,
    image_version,
    split_image,
)
from apps.inventory.errors import NodeConfigNotRead, refuse_unless_confirmed
from apps.inventory.hami.deviceconfig import (
    DeviceConfigError,
    Shape,
    parse_device_config,
)
from apps.inventory.hami.nodeconfig import (
    NodeConfigError,
    NodeEntry,
    parse_node_config,
)
from apps.inventory.hami.nodeconfig_rules import (
    FIRST_WITH_FILTERS,
    FIRST_WITH_NODE_CONFIG,
    applied_keys,
)
from apps.inventory.models import Cluster, Node
from apps.inventory.nodeconfig.selectors import nodeconfig_mirror
from apps.inventory.nodeconfig.wiring import (
    FLAG,
    NODE_CONFIG_KEY,
    NODE_CONFIG_MAP,
    Wiring,
    kubectl_patch,
    read_wiring,
    wiring_patch,
)

#: The version a fix upgrades to: the first that applies every key.
TARGET_VERSION: Version = FIRST_WITH_FILTERS
#: The checks a publish is refused on (unless confirmed): without them the
#: plugin ignores the file, or cannot start.
BLOCKING = (
    "device_plugin_daemonset",
    "plugin_version",
    "node_config_flag",
    "node_config_mount",
)


@dataclass(frozen=True)
class _Plugin:
    """What the cluster-level checks found, for the per-node rows."""

    ref: str
    image: str
    version: Version | None
    wiring: Wiring
    patch: dict[str, Any] | None
    reads: bool  # the wiring and version let the plugin read the file


def mirrored_node_config(cluster: Cluster) -> tuple[bool, str | None]:
    """(seen, text) of the node-config ConfigMap as sync mirrored it."""
    mirror = nodeconfig_mirror(cluster)
    return mirror.state == "present", mirror.text


def _upgrade_image(image: str) -> str:
    return f"{split_image(image)[0]}:{format_version(TARGET_VERSION)}"


def _patch_fix(plugin: _Plugin, what: str) -> str:
    namespace, name = plugin.ref.split("/", 1)
    if plugin.patch is None:
        return f"{what} by hand in DaemonSet {plugin.ref} (its command is a shell line)"
    return f"{what}: {kubectl_patch(namespace, name, plugin.patch)}"


def _shape_note(cluster: Cluster) -> str:
    """What an upgrade past v1.2 needs of the device config: the wrapper shape."""
    row = mirrored_object(
        cluster,
        "ConfigMap",
        f"{cluster.device_config_namespace}/{cluster.device_config_name}",
    )
    text = (
        ((row.data or {}).get("data") or {}).get("device-config.yaml") if row else None
    )
    try:
        shape = parse_device_config(text).shape if isinstance(text, str) else None
    except DeviceConfigError:
        shape = None
    if shape is Shape.LIST:
        return (
            "; first publish the device config in the wrapper shape: v1.3.0 and "
            "later read only the wrapper and exit at start on the list shape this "
            "cluster has"
        )
    return ""


def _version_check(cluster: Cluster, plugin: _Plugin) -> dict[str, Any]:
    version, wiring = plugin.version, plugin.wiring
    if version is None:
        return check(
            "plugin_version",
            "warn",
            f"the device plugin's image {plugin.image or '(none)'} has no release tag: "
            "v1.1 and v1.2 read no node config, v1.3 applies only hami-vnpu-core",
            "run ascend-device-plugin from an image with a release tag "
            f"({format_version(TARGET_VERSION)} or later)",
        )
    label = format_version(version)
    if version >= FIRST_WITH_NODE_CONFIG:
        keys = ", ".join(applied_keys(version))
        later = (
            ""
            if version >= TARGET_VERSION
            else (
                "; vDeviceCount and filterDevices are applied from "
                f"{format_version(TARGET_VERSION)}"
            )
        )
        return check(
            "plugin_version", "ok", f"device plugin {label} applies {keys}{later}"
        )
    crash = wiring.flag_path is not None
    message = (
        f"device plugin {label} reads no node config: it has no --{FLAG} flag "
        f"(from {format_version(FIRST_WITH_NODE_CONFIG)})"
    )
    if crash:
        message += ", and exits at start because its DaemonSet passes that flag"
    fix = _patch_fix(
        plugin, f"upgrade the image to {_upgrade_image(plugin.image)} and pass the flag"
    )
    return check("plugin_version", "fail", message, fix + _shape_note(cluster))


def _flag_check(plugin: _Plugin) -> dict[str, Any]:
    wiring = plugin.wiring
    if wiring.flag_path is not None:
        return check(
            "node_config_flag",
            "ok",
            f"container {wiring.container} is given --{FLAG} {wiring.flag_path} "
            f"(in its {wiring.flag_in})",
        )
    mounted = (
        f"the file is mounted at {wiring.node_config_mounts[0]} but "
        if wiring.node_config_mounts
        else ""
    )
    message = (
        f"{mounted}container {wiring.container} of {plugin.ref} is not given --{FLAG}: "
        "the plugin never reads the node config (the upstream manifest leaves the "
        "flag out)"
    )
    if plugin.version is not None and plugin.version < FIRST_WITH_NODE_CONFIG:
        return check("node_config_flag", "fail", message, "see plugin_version")
    extra = (
        ""
        if wiring.has_args
        else " (the patch sets args: it replaces the image's default arguments)"
    )
    return check(
        "node_config_flag",
        "fail",
        message,
        _patch_fix(plugin, "pass the flag" + extra),
    )


def _mount_check(plugin: _Plugin) -> dict[str, Any]:
    wiring = plugin.wiring
    if wiring.flag_path is None:
        if wiring.node_config_mounts:
            return check(
                "node_config_mount",
                "ok",
                f"{NODE_CONFIG_MAP}'s {NODE_CONFIG_KEY} is mounted at "
                f"{', '.join(wiring.node_config_mounts)}",
            )
        return check(
            "node_config_mount",
            "fail",
            f"container {wiring.container} does not mount {NODE_CONFIG_MAP}",
            "the patch of node_config_flag mounts it too",
        )
    at = wiring.at_flag
    if at.is_node_config:
        how = (
            "by subPath: a changed ConfigMap reaches a plugin pod only when it restarts"
            if at.sub_path
            else "as a directory: the plugin still reads it only when it starts"
        )
        return check(
            "node_config_mount",
            "ok",
            f"{wiring.flag_path} is {NODE_CONFIG_MAP}'s {NODE_CONFIG_KEY}, mounted {how}",
        )
    if not at.volume:
        what = "nothing is mounted there"
    elif not at.config_map:
        what = f"volume {at.volume} mounted there is not a ConfigMap"
    else:
        what = f"it is key {at.key or '(unknown)'} of ConfigMap {at.config_map}"
    return check(
        "node_config_mount",
        "fail",
        f'--{FLAG} is {wiring.flag_path}, but {what}: the plugin logs "load node '
        'config failed" and runs on defaults',
        _patch_fix(plugin, f"point the flag at the mounted {NODE_CONFIG_KEY}"),
    )


def _plugin(cluster: Cluster) -> tuple[_Plugin | None, list[dict[str, Any]]]:
    """The DaemonSet's plugin and the cluster-level wiring checks."""
    ref = settings.DEVICE_PLUGIN_DAEMONSET
    row = mirrored_object(cluster, "DaemonSet", ref)
    wiring = read_wiring(row.data or {}) if row is not None else None
    if row is None or wiring is None:
        said = "has not been seen by sync" if row is None else "has no container"
        return None, [
            check(
                "device_plugin_daemonset",
                "fail",
                f"DaemonSet {ref} {said}: nothing reads the node config",
                "deploy the HAMi Ascend device plugin, or name its DaemonSet in "
                "DEVICE_PLUGIN_DAEMONSET",
            )
        ]
    version = image_version(wiring.image)
    old = version is not None and version < FIRST_WITH_NODE_CONFIG
    patch = wiring_patch(
        row.data or {}, image=_upgrade_image(wiring.image) if old else None
    )
    plugin = _Plugin(
        ref=ref,
        image=wiring.image,
        version=version,
        wiring=wiring,
        patch=patch,
        reads=not old and wiring.reads_file,
    )
    checks = [
        check(
            "device_plugin_daemonset",
            "ok",
            f"{ref}: container {wiring.container}, image {wiring.image}",
        ),
        _version_check(cluster, plugin),
        _flag_check(plugin),
        _mount_check(plugin),
    ]
    return plugin, checks


def _config_map_check(
    seen: bool, text: str | None
) -> tuple[dict[str, Any], dict[str, NodeEntry] | None]:
    """The ConfigMap's check and its entries by node name (None: cannot tell)."""
    if not seen:
        return check(
            "node_config_map",
            "warn",
            f"sync has not seen ConfigMap {NODE_CONFIG_MAP}: which nodes have an entry "
            "is unknown, and a plugin pod whose ConfigMap volume is missing does not start",
            f"create {NODE_CONFIG_MAP} (nodes: []) before mounting it",
        ), None
    if text is None:
        return check(
            "node_config_map",
            "fail",
            f"{NODE_CONFIG_MAP} has no key {NODE_CONFIG_KEY}",
            f"write {NODE_CONFIG_KEY} (nodes: [] for no overrides)",
        ), None
    try:
        read = parse_node_config(text)
    except NodeConfigError as exc:
        return check(
            "node_config_map",
            "fail",
            f'{NODE_CONFIG_KEY} is not YAML ({exc.message}): the plugin logs "load '
            'node config failed" and every node runs on defaults',
            "publish a valid node config",
        ), {}
    entries: dict[str, NodeEntry] = {}
    for entry in read.entries:
        entries.setdefault(entry.name, entry)
    if read.report.errors:
        first = read.report.errors[0]
        return check(
            "node_config_map",
            "warn",
            f"{NODE_CONFIG_KEY} has {len(read.report.errors)} error(s), first "
            f"{first.field}: {first.message}; a wrong type makes the plugin ignore "
            "the whole file",
            "check it with manage.py nodeconfig check, and publish a corrected one",
        ), entries
    return check(
        "node_config_map", "ok", f"{NODE_CONFIG_KEY} has {len(entries)} node entries"
    ), entries


def _entry_words(entry: NodeEntry) -> str:
    parts = ["hami-core" if entry.hami_vnpu_core else "template"]
    if entry.v_device_count:
        parts.append(f"{entry.v_device_count} slots per chip")
    filters = entry.filter_devices
    if filters.uuids:
        parts.append(f"{len(filters.uuids)} chip(s) filtered by uuid")
    if filters.indexes:
        parts.append(
            f"card(s) {', '.join(map(str, filters.indexes))} filtered by index"
        )
    return ", ".join(parts)


def _node_row(
    name: str, plugin: _Plugin | None, entries: dict[str, NodeEntry] | None
) -> dict[str, Any]:
    """One node: its plugin version, what it applies, its entry, and one verdict."""
    version = plugin.version if plugin else None
    keys = applied_keys(version) if plugin and plugin.reads else []
    entry = entries.get(name) if entries is not None else None
    row: dict[str, Any] = {
        "name": name,
        "plugin_image": plugin.image if plugin else "",
        "plugin_version": format_version(version) if version else None,
        "version_source": "daemonset" if plugin else "",
        "applies": keys,
        "has_entry": None if entries is None else entry is not None,
        "entry": _entry_words(entry) if entry else "",
    }
    if plugin is None or not plugin.reads:
        said = f"the entry ({row['entry']}) does nothing: " if entry else ""
        return {
            **row,
            "check_status": "fail",
            "message": f"{said}the node config is not read on {name}",
            "fix": "see the checks above",
        }
    if entries is None:
        return {
            **row,
            "check_status": "warn",
            "message": f"{name} reads the node config; whether it has an entry is unknown",
            "fix": "",
        }
    if entry is None:
        return {
            **row,
            "check_status": "ok",
            "message": f"{name} has no entry: it runs on the plugin's defaults",
            "fix": "",
        }
    ignored = [
        key
        for key, used in (
            ("vDeviceCount", bool(entry.v_device_count)),
            ("filterDevices", not entry.filter_devices.empty),
        )
        if used and key not in keys
    ]
    if ignored:
        return {
            **row,
            "check_status": "warn",
            "message": f"{name}'s entry sets {' and '.join(ignored)}, which plugin {row['plugin_version']} does not apply",
            "fix": f"upgrade the device plugin to {format_version(TARGET_VERSION)}, or drop them from the entry",
        }
    return {
        **row,
        "check_status": "ok",
        "message": f"{name} reads its entry ({row['entry']}) when its plugin pod starts",
        "fix": "",
    }


def _node_names(cluster: Cluster) -> list[str]:
    """Nodes the plugin runs on (``ascend=on`` or registering chips); entries for
    unknown nodes are the editor's to flag, not health's."""
    names = set(
        Node.objects.filter(cluster=cluster)
        .filter(Q(ascend_enabled=True) | Q(chips__isnull=False))
        .values_list("name", flat=True)
    )
    return sorted(names)


def node_config_health(cluster: Cluster) -> dict[str, Any]:
    """Whether the device plugin reads the node config, for the cluster and per node.

    Returns:
        ``cluster``, ``check_status`` (the worst), ``readable`` (no blocking
        problem), ``checks`` (each ``id``, ``check_status``, ``message``,
        ``fix``, in a fixed order: device_plugin_daemonset, plugin_version,
        node_config_flag, node_config_mount, node_config_map), ``patch``
        (the strategic-merge patch that wires the file, or None when it is
        wired) with ``kubectl`` (the command applying it), and ``nodes``
        (per node: plugin image and version, where the version comes from,
        the keys it applies, whether it has an entry, a verdict).
    """
    plugin, checks = _plugin(cluster)
    seen, text = mirrored_node_config(cluster)
    map_check, entries = _config_map_check(seen, text)
    checks.append(map_check)
    worst = max((c["check_status"] for c in checks), key=RANK.__getitem__)
    wired = plugin is not None and plugin.reads
    namespace, name = settings.DEVICE_PLUGIN_DAEMONSET.split("/", 1)
    patch = None if wired or plugin is None else plugin.patch
    return {
        "cluster": cluster.name,
        "check_status": worst,
        "readable": not _blocking(checks),
        "checks": checks,
        "patch": patch,
        "kubectl": kubectl_patch(namespace, name, patch) if patch else "",
        "nodes": [_node_row(n, plugin, entries) for n in _node_names(cluster)],
    }


def _blocking(checks: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return [c for c in checks if c["id"] in BLOCKING and c["check_status"] == "fail"]


def node_config_readable(cluster: Cluster) -> list[dict[str, Any]]:
    """The problems that keep the device plugin from reading the node config.

    Empty when it reads it. Each is a check (``id``, ``message``, ``fix``):
    no DaemonSet, a version before v1.3.0, no ``--node_config_file``, or a
    flag pointing where the ConfigMap is not mounted. A publish calls this
    before it writes (``node_config_read_guard``).
    """
    return _blocking(_plugin(cluster)[1])


def node_config_read_guard(cluster: Cluster, confirmed: bool) -> list[dict[str, Any]]:
    """Refuse to publish a node config the plugin will not read unless confirmed.

    As the device config's shape guard: the 400 names the field to send
    (``confirm_unread``) and says why and how to fix it; with it, the publish
    goes on and the problems are returned for the answer to carry.

    Raises:
        NodeConfigNotRead: A blocking problem, not confirmed.
    """
    problems = node_config_readable(cluster)
    if problems:
        said = "; ".join(f"{p['message']} ({p['fix']})" for p in problems)
        refuse_unless_confirmed(NodeConfigNotRead, "confirm_unread", said, confirmed)
    return problems
