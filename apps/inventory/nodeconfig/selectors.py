"""Reads for the per-node config: what the portal knows of a cluster, and the checks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db.models import Q, QuerySet
from django.utils.translation import gettext as _

from apps.common.exceptions import NotFound
from apps.inventory.choices import DeviceConfigSource as Source
from apps.inventory.deviceconfig import book
from apps.inventory.deviceconfig.selectors import text_diff
from apps.inventory.deviceconfig.specs import chip_type_specs
from apps.inventory.deviceconfig.versions import cluster_components, first_of
from apps.inventory.hami.deviceconfig import ChipTypeSpec
from apps.inventory.hami.nodeconfig import (
    NODE_CONFIG_KEY,
    NodeConfigRead,
    NodeEntry,
    parse_node_config,
    render_node_config,
)
from apps.inventory.hami.nodeconfig_rules import (
    KnownChip,
    KnownNode,
    check_against_cluster,
)
from apps.inventory.hami.validation import ValidationReport
from apps.inventory.models import (
    Chip,
    Cluster,
    ClusterObject,
    Node,
    NodeConfigVersion,
    SyncCursor,
)

#: Sync's stream (and SyncCursor resource) of the node-config ConfigMap.
NODE_CONFIG_TARGET = "configmap:node-config"


@dataclass(frozen=True)
class ClusterFacts:
    """What the node-config rules need to know of one cluster.

    Attributes:
        nodes: Every node sync saw, with its registered chips.
        chip_types: The portal's chip types (device config) by commonWord.
        plugin_image: The device plugin's image, "" when its DaemonSet was
            not seen: where the nodes' plugin version comes from.
    """

    nodes: tuple[KnownNode, ...]
    chip_types: dict[str, ChipTypeSpec]
    plugin_image: str


def nodeconfig_facts(cluster: Cluster) -> ClusterFacts:
    """Nodes, chips, chip types and the device plugin version of ``cluster``.

    Every node gets the version of the device-plugin DaemonSet's image
    (``DEVICE_PLUGIN_DAEMONSET``): sync mirrors the DaemonSet, not each pod,
    so a node whose pod still runs an older image during a rollout is not
    told apart. No DaemonSet, or an image without a release tag: unknown.
    """
    plugin = first_of(cluster_components(cluster), "device_plugin")
    version = plugin.version if plugin is not None else None
    chips: dict[int, list[KnownChip]] = {}
    for node_id, uuid, index, word in (
        Chip.objects.filter(cluster=cluster)
        .order_by("node_id", "index", "uuid")
        .values_list("node_id", "uuid", "index", "common_word")
    ):
        chips.setdefault(node_id, []).append(KnownChip(uuid, index, word))
    nodes = tuple(
        KnownNode(
            name=name,
            chips=tuple(chips.get(pk, ())),
            plugin_version=version,
            hami_vnpu_core=core,
        )
        for pk, name, core in Node.objects.filter(cluster=cluster)
        .order_by("name")
        .values_list("pk", "name", "hami_vnpu_core")
    )
    return ClusterFacts(
        nodes=nodes,
        chip_types={spec.common_word: spec for spec in chip_type_specs(cluster)},
        plugin_image=plugin.image if plugin is not None else "",
    )


def nodeconfig_check(
    text: str, cluster: Cluster | None = None
) -> tuple[NodeConfigRead, ValidationReport]:
    """Check a node config's structure, and against ``cluster`` when given.

    Returns:
        The structural read and the cluster report (empty without a cluster).

    Raises:
        NodeConfigError: The text is not YAML at all.
    """
    read = parse_node_config(text)
    if cluster is None:
        return read, ValidationReport()
    facts = nodeconfig_facts(cluster)
    return read, check_against_cluster(read.entries, facts.nodes, facts.chip_types)


def nodeconfig_starting_file(cluster: Cluster) -> str:
    """A node config that changes nothing, to start editing from.

    Sync does not mirror ``hami-device-node-config`` yet, so this is built
    from the inventory: one entry per node that is labelled ``ascend=on`` or
    registers chips, with the slicing mode the node reports now (an entry
    must say it: left out, the plugin reads false), no slot count and no
    filters.
    """
    names = (
        Node.objects.filter(cluster=cluster)
        .filter(Q(ascend_enabled=True) | Q(chips__isnull=False))
        .values_list("name", "hami_vnpu_core")
        .distinct()
    )
    entries = [
        NodeEntry(name=name, hami_vnpu_core=core, position=position)
        for position, (name, core) in enumerate(sorted(set(names)))
    ]
    return render_node_config(entries)


# --- its history and sync's mirror of the ConfigMap --------------------------------


def nodeconfig_ref() -> tuple[str, str]:
    """``(namespace, name)`` of the node-config ConfigMap (``DEVICE_NODE_CONFIGMAP``)."""
    namespace, name = settings.DEVICE_NODE_CONFIGMAP.split("/", 1)
    return namespace, name


def nodeconfig_baseline(cluster: Cluster) -> NodeConfigVersion | None:
    """The version the portal last saw live and owns (published or adopted):
    the drift baseline, and what ``expected_version`` is compared with."""
    version: NodeConfigVersion | None = book.latest(
        NodeConfigVersion, cluster, book.OWNED
    )
    return version


def nodeconfig_last_live(cluster: Cluster) -> NodeConfigVersion | None:
    """The newest version the ConfigMap held (published, adopted or observed)."""
    version: NodeConfigVersion | None = book.latest(
        NodeConfigVersion, cluster, book.LIVE
    )
    return version


def nodeconfig_version_get(cluster: Cluster, number: int) -> NodeConfigVersion:
    """Version ``number`` of the cluster's node config; NotFound otherwise."""
    version = NodeConfigVersion.objects.filter(cluster=cluster, number=number).first()
    if version is None:
        raise NotFound(
            _("cluster %(cluster)r has no node-config version %(version)s")
            % {"cluster": cluster.name, "version": number}
        )
    return version


