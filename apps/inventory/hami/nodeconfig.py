"""Read, check and write the device plugin's per-node config (``hami-device-node-config``).

The ConfigMap's key ``node-config.yaml`` holds ``nodes: [{name, hami-vnpu-core,
vDeviceCount, filterDevices: {uuid, index}}]`` (docs/node-config.md). The Ascend
device plugin reads it with ``k8s.io/apimachinery/pkg/util/yaml``: YAML 1.1
scalars as Go's yaml.v2 types them, converted to JSON, then decoded into Go
structs by their JSON tags. That reader is lenient where it hurts:

- an unknown key (``filterDevice``) is dropped without a word;
- a value of the wrong type fails the whole file, which the plugin logs and
  then runs on defaults: every override and every filter on that node is off;
- an entry without ``hami-vnpu-core`` is read as ``false`` (a Go ``bool``),
  so it turns template slicing on even where the global ``hamiVnpuCore`` is
  true (``IsHamiVnpuCore`` returns the entry's value whenever there is one);
- only the first entry naming a node counts.

So this module checks structure strictly and collects every problem with its
path (``nodes[2].filterDevices.uuid[0]``), as ``validation`` does for the
device config. What the portal knows about the cluster (nodes, chips, plugin
versions, templates) is checked by ``nodeconfig_rules``.

The canonical text is JSON: JSON is YAML, so the plugin reads it as it is, and
quoting every string leaves no YAML 1.1 trap (a node named ``no`` or ``0x1F``).
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ._issues import IssueCollector, ValidationReport, describe
from ._yaml import YamlLimitError, YamlSyntaxError, load, new_yaml, to_plain
from .messages import N_

__all__ = [
    "ENTRY_KEYS",
    "FILTER_KEYS",
    "NODE_CONFIG_KEY",
    "FilterDevices",
    "NodeConfigError",
    "NodeConfigLimitError",
    "NodeConfigRead",
    "NodeEntry",
    "parse_node_config",
    "read_node_config",
    "render_node_config",
]

#: The ConfigMap's data key the plugin's manifest mounts.
NODE_CONFIG_KEY = "node-config.yaml"
NODES = "nodes"
NAME = "name"
MODE = "hami-vnpu-core"
COUNT = "vDeviceCount"
FILTER = "filterDevices"
UUID = "uuid"
INDEX = "index"
#: Keys of an entry, in the order the canonical text writes them.
ENTRY_KEYS: tuple[str, ...] = (NAME, MODE, COUNT, FILTER)
#: Keys of ``filterDevices``.
FILTER_KEYS: tuple[str, ...] = (UUID, INDEX)
#: ``filterDevices.index`` is a Go ``[]int32``; vDeviceCount ends in an int32
#: (the registration's ``count``).
MAX_INT32 = 2**31 - 1
# A Kubernetes node name is a DNS subdomain: no other name ever matches one.
_NODE_NAME = re.compile(
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
)
_MAX_NODE_NAME = 253


class NodeConfigError(ValueError):
    """The text cannot be read at all: not YAML, or beyond the reader's limits.

    Attributes:
        line: 1-based line of the problem, when known.
    """

    def __init__(self, message: str, *, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


class NodeConfigLimitError(NodeConfigError):
    """The text is beyond the reader's limits (too large, nested too deep)."""


@dataclass(frozen=True)
class FilterDevices:
    """Chips the plugin (v1.4.0+) ignores on a node.

    Attributes:
        uuids: Die UUIDs, compared exactly with what the plugin registers.
        indexes: Card ids (npu-smi's NPU ID, ``GetCardIDDeviceID``), not the
            registered ``index``: on a two-chip card one id ignores both chips.
    """

    uuids: tuple[str, ...] = ()
    indexes: tuple[int, ...] = ()

    @property
    def empty(self) -> bool:
        """True when it ignores nothing."""
        return not self.uuids and not self.indexes


@dataclass(frozen=True)
class NodeEntry:
    """One entry of ``nodes``: the overrides for one Kubernetes node.

    Attributes:
        name: The node's name (``--node_name``, ``$NODE_NAME``).
        hami_vnpu_core: The node's slicing mode: True for hami-core (soft)
            slicing, False for templates. Absent in the file reads as False.
        v_device_count: Slots per chip; None (or 0 in the file) keeps the
            plugin's ``memoryAllocatable // smallest template``.
        filter_devices: Chips to ignore.
        position: Where the entry stands in ``nodes`` (for paths; not
            compared).
    """

    name: str
    hami_vnpu_core: bool = False
    v_device_count: int | None = None
    filter_devices: FilterDevices = field(default_factory=FilterDevices)
    position: int = field(default=0, compare=False)

    @property
    def path(self) -> str:
        """``nodes[i]``."""
        return f"{NODES}[{self.position}]"


