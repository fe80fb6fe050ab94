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
does, unless the caller confirms. Each node's row and verdict are made in
``health_nodes``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.db.models import Q
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from apps.inventory.deviceconfig.checks import RANK, check, mirrored_object
from apps.inventory.deviceconfig.versions import (
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
    FIRST_WITH_NODE_CONFIG,
    applied_keys,
)
from apps.inventory.models import Cluster, Node
from apps.inventory.nodeconfig.health_nodes import TARGET_VERSION, Plugin, node_row
from apps.inventory.nodeconfig.selectors import nodeconfig_mirror
from apps.inventory.nodeconfig.wiring import (
    FLAG,
    NODE_CONFIG_KEY,
    NODE_CONFIG_MAP,
    kubectl_patch,
    read_wiring,
    wiring_patch,
)

#: The checks a publish is refused on (unless confirmed): without them the
#: plugin ignores the file, or cannot start.
BLOCKING = (
    "device_plugin_daemonset",
    "plugin_version",
    "node_config_flag",
    "node_config_mount",
)


def mirrored_node_config(cluster: Cluster) -> tuple[bool, str | None]:
    """(seen, text) of the node-config ConfigMap as sync mirrored it."""
    mirror = nodeconfig_mirror(cluster)
    return mirror.state == "present", mirror.text


def _upgrade_image(image: str) -> str:
    return f"{split_image(image)[0]}:{format_version(TARGET_VERSION)}"


def _patch_fix(plugin: Plugin, what: str) -> str:
    namespace, name = plugin.ref.split("/", 1)
    if plugin.patch is None:
        return _(
            "%(fix)s by hand in DaemonSet %(ref)s (its command is a shell line)"
        ) % {"fix": what, "ref": plugin.ref}
    return _("%(fix)s: %(command)s") % {
        "fix": what,
        "command": kubectl_patch(namespace, name, plugin.patch),
    }


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
        return _(
            "; first publish the device config in the wrapper shape: v1.3.0 and "
            "later read only the wrapper and exit at start on the list shape this "
            "cluster has"
        )
    return ""


def _version_check(cluster: Cluster, plugin: Plugin) -> dict[str, Any]:
    version, wiring = plugin.version, plugin.wiring
    if version is None:
        return check(
            "plugin_version",
            "warn",
            _(
                "the device plugin's image %(image)s has no release tag: v1.1 and "
                "v1.2 read no node config, v1.3 applies only %(key)s"
            )
            % {"image": plugin.image or _("(none)"), "key": "hami-vnpu-core"},
            _("run %(plugin)s from an image with a release tag (%(version)s or later)")
            % {
                "plugin": "ascend-device-plugin",
                "version": format_version(TARGET_VERSION),
            },
        )
    label = format_version(version)
    if version >= FIRST_WITH_NODE_CONFIG:
        keys = ", ".join(applied_keys(version))
        later = (
            ""
            if version >= TARGET_VERSION
            else (
                _("; %(count_key)s and %(filter_key)s are applied from %(version)s")
                % {
                    "count_key": "vDeviceCount",
                    "filter_key": "filterDevices",
                    "version": format_version(TARGET_VERSION),
                }
            )
        )
        return check(
            "plugin_version",
            "ok",
            _("device plugin %(version)s applies %(keys)s")
            % {"version": label, "keys": keys}
            + later,
        )
    crash = wiring.flag_path is not None
    message = _(
        "device plugin %(version)s reads no node config: it has no %(flag)s flag "
        "(from %(first)s)"
    ) % {
        "version": label,
        "flag": f"--{FLAG}",
        "first": format_version(FIRST_WITH_NODE_CONFIG),
    }
    if crash:
        message += _(", and exits at start because its DaemonSet passes that flag")
    fix = _patch_fix(
        plugin,
        _("upgrade the image to %(image)s and pass the flag")
        % {"image": _upgrade_image(plugin.image)},
    )
    return check("plugin_version", "fail", message, fix + _shape_note(cluster))


def _flag_check(plugin: Plugin) -> dict[str, Any]:
    wiring = plugin.wiring
    if wiring.flag_path is not None:
        return check(
            "node_config_flag",
            "ok",
            _("container %(container)s is given %(flag)s (in its %(where)s)")
            % {
                "container": wiring.container,
                "flag": f"--{FLAG} {wiring.flag_path}",
                "where": wiring.flag_in,
            },
        )
    mounted = (
        _("the file is mounted at %(path)s but ")
        % {"path": wiring.node_config_mounts[0]}
        if wiring.node_config_mounts
        else ""
    )
    message = mounted + _(
        "container %(container)s of %(ref)s is not given %(flag)s: the plugin "
        "never reads the node config (the upstream manifest leaves the flag out)"
    ) % {"container": wiring.container, "ref": plugin.ref, "flag": f"--{FLAG}"}
    if plugin.version is not None and plugin.version < FIRST_WITH_NODE_CONFIG:
        return check(
            "node_config_flag",
            "fail",
            message,
            _("see %(check)s") % {"check": "plugin_version"},
        )
    extra = (
        ""
        if wiring.has_args
        else _(" (the patch sets args: it replaces the image's default arguments)")
    )
    return check(
        "node_config_flag",
        "fail",
        message,
        _patch_fix(plugin, _("pass the flag") + extra),
    )


