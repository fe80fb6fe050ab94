"""What a proposed node config would do, node by node, before anyone publishes (pure).

Given the inventory as plain data (nodes with their plugin version and current
entry, chips with their UUIDs and usage, the slices running on them, the
portal's pending requests, the chip types) and the proposed entries
(``apps.inventory.hami.nodeconfig``), it answers per node:

- what changes, and what the node's plugin version ignores (v1.1/v1.2 read
  no node config; v1.3 applies only ``hami-vnpu-core``; v1.4 applies
  ``vDeviceCount`` and ``filterDevices`` too);
- which running slices each change strands: a chip filtered while slices run
  on it (they keep running, but the chip leaves the registration), a slot
  count below the slices a chip holds, a mode switch under running slices
  (they break: **drain first**);
- its room per chip type before and after: chips, slots, memory and AICore
  (totals and free), and the largest template that still fits;

and over the cluster, which pending requests the change unblocks (they fit
on no chip now and on some chip after) or blocks (the reverse). A request
fits a chip as the allocator decides: HAMi's template rule
(``hami.template_rule.fit_template``, the allocator's own) gives its shape,
and one more slice of it must fit in slots, memory, AICore and AICPU
(``apps.inventory.room.slices_that_fit``, the same four dimensions); a whole
card needs an empty chip. Each request is judged alone, not against the
others. A chip of a hami-core node counts for no portal request: the
portal's pods carry no ``huawei.com/vnpu-mode`` annotation, and such a pod
may stay Pending there.

Nothing here takes effect until the node's plugin pod restarts, and nothing
at all while the plugin does not read the file (``health``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from apps.inventory.hami.deviceconfig import ChipTypeSpec
from apps.inventory.hami.i18n import _, ngettext
from apps.inventory.hami.nodeconfig import NodeEntry
from apps.inventory.hami.nodeconfig_rules import (
    FIRST_WITH_FILTERS,
    PluginVersion,
    applied_keys,
    two_chip_card,
)
from apps.inventory.hami.template_rule import FitKind, fit_template
from apps.inventory.hami.validation import slots_per_chip
from apps.inventory.room import ChipLoad, slices_that_fit, type_room

#: What a chip of a hami-core node registers as its AICore from v1.4.0.
CORE_PERCENT = 100
MODES = {True: "hami-core", False: "template"}


@dataclass(frozen=True)
class ChipFact:
    """A registered chip and what it holds.

    Attributes:
        uuid: Its die UUID (its identity).
        index: Its registered index (renumbered after a filter).
        node: Its node's name.
        load: Totals and usage (``eligible``: healthy, not cordoned, node
            ready and schedulable).
    """

    uuid: str
    index: int
    node: str
    load: ChipLoad


@dataclass(frozen=True)
class SliceFact:
    """A slice running on a chip."""

    namespace: str
    pod: str
    chip_uuid: str
    template: str
    memory: int


@dataclass(frozen=True)
class DemandFact:
    """A pending request: what it asks for (the shape comes from the template rule)."""

    id: str
    label: str
    common_word: str
    memory: int | None
    template: str | None = None


@dataclass(frozen=True)
class NodeFact:
    """A node: its mode now, its plugin version, its current entry (None: none or unknown)."""

    name: str
    hami_vnpu_core: bool
    plugin_version: PluginVersion | None
    entry: NodeEntry | None = None


@dataclass(frozen=True)
class WhatIfInput:
    """Everything the what-if reads, as plain data."""

    nodes: tuple[NodeFact, ...]
    chips: tuple[ChipFact, ...]
    slices: tuple[SliceFact, ...] = ()
    demands: tuple[DemandFact, ...] = ()
    chip_types: Mapping[str, ChipTypeSpec] = field(default_factory=dict)


@dataclass
class _NodeAfter:
    """One node's answer while it is built."""

    name: str
    changes: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    stranded: list[dict[str, Any]] = field(default_factory=list)
    drain_first: bool = False
    mode_before: str = ""
    mode_after: str = ""