@dataclass(frozen=True)
class NodeConfigRead:
    """What a node config holds, and every structural problem of it.

    Attributes:
        entries: The entries that could be typed, in file order: those with a
            usable name. A value with an error is left at its default (and
            a list with a bad item is left empty, a repeated item kept once),
            so the cluster checks see only what is certain; ``report`` says
            what was wrong.
        report: The structural errors and warnings.
    """

    entries: tuple[NodeEntry, ...]
    report: ValidationReport

    @property
    def ok(self) -> bool:
        """True when the file has no structural error."""
        return self.report.ok


# --- reading -------------------------------------------------------------------


def read_node_config(text: str) -> Any:
    """Load the text as the plugin does (YAML 1.1, JSON being YAML) into plain values.

    A whole ConfigMap (``kubectl get configmap -o yaml`` or ``-o json``) is
    accepted too: its ``data["node-config.yaml"]`` is read.

    Args:
        text: The ``node-config.yaml`` value, or a ConfigMap holding it.

    Returns:
        dicts, lists and scalars, or None for an empty text.

    Raises:
        NodeConfigError: Not one YAML document, beyond the reader's limits,
            or a ConfigMap without a ``node-config.yaml`` string.
    """
    data = _load(text)
    if isinstance(data, dict) and data.get("kind") == "ConfigMap":
        inner = (data.get("data") or {}).get(NODE_CONFIG_KEY)
        if not isinstance(inner, str):
            raise NodeConfigError(
                N_("the ConfigMap has no data key %(key)s", key=NODE_CONFIG_KEY)
            )
        data = _load(inner)
    return data


def _load(text: str) -> Any:
    try:
        return to_plain(load(new_yaml(text), text))
    except YamlLimitError as exc:
        raise NodeConfigLimitError(exc.message, line=exc.line) from exc
    except YamlSyntaxError as exc:
        raise NodeConfigError(exc.message, line=exc.line) from exc


def parse_node_config(text: str) -> NodeConfigRead:
    """Read a node config and check its structure.

    Args:
        text: The ``node-config.yaml`` value (or a ConfigMap holding it).

    Returns:
        The typed entries and the structural report.

    Raises:
        NodeConfigError: The text is not YAML at all (nothing to check).
    """
    return check_structure(read_node_config(text))


def check_structure(data: Any) -> NodeConfigRead:
    """Check loaded data against the plugin's format, collecting every problem.

    Errors: the document is not a mapping; an unknown key (with a "did you
    mean" for a near miss); a value of the wrong type or out of range; an
    empty or impossible node name; a node named twice; a UUID or index listed
    twice. Warnings: an entry without ``hami-vnpu-core`` (read as false); a
    key written in another case (Go matches JSON keys ignoring case, so the
    plugin reads it, but the portal writes the documented spelling);
    ``vDeviceCount: 0`` (the default, written out).

    Args:
        data: What :func:`read_node_config` returned.

    Returns:
        The typed entries and the report.
    """
    checker = _Checker()
    entries = checker.document(data)
    return NodeConfigRead(entries=tuple(entries), report=checker.report())


def _squash(key: str) -> str:
    return key.lower().replace("-", "").replace("_", "")


def _suggest(key: str, known: Sequence[str]) -> str | None:
    """The known key ``key`` is a near miss of, if any."""
    for candidate in known:
        if _squash(candidate) == _squash(key):
            return candidate
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
    return close[0] if close else None