def _mount_check(plugin: Plugin) -> dict[str, Any]:
    wiring = plugin.wiring
    if wiring.flag_path is None:
        if wiring.node_config_mounts:
            return check(
                "node_config_mount",
                "ok",
                _("%(config_map)s's %(key)s is mounted at %(paths)s")
                % {
                    "config_map": NODE_CONFIG_MAP,
                    "key": NODE_CONFIG_KEY,
                    "paths": ", ".join(wiring.node_config_mounts),
                },
            )
        return check(
            "node_config_mount",
            "fail",
            _("container %(container)s does not mount %(config_map)s")
            % {"container": wiring.container, "config_map": NODE_CONFIG_MAP},
            _("the patch of %(check)s mounts it too") % {"check": "node_config_flag"},
        )
    at = wiring.at_flag
    if at.is_node_config:
        return check(
            "node_config_mount",
            "ok",
            _mounted_how(wiring.flag_path or "", at.sub_path),
        )
    if not at.volume:
        what = _("nothing is mounted there")
    elif not at.config_map:
        what = _("volume %(volume)s mounted there is not a ConfigMap") % {
            "volume": at.volume
        }
    else:
        what = _("it is key %(key)s of ConfigMap %(config_map)s") % {
            "key": at.key or _("(unknown)"),
            "config_map": at.config_map,
        }
    return check(
        "node_config_mount",
        "fail",
        _(
            "%(flag)s is %(path)s, but %(what)s: the plugin logs %(log)s and runs "
            "on defaults"
        )
        % {
            "flag": f"--{FLAG}",
            "path": wiring.flag_path,
            "what": what,
            "log": '"load node config failed"',
        },
        _patch_fix(
            plugin,
            _("point the flag at the mounted %(key)s") % {"key": NODE_CONFIG_KEY},
        ),
    )


def _mounted_how(path: str, sub_path: bool) -> str:
    names = {"path": path, "config_map": NODE_CONFIG_MAP, "key": NODE_CONFIG_KEY}
    if sub_path:
        return (
            _(
                "%(path)s is %(config_map)s's %(key)s, mounted by subPath: a changed "
                "ConfigMap reaches a plugin pod only when it restarts"
            )
            % names
        )
    return (
        _(
            "%(path)s is %(config_map)s's %(key)s, mounted as a directory: the plugin "
            "still reads it only when it starts"
        )
        % names
    )


def _plugin(cluster: Cluster) -> tuple[Plugin | None, list[dict[str, Any]]]:
    """The DaemonSet's plugin and the cluster-level wiring checks."""
    ref = settings.DEVICE_PLUGIN_DAEMONSET
    row = mirrored_object(cluster, "DaemonSet", ref)
    wiring = read_wiring(row.data or {}) if row is not None else None
    if row is None or wiring is None:
        said = (
            _(
                "DaemonSet %(ref)s has not been seen by sync: nothing reads the node config"
            )
            if row is None
            else _("DaemonSet %(ref)s has no container: nothing reads the node config")
        )
        return None, [
            check(
                "device_plugin_daemonset",
                "fail",
                said % {"ref": ref},
                _(
                    "deploy the HAMi Ascend device plugin, or name its DaemonSet in "
                    "%(setting)s"
                )
                % {"setting": "DEVICE_PLUGIN_DAEMONSET"},
            )
        ]
    version = image_version(wiring.image)
    old = version is not None and version < FIRST_WITH_NODE_CONFIG
    patch = wiring_patch(
        row.data or {}, image=_upgrade_image(wiring.image) if old else None
    )
    plugin = Plugin(
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
            _("%(ref)s: container %(container)s, image %(image)s")
            % {"ref": ref, "container": wiring.container, "image": wiring.image},
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
            _(
                "sync has not seen ConfigMap %(config_map)s: which nodes have an "
                "entry is unknown, and a plugin pod whose ConfigMap volume is "
                "missing does not start"
            )
            % {"config_map": NODE_CONFIG_MAP},
            _("create %(config_map)s (%(empty)s) before mounting it")
            % {"config_map": NODE_CONFIG_MAP, "empty": "nodes: []"},
        ), None
    if text is None:
        return check(
            "node_config_map",
            "fail",
            _("%(config_map)s has no key %(key)s")
            % {"config_map": NODE_CONFIG_MAP, "key": NODE_CONFIG_KEY},
            _("write %(key)s (%(empty)s for no overrides)")
            % {"key": NODE_CONFIG_KEY, "empty": "nodes: []"},
        ), None
    try:
        read = parse_node_config(text)
    except NodeConfigError as exc:
        return check(
            "node_config_map",
            "fail",
            _(
                "%(key)s is not YAML (%(error)s): the plugin logs %(log)s and every "
                "node runs on defaults"
            )
            % {
                "key": NODE_CONFIG_KEY,
                "error": exc.message,
                "log": '"load node config failed"',
            },
            _("publish a valid node config"),
        ), {}
    entries: dict[str, NodeEntry] = {}
    for entry in read.entries:
        entries.setdefault(entry.name, entry)
    if read.report.errors:
        first = read.report.errors[0]
        count = len(read.report.errors)
        return check(
            "node_config_map",
            "warn",
            ngettext(
                "%(key)s has %(count)d error, %(field)s: %(error)s; a wrong type "
                "makes the plugin ignore the whole file",
                "%(key)s has %(count)d errors, first %(field)s: %(error)s; a wrong "
                "type makes the plugin ignore the whole file",
                count,
            )
            % {
                "key": NODE_CONFIG_KEY,
                "count": count,
                "field": first.field,
                "error": first.message,
            },
            _("check it with %(command)s, and publish a corrected one")
            % {"command": "manage.py nodeconfig check"},
        ), entries
    return check(
        "node_config_map",
        "ok",
        ngettext(
            "%(key)s has %(count)d node entry",
            "%(key)s has %(count)d node entries",
            len(entries),
        )
        % {"key": NODE_CONFIG_KEY, "count": len(entries)},
    ), entries


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
        "nodes": [node_row(n, plugin, entries) for n in _node_names(cluster)],
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
