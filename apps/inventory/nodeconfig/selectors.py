"""Reads for the per-node config: what the portal knows of a cluster, and the checks."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Q

from apps.inventory.deviceconfig.specs import chip_type_specs
from apps.inventory.deviceconfig.versions import cluster_components, first_of
from apps.inventory.hami.deviceconfig import ChipTypeSpec
from apps.inventory.hami.nodeconfig import (
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
from apps.inventory.models import Chip, Cluster, Node


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