def _likely_by_index(chips: Sequence[ChipFact], card: int, two: bool) -> list[ChipFact]:
    """The chips a card id most likely names (cards numbered from 0 in registration order)."""
    ordered = sorted(chips, key=lambda c: c.index)
    if two:
        return ordered[2 * card : 2 * card + 2]
    return ordered[card : card + 1]


def _filtered(
    entry: NodeEntry | None,
    chips: Sequence[ChipFact],
    specs: Mapping[str, ChipTypeSpec],
) -> dict[str, str]:
    """The chips an entry filters, by UUID, each with how it is named."""
    if entry is None:
        return {}
    found = {
        u: _("%(key)s names %(uuid)s") % {"key": "filterDevices.uuid", "uuid": u}
        for u in entry.filter_devices.uuids
    }
    for card in entry.filter_devices.indexes:
        words = {c.load.common_word for c in chips}
        two = any(
            two_chip_card(specs[w].chip_name if w in specs else None, w) for w in words
        )
        for chip in _likely_by_index(chips, card, two):
            found.setdefault(
                chip.uuid,
                _("%(key)s %(card)d is a card id, most likely chip #%(index)d %(uuid)s")
                % {
                    "key": "filterDevices.index",
                    "card": card,
                    "index": chip.index,
                    "uuid": chip.uuid,
                },
            )
    return found


def _changes(
    node: NodeFact,
    proposed: NodeEntry | None,
    chips: Sequence[ChipFact],
    specs: Mapping[str, ChipTypeSpec],
    out: _NodeAfter,
) -> tuple[bool, int | None, bool, dict[str, str]]:
    """What the proposal changes on the node and what its plugin applies.

    Returns:
        (mode after, slot count after or None when unchanged, whether the
        count changes, the chips newly filtered by UUID with why).
    """
    keys = applied_keys(node.plugin_version or FIRST_WITH_FILTERS)
    if node.plugin_version is None:
        out.ignored.append(
            _(
                "the plugin version is unknown: every key is assumed applied (%(version)s)"
            )
            % {"version": "v1.4.0"}
        )
    current = node.entry
    mode = proposed.hami_vnpu_core if proposed else node.hami_vnpu_core
    if proposed is None and current is not None:
        out.changes.append(
            _(
                "entry removed: the node returns to the global %(key)s, the default "
                "slot count and no filters"
            )
            % {"key": "hamiVnpuCore"}
        )
    plugin = {"plugin": _version(node)}
    if mode != node.hami_vnpu_core:
        said = _("mode %(before)s -> %(after)s") % {
            "before": MODES[node.hami_vnpu_core],
            "after": MODES[mode],
        }
        if "hami-vnpu-core" in keys:
            out.changes.append(said)
        else:
            out.ignored.append(
                _("%(change)s: %(plugin)s reads no node config")
                % {"change": said, **plugin}
            )
            mode = node.hami_vnpu_core
    count_now = current.v_device_count if current else None
    count = proposed.v_device_count if proposed else None
    count_changes = count != count_now
    if count_changes:
        default = _("default")
        said = f"vDeviceCount {count_now or default} -> {count or default}"
        if "vDeviceCount" in keys:
            out.changes.append(said)
        else:
            out.ignored.append(
                _("%(change)s: %(plugin)s does not apply it")
                % {"change": said, **plugin}
            )
            count_changes = False
    added = _filters_changed(node, proposed, chips, specs, keys, out)
    return mode, count, count_changes, added


