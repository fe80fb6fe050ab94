"""What the node config's what-if reads from the database, and the what-if of a draft.

The pure what-if is ``apps.inventory.nodeconfig.whatif``; this gathers its
plain data: the nodes with their current entry (from sync's mirror of
``hami-device-node-config``, when it has one) and the device plugin version
(the DaemonSet's image), the chips with their usage, the slices on them, the
chip types the scheduler places by, and the portal's pending requests. Those
are scheduling's: it registers how to list them (``pending_demands_register``,
in its ``AppConfig.ready``), since the inventory never imports scheduling.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any

from apps.common.exceptions import ValidationFailed
from apps.inventory.deviceconfig.in_effect import chip_types_in_effect
from apps.inventory.deviceconfig.versions import cluster_components, first_of
from apps.inventory.hami.nodeconfig import (
    NODES,
    NodeConfigError,
    NodeConfigRead,
    NodeEntry,
    check_structure,
    parse_node_config,
)
from apps.inventory.hami.nodeconfig_rules import check_against_cluster
from apps.inventory.models import Chip, Cluster, Node, Slice
from apps.inventory.nodeconfig.health import mirrored_node_config, node_config_readable
from apps.inventory.nodeconfig.selectors import nodeconfig_facts
from apps.inventory.nodeconfig.whatif import (
    ChipFact,
    DemandFact,
    NodeFact,
    SliceFact,
    WhatIfInput,
    node_config_what_if,
)
from apps.inventory.room import ChipLoad

PendingDemands = Callable[[Cluster], Iterable[DemandFact]]
_pending_demands: PendingDemands | None = None


def pending_demands_register(source: PendingDemands) -> None:
    """Say how to list a cluster's pending requests (scheduling does, at start)."""
    global _pending_demands
    _pending_demands = source


def _current_entries(cluster: Cluster) -> dict[str, NodeEntry]:
    """The entries of the mirrored node config ({} when unseen or unreadable)."""
    _, text = mirrored_node_config(cluster)
    if text is None:
        return {}
    try:
        read = parse_node_config(text)
    except NodeConfigError:
        return {}
    entries: dict[str, NodeEntry] = {}
    for entry in read.entries:
        entries.setdefault(entry.name, entry)
    return entries


def _chips(cluster: Cluster) -> tuple[ChipFact, ...]:
    rows = (
        Chip.objects.filter(cluster=cluster)
        .select_related("node")
        .order_by("node__name", "index")
    )
    return tuple(
        ChipFact(
            uuid=c.uuid,
            index=c.index,
            node=c.node.name,
            load=ChipLoad(
                common_word=c.common_word,
                memory=c.memory,
                memory_used=c.memory_used,
                slots=c.slots,
                slots_used=c.slots_used,
                aicore=c.aicore,
                aicore_used=c.aicore_used,
                aicpu=c.aicpu,
                aicpu_used=c.aicpu_used,
                # What the allocator counts: healthy, uncordoned, node Ready and schedulable.
                eligible=c.healthy
                and not c.cordoned
                and c.node.ready
                and not c.node.unschedulable,
            ),
        )
        for c in rows
    )


def whatif_input(cluster: Cluster) -> WhatIfInput:
    """The inventory of ``cluster`` as the what-if reads it."""
    plugin = first_of(cluster_components(cluster), "device_plugin")
    version = plugin.version if plugin is not None else None
    entries = _current_entries(cluster)
    nodes = tuple(
        NodeFact(name, core, version, entries.get(name))
        for name, core in Node.objects.filter(cluster=cluster)
        .order_by("name")
        .values_list("name", "hami_vnpu_core")
    )
    slices = tuple(
        SliceFact(ns, pod, uuid, template, memory)
        for ns, pod, uuid, template, memory in Slice.objects.filter(
            cluster=cluster, chip__isnull=False
        )
        .order_by("namespace", "pod_name", "container_index")
        .values_list("namespace", "pod_name", "chip_uuid", "template", "memory")
    )
    demands = tuple(_pending_demands(cluster)) if _pending_demands else ()
    return WhatIfInput(
        nodes=nodes,
        chips=_chips(cluster),
        slices=slices,
        demands=demands,
        chip_types={s.common_word: s for s in chip_types_in_effect(cluster)},
    )


def nodeconfig_what_if(cluster: Cluster, read: NodeConfigRead) -> dict[str, Any]:
    """The what-if of a draft node config already read, with its checks.

    Returns:
        ``cluster``, ``errors`` and ``warnings`` (the draft against the
        cluster, each with its ``field`` path), ``readable`` and
        ``not_read_because`` (the device plugin does not read the file:
        nothing changes until that is fixed, see the health), then the
        what-if's ``nodes``, ``unblocked``, ``blocked``, ``drain_first``
        and ``unknown_nodes``.
    """
    facts = nodeconfig_facts(cluster)
    report = check_against_cluster(read.entries, facts.nodes, facts.chip_types)
    problems = node_config_readable(cluster)
    return {
        "cluster": cluster.name,
        "errors": [dataclasses.asdict(i) for i in report.errors],
        "warnings": [
            dataclasses.asdict(i) for i in read.report.warnings + report.warnings
        ],
        "readable": not problems,
        "not_read_because": [p["message"] for p in problems],
        **node_config_what_if(whatif_input(cluster), read.entries),
    }


def nodeconfig_draft_read(
    *, text: str | None = None, nodes: list[Any] | None = None
) -> NodeConfigRead:
    """Read a draft: a whole file (``text``) or its entries (``nodes``).

    Raises:
        ValidationFailed: The text is not YAML (field ``text``, with its
            line), or the draft breaks the format: each error under its
            path, prefixed by ``text`` for a file (``nodes[0].vDeviceCount``
            is already the field of structured entries).
    """
    if text is not None:
        try:
            read = parse_node_config(text)
        except NodeConfigError as exc:
            where = f"line {exc.line}: " if exc.line else ""
            raise ValidationFailed(
                f"text: {where}{exc.message}", detail={"text": [where + exc.message]}
            ) from exc
    else:
        read = check_structure({NODES: nodes or []})
    if read.report.errors:
        detail: dict[str, list[str]] = {}
        for issue in read.report.errors:
            if text is not None:
                detail.setdefault("text", []).append(f"{issue.field}: {issue.message}")
            else:
                detail.setdefault(issue.field, []).append(issue.message)
        first = read.report.errors[0]
        raise ValidationFailed(f"{first.field}: {first.message}", detail=detail)
    return read
