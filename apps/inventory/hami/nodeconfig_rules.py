"""Check a node config against what the portal knows of the cluster.

``nodeconfig`` checks that the file is what the plugin can read; this checks
that what it says makes sense on this cluster. It takes plain data (the
selectors build it from the database), so it stays pure like the format.

Errors are what the plugin would do silently and wrongly: an entry for a node
that does not exist (it matches nothing), a UUID that is not on that node (it
ignores nothing), an ``index`` on a node whose chips can sit two to a card
(it ignores both), a slot count the templates cannot fill, and a key the
node's plugin version does not read. Warnings are what the portal cannot
tell, or what the admin should know before publishing.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ._advice import slots_per_chip
from ._issues import IssueCollector, ValidationReport
from .catalog import ChipFamily, chip_family, max_vnpus_per_chip
from .deviceconfig import ChipTypeSpec
from .messages import N_, Message
from .nodeconfig import COUNT, FILTER, INDEX, MODE, NAME, UUID, NodeEntry

__all__ = [
    "FIRST_WITH_COUNT",
    "FIRST_WITH_FILTERS",
    "FIRST_WITH_NODE_CONFIG",
    "KnownChip",
    "KnownNode",
    "PluginVersion",
    "applied_keys",
    "check_against_cluster",
    "two_chip_card",
]

PluginVersion = tuple[int, int, int]
#: The first device plugin that takes ``--node_config_file`` (mode, slots).
FIRST_WITH_NODE_CONFIG: PluginVersion = (1, 3, 0)
#: The first that reads ``filterDevices``.
FIRST_WITH_FILTERS: PluginVersion = (1, 4, 0)
#: The first that applies ``vDeviceCount``: v1.3.0 parses it, but its slot
#: count is still memory over the first template (``VDeviceCount`` in
#: ``internal/manager/manager.go``; the node's value is honoured from v1.4.0).
FIRST_WITH_COUNT: PluginVersion = (1, 4, 0)
# Chip families that ship on cards holding two chips under one card id: the
# 310P3 on the Atlas 300I Duo, and (INFERRED from npu-smi's listing of Atlas
# A3 nodes, not seen on hardware) the 910C. One card id in
# filterDevices.index takes both. A 300I Pro holds one 310P3, but nothing the
# plugin registers tells the cards apart, so every 310P node counts as Duo.
_TWO_CHIP_CARDS: Mapping[ChipFamily, Message] = {
    ChipFamily.ASCEND_310P: N_("an Atlas 300I Duo card holds two 310P3 chips"),
    ChipFamily.ASCEND_910A3: N_("an Atlas A3 card holds two 910C chips"),
}


def applied_keys(version: PluginVersion | None) -> list[str]:
    """The keys of an entry a plugin of ``version`` applies ([] for none or unknown)."""
    if version is None or version < FIRST_WITH_NODE_CONFIG:
        return []
    keys = [MODE]
    if version >= FIRST_WITH_COUNT:
        keys.append(COUNT)
    if version >= FIRST_WITH_FILTERS:
        keys.append(FILTER)
    return keys


def two_chip_card(chip_name: str | None, common_word: str) -> bool:
    """Whether a card id of this chip type holds two chips (one index filters both)."""
    return chip_family(chip_name, common_word) in _TWO_CHIP_CARDS


@dataclass(frozen=True)
class KnownChip:
    """A chip as its node registered it.

    Attributes:
        uuid: The die UUID (the chip's identity).
        index: Its registered index: its position among the node's chips,
            renumbered by the plugin after a filter. Not the card id.
        common_word: Its chip type.
    """

    uuid: str
    index: int
    common_word: str


@dataclass(frozen=True)
class KnownNode:
    """A node of the cluster as the portal last saw it.

    Attributes:
        name: The Kubernetes node name.
        chips: Its registered chips.
        plugin_version: ``(major, minor, patch)`` of the device plugin on it;
            None when the portal does not know.
        hami_vnpu_core: The slicing mode the node reports now.
    """

    name: str
    chips: tuple[KnownChip, ...] = ()
    plugin_version: PluginVersion | None = None
    hami_vnpu_core: bool = False


def _v(version: PluginVersion) -> str:
    return "v" + ".".join(str(part) for part in version)


def _chip(chip: KnownChip) -> str:
    return f"#{chip.index} {chip.uuid}"


class _Rules(IssueCollector):
    def __init__(
        self,
        nodes: Iterable[KnownNode],
        chip_types: Mapping[str, ChipTypeSpec],
    ) -> None:
        super().__init__()
        self.nodes = {node.name: node for node in nodes}
        self.chip_types = chip_types
        self.owner = {c.uuid: n for n in self.nodes.values() for c in n.chips}

    def entry(self, entry: NodeEntry) -> None:
        node = self.nodes.get(entry.name)
        if node is None:
            close = difflib.get_close_matches(entry.name, list(self.nodes), n=1)
            self.error(
                f"{entry.path}.{NAME}",
                N_(
                    "no node %(node)s in this cluster (did you mean %(near)s?): the "
                    "entry matches nothing",
                    node=entry.name,
                    near=close[0],
                )
                if close
                else N_(
                    "no node %(node)s in this cluster: the entry matches nothing",
                    node=entry.name,
                ),
            )
            return
        if not self.version(entry, node):
            return
        self.mode(entry, node)
        if entry.v_device_count is not None:
            self.count(entry, node, entry.v_device_count)
        self.uuids(entry, node)
        self.indexes(entry, node)
        self.everything_filtered(entry, node)

    def version(self, entry: NodeEntry, node: KnownNode) -> bool:
        """Whether the rest is worth checking: False when the plugin reads nothing."""
        version = node.plugin_version
        filters = not entry.filter_devices.empty
        if version is None:
            self.warn(
                entry.path,
                N_(
                    "the device plugin version on %(node)s is unknown: v1.1 and "
                    "v1.2 read no node config, v1.3 applies neither vDeviceCount "
                    "nor filterDevices",
                    node=node.name,
                ),
            )
            return True
        if version < FIRST_WITH_NODE_CONFIG:
            self.error(
                entry.path,
                N_(
                    "the device plugin on %(node)s is %(version)s, which reads no "
                    "node config (from %(first)s): this entry does nothing",
                    node=node.name,
                    version=_v(version),
                    first=_v(FIRST_WITH_NODE_CONFIG),
                ),
            )
            return False
        if filters and version < FIRST_WITH_FILTERS:
            self.error(
                f"{entry.path}.{FILTER}",
                N_(
                    "the device plugin on %(node)s is %(version)s, which reads no "
                    "filterDevices (from %(first)s): these chips stay in use",
                    node=node.name,
                    version=_v(version),
                    first=_v(FIRST_WITH_FILTERS),
                ),
            )
        if entry.v_device_count and version < FIRST_WITH_COUNT:
            self.error(
                f"{entry.path}.{COUNT}",
                N_(
                    "the device plugin on %(node)s is %(version)s, which parses "
                    "vDeviceCount but does not apply it (from %(first)s): the slot "
                    "count stays the templates' default",
                    node=node.name,
                    version=_v(version),
                    first=_v(FIRST_WITH_COUNT),
                ),
            )
        if entry.hami_vnpu_core and version < FIRST_WITH_FILTERS:
            self.warn(
                f"{entry.path}.{MODE}",
                N_(
                    "device plugin %(version)s on %(node)s registers each chip's "
                    "aiCore, not devcore 100, in hami-core mode: a -core percent "
                    "above it never fits",
                    version=_v(version),
                    node=node.name,
                ),
            )
        return True

    def mode(self, entry: NodeEntry, node: KnownNode) -> None:
        if entry.hami_vnpu_core == node.hami_vnpu_core:
            return
        self.warn(
            f"{entry.path}.{MODE}",
            N_(
                "switches %(node)s from template to hami-core (soft) slicing when "
                "its plugin restarts: slices running there break, drain it first",
                node=node.name,
            )
            if entry.hami_vnpu_core
            else N_(
                "switches %(node)s from hami-core (soft) to template slicing when "
                "its plugin restarts: slices running there break, drain it first",
                node=node.name,
            ),
        )

    def count(self, entry: NodeEntry, node: KnownNode, count: int) -> None:
        """Slots per chip the node's templates can fill.

        A slot is one vNPU a chip can hold at once. HAMi and Volcano admit a
        slice while the chip has a free slot and enough memory, and the
        smallest template is the most slices a chip can hold: its
        ``memoryAllocatable // smallest template memory`` (the plugin's own
        default, 1 without templates). More slots than that can never all
        be used, yet kubelet advertises them (chips x count), so pods wait
        on room that is not there: an error. Above npu-smi's limit (8 vNPUs
        on a 310P chip, 16 on training chips) the extra vNPUs fail when
        their container starts: an error too. In hami-core mode slices are
        not templates, so only a warning says what template pods can fill.
        """
        path = f"{entry.path}.{COUNT}"
        words = sorted({chip.common_word for chip in node.chips})
        if not words:
            self.warn(
                path,
                N_(
                    "%(node)s registers no chips: the count is unchecked",
                    node=node.name,
                ),
            )
        for word in words:
            spec = self.chip_types.get(word)
            if spec is None:
                self.warn(
                    path,
                    N_(
                        "%(chip_type)s is not in the device config: the count is "
                        "unchecked",
                        chip_type=word,
                    ),
                )
                continue
            most = slots_per_chip(spec.memory_allocatable, spec.templates)
            limit = max_vnpus_per_chip(chip_family(spec.chip_name, word))
            if entry.hami_vnpu_core:
                if count > most:
                    self.warn(
                        path,
                        N_(
                            "%(count)d slots per %(chip_type)s chip: template slices "
                            "fill at most %(most)d (soft slices are not bounded by "
                            "templates)",
                            count=count,
                            chip_type=word,
                            most=most,
                        ),
                    )
                continue
            if count > most:
                self.error(
                    path,
                    N_(
                        "%(count)d slots per %(chip_type)s chip, but its templates "
                        "fill at most %(most)d (%(allocatable)d MB // the smallest "
                        "template): the extra slots are advertised and never usable",
                        count=count,
                        chip_type=word,
                        most=most,
                        allocatable=spec.memory_allocatable,
                    ),
                )
            elif limit is not None and count > limit:
                self.error(
                    path,
                    N_(
                        "%(count)d slots per %(chip_type)s chip: npu-smi creates at "
                        "most %(limit)d vNPUs on one chip, the extra slices fail when "
                        "they start",
                        count=count,
                        chip_type=word,
                        limit=limit,
                    ),
                )

    def uuids(self, entry: NodeEntry, node: KnownNode) -> None:
        here = {chip.uuid for chip in node.chips}
        for position, uuid in enumerate(entry.filter_devices.uuids):
            if uuid in here:
                continue
            path = f"{entry.path}.{FILTER}.{UUID}[{position}]"
            owner = self.owner.get(uuid)
            same = [u for u in here if u.lower() == uuid.lower()]
            if same:
                why = N_("the plugin compares exactly: write %(uuid)s", uuid=same[0])
            elif owner is not None:
                why = N_("it is a chip of %(node)s", node=owner.name)
            else:
                why = N_("no chip of this cluster has it")
            self.error(
                path,
                N_(
                    "%(uuid)s is not a chip of %(node)s: %(why)s",
                    uuid=uuid,
                    node=node.name,
                    why=why,
                ),
            )

    def indexes(self, entry: NodeEntry, node: KnownNode) -> None:
        """An index is a card id, which no registration carries.

        The plugin compares it with ``GetCardIDDeviceID``'s card id, not the
        registered index. On a node whose chips sit two to a card it ignores
        both chips of that card: an error naming the two chips it most
        likely takes (if the cards are numbered from 0 in the order the
        chips register). Elsewhere a card holds one chip: a warning naming
        the chip it most likely is, since the portal cannot confirm it.
        """
        ordered = sorted(node.chips, key=lambda chip: chip.index)
        families = {
            family: word
            for word in sorted({c.common_word for c in ordered})
            if (family := self.family(word)) is not None
        }
        two = next((f for f in families if f in _TWO_CHIP_CARDS), None)
        for position, card in enumerate(entry.filter_devices.indexes):
            path = f"{entry.path}.{FILTER}.{INDEX}[{position}]"
            if two is not None:
                pair = ordered[2 * card : 2 * card + 2]
                likely = (
                    N_(
                        "most likely chips %(first)s and %(second)s",
                        first=_chip(pair[0]),
                        second=_chip(pair[1]),
                    )
                    if len(pair) == 2
                    else N_("most likely chips %(first)s", first=_chip(pair[0]))
                    if pair
                    else N_("no chip the portal can name")
                )
                self.error(
                    path,
                    N_(
                        "index %(card)d is a card id and %(card_kind)s: it ignores "
                        "every chip of card %(card)d on %(node)s (%(likely)s, if the "
                        "cards are numbered from 0); name chips by uuid",
                        card=card,
                        card_kind=_TWO_CHIP_CARDS[two],
                        node=node.name,
                        likely=likely,
                    ),
                )
                continue
            chip = ordered[card] if card < len(ordered) else None
            likely = (
                N_("most likely chip %(chip)s", chip=_chip(chip))
                if chip
                else N_("no chip it sees")
            )
            self.warn(
                path,
                N_(
                    "index %(card)d is a card id, which the portal cannot see "
                    "(%(likely)s); prefer uuid: registered indexes renumber after "
                    "a filter",
                    card=card,
                    likely=likely,
                ),
            )

    def family(self, common_word: str) -> ChipFamily | None:
        spec = self.chip_types.get(common_word)
        return chip_family(spec.chip_name if spec else None, common_word)

    def everything_filtered(self, entry: NodeEntry, node: KnownNode) -> None:
        uuids = set(entry.filter_devices.uuids)
        if node.chips and all(chip.uuid in uuids for chip in node.chips):
            self.warn(
                f"{entry.path}.{FILTER}",
                N_(
                    "ignores every chip of %(node)s: it takes no more vNPUs",
                    node=node.name,
                ),
            )


def check_against_cluster(
    entries: Sequence[NodeEntry],
    nodes: Iterable[KnownNode],
    chip_types: Mapping[str, ChipTypeSpec],
) -> ValidationReport:
    """Check typed entries against the cluster's nodes, chips, plugins and templates.

    Args:
        entries: The entries ``parse_node_config`` typed (a second entry for a
            node, already an error there, is not checked again).
        nodes: Every node the portal knows in the cluster.
        chip_types: The device config's chip types by commonWord.

    Returns:
        Errors and warnings, each with the path of the value it is about.
    """
    rules = _Rules(nodes, chip_types)
    seen: set[str] = set()
    for entry in entries:
        if entry.name not in seen:
            seen.add(entry.name)
            rules.entry(entry)
    return rules.report()