def _filters_changed(
    node: NodeFact,
    proposed: NodeEntry | None,
    chips: Sequence[ChipFact],
    specs: Mapping[str, ChipTypeSpec],
    keys: list[str],
    out: _NodeAfter,
) -> dict[str, str]:
    """The chips newly filtered by UUID (with why) once the plugin applies them."""
    current = node.entry
    before = _filtered(current, chips, specs)
    after = _filtered(proposed, chips, specs)
    added = {u: why for u, why in after.items() if u not in before}
    returned = sorted(
        set(current.filter_devices.uuids if current else ())
        - set(proposed.filter_devices.uuids if proposed else ())
    )
    if added or returned:
        said = _filter_change(len(added), len(returned))
        if "filterDevices" in keys:
            out.changes.append(said)
            out.changes.extend(
                _(
                    "chip %(uuid)s returns when the plugin restarts (not registered "
                    "now: its room is not counted)"
                )
                % {"uuid": u}
                for u in returned
            )
        else:
            out.ignored.append(
                _("%(change)s: %(plugin)s does not apply %(key)s")
                % {"change": said, "plugin": _version(node), "key": "filterDevices"}
            )
            added = {}
    return added


def _filter_change(added: int, returned: int) -> str:
    said = ngettext("%(count)d chip filtered", "%(count)d chips filtered", added) % {
        "count": added
    }
    if returned:
        said += _(", %(count)d returned") % {"count": returned}
    return said


def _version(node: NodeFact) -> str:
    version = node.plugin_version
    if version is None:
        return _("a plugin of unknown version")
    return _("plugin %(version)s") % {"version": "v" + ".".join(map(str, version))}


def _chip_after(
    chip: ChipFact,
    mode: bool,
    count: int | None,
    count_changes: bool,
    node: NodeFact,
    specs: Mapping[str, ChipTypeSpec],
) -> ChipFact:
    """The chip as its plugin registers it after a restart with the new entry."""
    load = chip.load
    spec = specs.get(load.common_word)
    slots = load.slots
    if count_changes:
        default = (
            slots_per_chip(spec.memory_allocatable, spec.templates) if spec else slots
        )
        slots = count or default
    aicore = load.aicore
    if mode != node.hami_vnpu_core:
        new_core = (node.plugin_version or FIRST_WITH_FILTERS) >= FIRST_WITH_FILTERS
        if mode and new_core:
            aicore = CORE_PERCENT
        elif spec is not None and spec.ai_core:
            aicore = spec.ai_core
    return replace(chip, load=replace(load, slots=slots, aicore=aicore))


def _strand(
    out: _NodeAfter, slices: Iterable[SliceFact], chip: ChipFact, reason: str
) -> None:
    for slice_ in slices:
        key = (slice_.namespace, slice_.pod, slice_.chip_uuid)
        row = next(
            (
                r
                for r in out.stranded
                if (r["namespace"], r["pod"], r["chip_uuid"]) == key
            ),
            None,
        )
        if row is None:
            row = {
                "namespace": slice_.namespace,
                "pod": slice_.pod,
                "chip_uuid": slice_.chip_uuid,
                "chip_index": chip.index,
                "template": slice_.template,
                "memory": slice_.memory,
                "reasons": [],
            }
            out.stranded.append(row)
        row["reasons"].append(reason)


