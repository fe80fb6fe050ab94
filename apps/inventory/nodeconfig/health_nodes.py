"""The node config's health per node: what each node's plugin applies, and one verdict.

``apps.inventory.nodeconfig.health`` makes the cluster-level checks (the
DaemonSet, its version, flag and mount, the ConfigMap) and hands what it found
(``Plugin``) here for the rows of the nodes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from apps.inventory.deviceconfig.versions import Version, format_version
from apps.inventory.hami.nodeconfig import NodeEntry
from apps.inventory.hami.nodeconfig_rules import FIRST_WITH_FILTERS, applied_keys
from apps.inventory.nodeconfig.wiring import Wiring

#: The version a fix upgrades to: the first that applies every key.
TARGET_VERSION: Version = FIRST_WITH_FILTERS


@dataclass(frozen=True)
class Plugin:
    """What the cluster-level checks found, for the per-node rows."""

    ref: str
    image: str
    version: Version | None
    wiring: Wiring
    patch: dict[str, Any] | None
    reads: bool  # the wiring and version let the plugin read the file


def _entry_words(entry: NodeEntry) -> str:
    parts = ["hami-core" if entry.hami_vnpu_core else "template"]
    if entry.v_device_count:
        parts.append(
            ngettext(
                "%(count)d slot per chip",
                "%(count)d slots per chip",
                entry.v_device_count,
            )
            % {"count": entry.v_device_count}
        )
    filters = entry.filter_devices
    if filters.uuids:
        parts.append(
            ngettext(
                "%(count)d chip filtered by uuid",
                "%(count)d chips filtered by uuid",
                len(filters.uuids),
            )
            % {"count": len(filters.uuids)}
        )
    if filters.indexes:
        parts.append(
            ngettext(
                "card %(cards)s filtered by index",
                "cards %(cards)s filtered by index",
                len(filters.indexes),
            )
            % {"cards": ", ".join(map(str, filters.indexes))}
        )
    return ", ".join(parts)


def node_row(
    name: str, plugin: Plugin | None, entries: dict[str, NodeEntry] | None
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
    node = {"node": name}
    if plugin is None or not plugin.reads:
        said = (
            _(
                "the entry (%(entry)s) does nothing: the node config is not read on %(node)s"
            )
            % {**node, "entry": row["entry"]}
            if entry
            else _("the node config is not read on %(node)s") % node
        )
        return {
            **row,
            "check_status": "fail",
            "message": said,
            "fix": _("see the checks above"),
        }
    if entries is None:
        return {
            **row,
            "check_status": "warn",
            "message": _(
                "%(node)s reads the node config; whether it has an entry is unknown"
            )
            % node,
            "fix": "",
        }
    if entry is None:
        return {
            **row,
            "check_status": "ok",
            "message": _("%(node)s has no entry: it runs on the plugin's defaults")
            % node,
            "fix": "",
        }
    return _entry_verdict(row, entry, keys)


def _entry_verdict(
    row: dict[str, Any], entry: NodeEntry, keys: list[str]
) -> dict[str, Any]:
    """A node that reads its entry: which of its keys its plugin ignores, if any."""
    node = {"node": row["name"]}
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
            "message": _(
                "%(node)s's entry sets %(keys)s, which plugin %(version)s does not "
                "apply"
            )
            % {
                **node,
                "keys": " and ".join(ignored),
                "version": row["plugin_version"],
            },
            "fix": _(
                "upgrade the device plugin to %(version)s, or drop them from the entry"
            )
            % {"version": format_version(TARGET_VERSION)},
        }
    return {
        **row,
        "check_status": "ok",
        "message": _("%(node)s reads its entry (%(entry)s) when its plugin pod starts")
        % {**node, "entry": row["entry"]},
        "fix": "",
    }