class _Checker(IssueCollector):
    """Collects the problems of one document."""

    def keys(
        self, raw: Mapping[Any, Any], path: str, known: Sequence[str]
    ) -> dict[str, Any]:
        """The values of the known keys; unknown ones are errors.

        Go's encoding/json matches a JSON key to a field ignoring case, and
        the last of two spellings wins: a key in another case is read (a
        warning), two spellings of one key are an error.
        """
        found: dict[str, Any] = {}
        spelt: dict[str, str] = {}
        for key, value in raw.items():
            where = f"{path}.{key}" if path else str(key)
            if not isinstance(key, str):
                self.error(
                    where,
                    N_(
                        "unknown key %(key)r: keys are %(known)s",
                        key=key,
                        known=", ".join(known),
                    ),
                )
                continue
            match = next((k for k in known if k.lower() == key.lower()), None)
            if match is None:
                near = _suggest(key, known)
                self.error(
                    where,
                    N_(
                        "unknown key %(key)r: the plugin ignores it; keys are %(known)s",
                        key=key,
                        known=", ".join(known),
                    )
                    if near is None
                    else N_(
                        "unknown key %(key)r (did you mean %(near)s?): the plugin "
                        "ignores it; keys are %(known)s",
                        key=key,
                        near=near,
                        known=", ".join(known),
                    ),
                )
                continue
            if match in spelt:
                self.error(
                    where,
                    N_(
                        "%(key)r and %(other)r are the same key to the plugin "
                        "(it matches keys ignoring case and takes the last)",
                        key=key,
                        other=spelt[match],
                    ),
                )
            elif key != match:
                self.warn(
                    where,
                    N_(
                        "%(key)r is read as %(match)s (the plugin matches keys "
                        "ignoring case); write %(match)s",
                        key=key,
                        match=match,
                    ),
                )
            spelt[match] = key
            found[match] = value
        return found

    def document(self, data: Any) -> list[NodeEntry]:
        if data is None:
            self.error(NODES, N_("the file is empty: write nodes: [] for no overrides"))
            return []
        if not isinstance(data, dict):
            self.error(
                "",
                N_(
                    "must be a mapping with %(key)s, not %(value)s",
                    key=NODES,
                    value=describe(data),
                ),
            )
            return []
        top = self.keys(data, "", (NODES,))
        if NODES not in top:
            self.error(NODES, N_("is required: without it the plugin reads no entry"))
            return []
        items = top[NODES]
        if items is None:
            return []
        if not isinstance(items, list):
            self.error(
                NODES,
                N_("must be a list of entries, not %(value)s", value=describe(items)),
            )
            return []
        entries = [self.entry(raw, i) for i, raw in enumerate(items)]
        typed = [e for e in entries if e is not None]
        self.duplicate_names(typed)
        return typed

    def duplicate_names(self, entries: Sequence[NodeEntry]) -> None:
        first: dict[str, NodeEntry] = {}
        for entry in entries:
            if entry.name in first:
                self.error(
                    f"{entry.path}.{NAME}",
                    N_(
                        "node %(node)s is already named by %(first)s: the plugin "
                        "reads only the first entry, this one is ignored",
                        node=entry.name,
                        first=first[entry.name].path,
                    ),
                )
            else:
                first[entry.name] = entry

    def entry(self, raw: Any, position: int) -> NodeEntry | None:
        path = f"{NODES}[{position}]"
        if not isinstance(raw, dict):
            self.error(
                path,
                N_("must be a mapping (an entry), not %(value)s", value=describe(raw)),
            )
            return None
        values = self.keys(raw, path, ENTRY_KEYS)
        name = self.name(values.get(NAME), f"{path}.{NAME}")
        mode = values.get(MODE)
        if MODE not in values:
            self.warn(
                f"{path}.{MODE}",
                N_(
                    "missing: the plugin reads %(key)s false (template slicing) on "
                    "%(node)s, whatever the global hamiVnpuCore says",
                    key=MODE,
                    node=name,
                )
                if name
                else N_(
                    "missing: the plugin reads %(key)s false (template slicing) on "
                    "this node, whatever the global hamiVnpuCore says",
                    key=MODE,
                ),
            )
        elif not isinstance(mode, bool):
            self.error(
                f"{path}.{MODE}",
                N_("must be true or false, not %(value)s", value=describe(mode)),
            )
            mode = None
        count = self.count(values.get(COUNT), f"{path}.{COUNT}")
        filters = self.filters(values.get(FILTER), f"{path}.{FILTER}")
        if name is None:
            return None
        return NodeEntry(
            name=name,
            hami_vnpu_core=bool(mode),
            v_device_count=count,
            filter_devices=filters,
            position=position,
        )

    def name(self, value: Any, path: str) -> str | None:
        if value is None:
            self.error(path, N_("is required: the node this entry is for"))
            return None
        if not isinstance(value, str):
            self.error(
                path, N_("must be a string, not %(value)s", value=describe(value))
            )
            return None
        if not value.strip():
            self.error(path, N_("must not be empty"))
            return None
        if len(value) > _MAX_NODE_NAME or not _NODE_NAME.match(value):
            self.error(
                path,
                N_(
                    "%(value)r is no Kubernetes node name (lowercase letters, "
                    "digits, '-' and '.'): the plugin compares it exactly, so it "
                    "matches no node",
                    value=value,
                ),
            )
            return None
        return value

    def count(self, value: Any, path: str) -> int | None:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            self.error(
                path, N_("must be an integer, not %(value)s", value=describe(value))
            )
            return None
        if value == 0:
            self.warn(path, N_("0 keeps the default slot count: leave the key out"))
            return None
        if value < 0:
            self.error(
                path, N_("must be greater than 0 (the plugin ignores it otherwise)")
            )
            return None
        if value > MAX_INT32:
            self.error(path, N_("must be at most %(maximum)d", maximum=MAX_INT32))
            return None
        return value

    def filters(self, value: Any, path: str) -> FilterDevices:
        if value is None:
            return FilterDevices()
        if not isinstance(value, dict):
            self.error(
                path,
                N_(
                    "must be a mapping with uuid and index, not %(value)s",
                    value=describe(value),
                ),
            )
            return FilterDevices()
        values = self.keys(value, path, FILTER_KEYS)
        uuids = self.items(values.get(UUID), f"{path}.{UUID}", self.uuid)
        indexes = self.items(values.get(INDEX), f"{path}.{INDEX}", self.index)
        return FilterDevices(
            uuids=tuple(str(u) for u in uuids), indexes=tuple(int(i) for i in indexes)
        )

    def items(self, value: Any, path: str, check: Any) -> list[Any]:
        """The items of a list, once each, when every one is valid; else []."""
        if value is None:
            return []
        if not isinstance(value, list):
            self.error(path, N_("must be a list, not %(value)s", value=describe(value)))
            return []
        seen: dict[Any, int] = {}
        good = True
        for position, item in enumerate(value):
            where = f"{path}[{position}]"
            if not check(item, where):
                good = False
            elif item in seen:
                first = f"{path}[{seen[item]}]"
                self.error(
                    where,
                    N_(
                        "%(item)r is already listed at %(first)s",
                        item=item,
                        first=first,
                    ),
                )
            else:
                seen[item] = position
        return list(seen) if good else []

    def uuid(self, value: Any, path: str) -> bool:
        if not isinstance(value, str):
            self.error(
                path,
                N_(
                    "must be a string (a chip's UUID), not %(value)s",
                    value=describe(value),
                ),
            )
            return False
        if not value.strip():
            self.error(path, N_("must not be empty"))
            return False
        return True

    def index(self, value: Any, path: str) -> bool:
        if isinstance(value, bool) or not isinstance(value, int):
            self.error(
                path,
                N_(
                    "must be an integer (a card id), not %(value)s",
                    value=describe(value),
                ),
            )
            return False
        if not 0 <= value <= MAX_INT32:
            self.error(
                path, N_("must be a card id from 0 to %(maximum)d", maximum=MAX_INT32)
            )
            return False
        return True


# --- writing -------------------------------------------------------------------


def entry_to_raw(entry: NodeEntry) -> dict[str, Any]:
    """The JSON-able form of one entry, keys in canonical order.

    ``hami-vnpu-core`` is always written: left out, the plugin would read
    false. An unset slot count and empty filters are left out.
    """
    raw: dict[str, Any] = {NAME: entry.name, MODE: entry.hami_vnpu_core}
    if entry.v_device_count is not None:
        raw[COUNT] = entry.v_device_count
    filters = entry.filter_devices
    if not filters.empty:
        raw[FILTER] = {}
        if filters.uuids:
            raw[FILTER][UUID] = list(filters.uuids)
        if filters.indexes:
            raw[FILTER][INDEX] = list(filters.indexes)
    return raw


def render_node_config(entries: Sequence[NodeEntry]) -> str:
    """The canonical ``node-config.yaml`` text: JSON, two-space indent, one trailing newline.

    Entries stay in the given order (the plugin takes the first entry for a
    node); keys are in ``ENTRY_KEYS`` order. ``parse_node_config`` of the
    result gives the same entries back.

    Args:
        entries: The entries.

    Returns:
        The text.
    """
    document = {NODES: [entry_to_raw(entry) for entry in entries]}
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
