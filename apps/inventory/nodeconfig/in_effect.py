"""The node config in effect on each node, and the whole picture ``GET
/api/clusters/<id>/node-config/`` shows.

The device plugin reads ``node-config.yaml`` once, when its pod starts
(mounted by ``subPath``: a changed ConfigMap never reaches a running pod).
So a node runs the version that was live when its plugin pod started: the
newest version that changed the ConfigMap at or before that start, as the
device config's rule for the scheduler (``deviceconfig.in_effect``). The
start is read from the plugin DaemonSet's pods, listed live (sync mirrors
the DaemonSet, not its pods). A node whose entry differs between that version
and the newest one is "restart pending": deleting its plugin pod (the
DaemonSet recreates it) applies the newer one. Whether the plugin reads the
file at all (its version, ``--node_config_file``) is the health check's.
"""

from __future__ import annotations

import logging
from datetime import datetime
from functools import lru_cache
from typing import Any

from django.conf import settings
from django.utils.translation import gettext as _

from apps.common.exceptions import ClusterUnavailable, NotFound
from apps.inventory.deviceconfig.in_effect import (
    changing_versions,
    first_seen,
    loaded_version,
    oldest_running_start,
)
from apps.inventory.deviceconfig.restarts import restart_component_get, restart_states
from apps.inventory.hami.nodeconfig import (
    NodeConfigError,
    NodeEntry,
    parse_node_config,
)
from apps.inventory.models import Cluster, Node, NodeConfigVersion
from apps.inventory.nodeconfig.selectors import (
    nodeconfig_baseline,
    nodeconfig_drift_recorded,
    nodeconfig_mirror,
)

log = logging.getLogger(__name__)


@lru_cache(maxsize=64)
def _entries(text: str) -> dict[str, NodeEntry] | str:
    """The first entry of each node in a version's text, or why it does not load
    (a version's text never changes, so its parse is kept)."""
    try:
        read = parse_node_config(text)
    except NodeConfigError as exc:
        return exc.message
    found: dict[str, NodeEntry] = {}
    for entry in read.entries:
        found.setdefault(entry.name, entry)
    return found


def _entry(version: NodeConfigVersion | None, node: str) -> NodeEntry | str | None:
    if version is None:
        return None
    entries = _entries(version.text)
    return entries if isinstance(entries, str) else entries.get(node)


def plugin_pod_starts(cluster: Cluster) -> dict[str, dict[str, Any]]:
    """Each node's running device-plugin pod, listed live: name and start.

    Raises:
        ClusterUnavailable: The cluster could not be reached.
        NotFound: ``DEVICE_PLUGIN_DAEMONSET`` names no known component.
    """
    name = settings.DEVICE_PLUGIN_DAEMONSET.split("/", 1)[1]
    (row,) = restart_states(cluster, only=restart_component_get(name))["components"]
    by_node: dict[str, list[dict[str, Any]]] = {}
    for pod in row["pods"]:
        by_node.setdefault(pod["node"], []).append(pod)
    starts = {}
    for node, pods in by_node.items():
        started = oldest_running_start(pods)
        if started is not None:
            pod = next(p for p in pods if p["started_at"] == started)
            starts[node] = {"pod": pod["name"], "started_at": started}
    return starts


def node_in_effect(
    cluster: Cluster, node: str, started_at: datetime | None, plugin_pod: str
) -> dict[str, Any]:
    """Which version ``node``'s plugin read when its pod started, and whether
    the newest version changes that node's entry (a restart pending)."""
    published = changing_versions(cluster, NodeConfigVersion).first() or first_seen(
        cluster, NodeConfigVersion
    )
    answer: dict[str, Any] = {
        "version": None,
        "published_version": published.number if published else None,
        "plugin_pod": plugin_pod,
        "started_at": started_at,
        "restart_pending": False,
        "why": "",
    }
    if published is None:
        return {**answer, "why": _("no node config has been seen in the cluster")}
    if started_at is None:
        return {**answer, "why": _("no running device-plugin pod on this node")}
    loaded = loaded_version(cluster, started_at, NodeConfigVersion) or published
    pending = loaded.number < published.number and _entry(loaded, node) != _entry(
        published, node
    )
    if pending:
        why = _(
            "its plugin pod started before v%(published)s and still runs "
            "v%(loaded)s: delete pod %(pod)s (the DaemonSet recreates it) to apply it"
        ) % {"published": published.number, "loaded": loaded.number, "pod": plugin_pod}
    elif loaded.number < published.number:
        why = _(
            "runs v%(loaded)s; v%(published)s leaves this node's entry as it is: "
            "no restart is needed"
        ) % {"loaded": loaded.number, "published": published.number}
    else:
        why = _("its plugin pod started after v%(loaded)s") % {"loaded": loaded.number}
    return {**answer, "version": loaded.number, "restart_pending": pending, "why": why}


def _node_row(name: str, entry: NodeEntry | None, known: bool) -> dict[str, Any]:
    filters = entry.filter_devices if entry else None
    return {
        "name": name,
        "known": known,
        "has_entry": entry is not None,
        "position": entry.position if entry else None,
        "hami_vnpu_core": entry.hami_vnpu_core if entry else None,
        "v_device_count": entry.v_device_count if entry else None,
        "filter_uuids": list(filters.uuids) if filters else [],
        "filter_indexes": list(filters.indexes) if filters else [],
    }


def nodeconfig_state(cluster: Cluster) -> dict[str, Any]:
    """The live node config, as sync mirrored it, per node, with the version in effect.

    Every node of the cluster has a row (``has_entry`` False: the plugin
    runs on defaults there), and so has every entry naming a node the
    cluster does not have (``known`` False). The plugin pods are listed
    live; when the cluster cannot be reached, ``in_effect`` says so.
    """
    mirror = nodeconfig_mirror(cluster)
    entries: dict[str, NodeEntry] = {}
    issues: list[dict[str, str]] = []
    if mirror.text is not None:
        try:
            read = parse_node_config(mirror.text)
            for entry in read.entries:
                entries.setdefault(entry.name, entry)
            issues = [
                {"field": i.field, "message": i.message, "severity": i.severity}
                for i in read.report.issues
            ]
        except NodeConfigError as exc:
            issues = [{"field": "text", "message": exc.message, "severity": "error"}]
    names = list(
        Node.objects.filter(cluster=cluster)
        .order_by("name")
        .values_list("name", flat=True)
    )
    rows = [_node_row(n, entries.get(n), True) for n in names]
    rows += [_node_row(n, e, False) for n, e in entries.items() if n not in names]
    try:
        starts, pods_read = plugin_pod_starts(cluster), "live"
    except (ClusterUnavailable, NotFound) as exc:
        log.info("plugin pods of %s not read: %s", cluster.name, exc)
        starts, pods_read = {}, f"not read: {exc.message}"
    for row in rows:
        start = starts.get(row["name"], {})
        row["in_effect"] = node_in_effect(
            cluster, row["name"], start.get("started_at"), start.get("pod", "")
        )
    baseline = nodeconfig_baseline(cluster)
    return {
        "cluster": cluster.name,
        "configmap": {
            "namespace": mirror.namespace,
            "name": mirror.name,
            "state": mirror.state,
            "resource_version": mirror.resource_version,
            "has_key": mirror.text is not None,
        },
        "text": mirror.text,
        "baseline_version": baseline.number if baseline else None,
        "drift": nodeconfig_drift_recorded(cluster),
        "issues": issues,
        "plugin_pods": pods_read,
        "nodes": rows,
    }