def _node_after(
    node: NodeFact,
    proposed: NodeEntry | None,
    chips: Sequence[ChipFact],
    slices: Mapping[str, Sequence[SliceFact]],
    specs: Mapping[str, ChipTypeSpec],
) -> tuple[_NodeAfter, list[ChipFact]]:
    """One node's changes, stranded slices and chips after its plugin restarts."""
    out = _NodeAfter(name=node.name, mode_before=MODES[node.hami_vnpu_core])
    mode, count, count_changes, filtered = _changes(node, proposed, chips, specs, out)
    out.mode_after = MODES[mode]
    after: list[ChipFact] = []
    for chip in chips:
        here = slices.get(chip.uuid, ())
        if chip.uuid in filtered:
            _strand(
                out,
                here,
                chip,
                _(
                    "%(filter)s: the chip leaves the registration while the slice "
                    "runs on it"
                )
                % {"filter": filtered[chip.uuid]},
            )
            continue
        new = _chip_after(chip, mode, count, count_changes, node, specs)
        if new.load.slots < chip.load.slots_used:
            _strand(
                out,
                here,
                chip,
                ngettext(
                    "%(count)d slice runs on chip #%(index)d, which would have "
                    "%(slots)d slots",
                    "%(count)d slices run on chip #%(index)d, which would have "
                    "%(slots)d slots",
                    chip.load.slots_used,
                )
                % {
                    "count": chip.load.slots_used,
                    "index": chip.index,
                    "slots": new.load.slots,
                },
            )
        if mode != node.hami_vnpu_core and here:
            out.drain_first = True
            _strand(
                out,
                here,
                chip,
                _(
                    "the node switches from %(before)s to %(after)s slicing under "
                    "it: drain first"
                )
                % {"before": out.mode_before, "after": out.mode_after},
            )
        after.append(new)
    return out, after


def _room(
    chips: Sequence[ChipFact], specs: Mapping[str, ChipTypeSpec]
) -> dict[str, dict[str, Any]]:
    """Per chip type: chips, and over the eligible ones slots, memory and AICore
    (total and free), and the largest template one more slice of fits."""
    rooms: dict[str, dict[str, Any]] = {}
    for word in sorted({c.load.common_word for c in chips}):
        loads = [c.load for c in chips if c.load.common_word == word]
        ok = [load for load in loads if load.eligible]
        spec = specs.get(word)
        largest = type_room(word, spec.templates if spec else (), loads)
        rooms[word] = {
            "chips": len(loads),
            "eligible_chips": len(ok),
            "slots": sum(x.slots for x in ok),
            "slots_free": sum(max(0, x.slots - x.slots_used) for x in ok),
            "memory": sum(x.memory for x in ok),
            "memory_free": sum(max(0, x.memory - x.memory_used) for x in ok),
            "aicore": sum(x.aicore for x in ok),
            "aicore_free": sum(max(0, x.aicore - x.aicore_used) for x in ok),
            "largest_template": largest.largest_template,
        }
    return rooms


def _room_rows(
    before: Sequence[ChipFact],
    after: Sequence[ChipFact],
    specs: Mapping[str, ChipTypeSpec],
) -> list[dict[str, Any]]:
    old, new = _room(before, specs), _room(after, specs)
    empty = dict.fromkeys(next(iter(old.values()), {}), 0)
    return [
        {
            "common_word": word,
            "before": old.get(word, empty),
            "after": new.get(word, {**empty, "largest_template": None}),
        }
        for word in sorted(old.keys() | new.keys())
    ]


def _demand_fit(
    demand: DemandFact, specs: Mapping[str, ChipTypeSpec]
) -> tuple[Any, int] | None:
    """(the template spec, or None for a whole card; the MB it books), or None when
    the request can never be served (unknown chip type or template, too big)."""
    spec = specs.get(demand.common_word)
    if spec is None:
        return None
    memory = demand.memory
    if demand.template:
        named = next((t for t in spec.templates if t.name == demand.template), None)
        if named is None:
            return None
        memory = named.memory
    fit = fit_template(spec, memory)
    if fit.kind is FitKind.INVALID:
        return None
    if fit.template is not None:
        return next(t for t in spec.templates if t.name == fit.template), fit.memory
    return None if fit.memory <= 0 else (None, fit.memory)


def _fits(load: ChipLoad, template: Any, memory: int) -> bool:
    """One more slice of the shape fits the chip (a whole card: an empty chip)."""
    if not load.eligible:
        return False
    if template is not None:
        return slices_that_fit(load, template) > 0
    used = (load.slots_used, load.memory_used, load.aicore_used, load.aicpu_used)
    return not any(used) and load.slots >= 1 and load.memory >= memory