def nodeconfig_versions(cluster: Cluster) -> QuerySet[NodeConfigVersion]:
    """Every stored version, newest first."""
    return (
        NodeConfigVersion.objects.filter(cluster=cluster)
        .select_related("author")
        .order_by("-number")
    )


@dataclass(frozen=True)
class Mirror:
    """The node-config ConfigMap as sync last saw it.

    Attributes:
        state: ``present``; ``absent`` (sync listed it and there is no such
            ConfigMap: every plugin runs on defaults, and a plugin pod that
            mounts it cannot start); ``not_synced`` (sync has not listed it).
        namespace: The ConfigMap's namespace.
        name: Its name.
        resource_version: Its resourceVersion ("" unless present).
        text: Its ``node-config.yaml`` (None: the ConfigMap has no such key).
    """

    state: str
    namespace: str
    name: str
    resource_version: str = ""
    text: str | None = None


def nodeconfig_mirror(cluster: Cluster) -> Mirror:
    """What sync recorded of the ConfigMap: present (with its text), absent, or not listed yet."""
    namespace, name = nodeconfig_ref()
    row = ClusterObject.objects.filter(
        cluster=cluster, kind="ConfigMap", namespace=namespace, name=name
    ).first()
    if row is not None:
        text = ((row.data or {}).get("data") or {}).get(NODE_CONFIG_KEY)
        return Mirror(
            "present",
            namespace,
            name,
            row.resource_version,
            text if isinstance(text, str) else None,
        )
    listed = SyncCursor.objects.filter(
        cluster=cluster, resource=NODE_CONFIG_TARGET, last_list_at__isnull=False
    ).exists()
    return Mirror("absent" if listed else "not_synced", namespace, name)


def nodeconfig_drift_recorded(cluster: Cluster) -> dict[str, Any]:
    """Drift as sync recorded it (no call to the cluster).

    There is drift when the ConfigMap holds what the portal does not own:
    a hand edit sync recorded as an ``observed`` version nobody adopted or
    published over, or a ConfigMap deleted under a baseline.
    """
    baseline = nodeconfig_baseline(cluster)
    mirror = nodeconfig_mirror(cluster)
    newest = nodeconfig_last_live(cluster)
    base_text = baseline.text if baseline else ""
    base_label = f"v{baseline.number if baseline else 0} (baseline)"
    if mirror.state == "absent" and baseline is not None:
        return {
            "in_sync": False,
            "baseline_version": baseline.number,
            "live_version": None,
            "why": "the ConfigMap was deleted",
            "diff": text_diff(
                base_text, "", before_label=base_label, after_label="(no ConfigMap)"
            ),
        }
    observed = newest if newest and newest.source == Source.OBSERVED else None
    drifted = observed is not None and observed.text != base_text
    live = observed if drifted else baseline
    return {
        "in_sync": not drifted,
        "baseline_version": baseline.number if baseline else None,
        "live_version": live.number if live else None,
        "why": f"edited outside the portal (v{observed.number})"
        if drifted and observed
        else "",
        "diff": text_diff(
            base_text,
            observed.text,
            before_label=base_label,
            after_label=f"v{observed.number} (observed)",
        )
        if drifted and observed
        else "",
    }


def nodeconfig_diff(
    cluster: Cluster, *, before: int | None, after: int | None, draft: str | None
) -> dict[str, Any]:
    """A unified diff between two versions, or from a version (or the live
    text, when ``before`` is None) to a draft.

    Raises:
        NotFound: No such version.
    """
    if before is None:
        mirror = nodeconfig_mirror(cluster)
        old, old_label = (
            mirror.text or "",
            f"live (resourceVersion {mirror.resource_version})",
        )
    else:
        version = nodeconfig_version_get(cluster, before)
        old, old_label = version.text, f"v{version.number}"
    if draft is not None:
        new, new_label = draft, "draft"
    elif after is not None:
        other = nodeconfig_version_get(cluster, after)
        new, new_label = other.text, f"v{other.number}"
    else:
        mirror = nodeconfig_mirror(cluster)
        new, new_label = mirror.text or "", "live"
    return {
        "from": old_label,
        "to": new_label,
        "diff": text_diff(old, new, before_label=old_label, after_label=new_label),
    }