def _served_by(
    chips: Iterable[ChipFact],
    demand: DemandFact,
    shape: tuple[Any, int],
    hami_core: set[str],
) -> list[str]:
    """The nodes on which the request fits a chip (hami-core nodes take no portal pod)."""
    return sorted(
        {
            c.node
            for c in chips
            if c.load.common_word == demand.common_word
            and c.node not in hami_core
            and _fits(c.load, *shape)
        }
    )


def _node_row(out: _NodeAfter, rooms: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "name": out.name,
        "changed": bool(out.changes),
        "changes": out.changes,
        "ignored": out.ignored,
        "mode_before": out.mode_before,
        "mode_after": out.mode_after,
        "drain_first": out.drain_first,
        "stranded_slices": out.stranded,
        "room": rooms,
    }


def _requests(
    data: WhatIfInput,
    before: Sequence[ChipFact],
    after: Sequence[ChipFact],
    core: tuple[set[str], set[str]],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(unblocked, blocked): requests that fit on no chip before and some after, and
    the reverse, each with the nodes it fits on."""
    unblocked, blocked = [], []
    for demand in data.demands:
        shape = _demand_fit(demand, data.chip_types)
        if shape is None:
            continue  # never served, whatever the node config says
        was = _served_by(before, demand, shape, core[0])
        will = _served_by(after, demand, shape, core[1])
        row = {
            "id": demand.id,
            "label": demand.label,
            "common_word": demand.common_word,
            "template": shape[0].name if shape[0] is not None else None,
            "memory": shape[1],
            "nodes_before": was,
            "nodes_after": will,
        }
        if will and not was:
            unblocked.append(row)
        elif was and not will:
            blocked.append(row)
    return unblocked, blocked


def node_config_what_if(
    data: WhatIfInput, proposed: Sequence[NodeEntry]
) -> dict[str, Any]:
    """What ``proposed`` would do on each node once its plugin pod restarts.

    Args:
        data: The inventory, as plain data.
        proposed: The proposed entries (a second entry for a node is ignored,
            as the plugin ignores it).

    Returns:
        ``nodes`` (per node: ``changed``, ``changes``, ``ignored`` (what
        its plugin version does not apply), ``mode_before``/``mode_after``,
        ``drain_first``, ``stranded_slices`` (each with its ``reasons``) and
        ``room`` per chip type ``before`` and ``after``), ``unblocked`` and
        ``blocked`` requests (with the nodes each fits on before and after),
        ``drain_first`` (the nodes whose mode switch running slices block)
        and ``unknown_nodes`` (entries naming no node of the cluster).
    """
    wanted: dict[str, NodeEntry] = {}
    for entry in proposed:
        wanted.setdefault(entry.name, entry)
    chips: dict[str, list[ChipFact]] = {}
    for chip in data.chips:
        chips.setdefault(chip.node, []).append(chip)
    slices: dict[str, list[SliceFact]] = {}
    for slice_ in data.slices:
        slices.setdefault(slice_.chip_uuid, []).append(slice_)
    core_before = {n.name for n in data.nodes if n.hami_vnpu_core}
    core_after = set(core_before)
    after_all: list[ChipFact] = []
    rows = []
    for node in sorted(data.nodes, key=lambda n: n.name):
        mine = chips.get(node.name, [])
        out, after = _node_after(
            node, wanted.get(node.name), mine, slices, data.chip_types
        )
        (core_after.add if out.mode_after == MODES[True] else core_after.discard)(
            node.name
        )
        after_all.extend(after)
        rows.append(_node_row(out, _room_rows(mine, after, data.chip_types)))
    unblocked, blocked = _requests(
        data, data.chips, after_all, (core_before, core_after)
    )
    known = {n.name for n in data.nodes}
    return {
        "nodes": rows,
        "unblocked": unblocked,
        "blocked": blocked,
        "drain_first": [r["name"] for r in rows if r["drain_first"]],
        "unknown_nodes": sorted(set(wanted) - known),
    }
