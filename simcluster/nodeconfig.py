"""The device plugin's per-node config file, read as each plugin version reads it.

``hami-device-node-config`` (key ``node-config.yaml``) is mounted into the
plugin's pod; the plugin reads it once at start, and only when it is given
``--node_config_file`` (docs/node-config.md). Upstream
(Project-HAMi/ascend-device-plugin, ``internal/vnpu.go`` ``LoadNodeConfig``)
parses it with ``k8s.io/apimachinery/pkg/util/yaml``: YAML 1.1 scalars as
gopkg.in/yaml.v2 types them, converted to JSON, then Go's ``encoding/json``
into ``NodeListConfig``. So unknown keys are ignored, keys match the JSON tags
case-insensitively (an exact match first), a value of the wrong type fails the
whole file, and a scalar where a string is wanted becomes that string.

v1.3.0's ``NodeConfig`` has ``name``, ``hami-vnpu-core`` and ``vDeviceCount``;
v1.4.0 adds ``filterDevices`` (``uuid``: strings, ``index``: int32 card ids),
so a malformed ``filterDevices`` fails only a v1.4.0 plugin.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from apps.inventory.hami.goconf import YamlSyntaxError, load_go_yaml

INT32 = (-(2**31), 2**31 - 1)
INT64 = (-(2**63), 2**63 - 1)


class NodeConfigError(ValueError):
    """The file does not load (the plugin logs it and runs on defaults)."""


@dataclass(frozen=True)
class NodeEntry:
    """One entry of ``nodes`` (Go's zero values where a key is absent)."""

    name: str = ""
    hami_vnpu_core: bool = False
    v_device_count: int = 0
    filter_uuids: tuple[str, ...] = ()
    filter_indexes: tuple[int, ...] = ()


def _type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _mismatch(value: Any, where: str, go_type: str) -> NodeConfigError:
    return NodeConfigError(
        "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal "
        f"{_type_name(value)} into Go {where} of type {go_type}"
    )


def _string(value: Any, where: str) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):  # sigs.k8s.io/yaml: a string target takes it as text
        return "true" if value else "false"
    if isinstance(value, int | float | str):
        return str(value)
    raise _mismatch(value, where, "string")


def _boolean(value: Any, where: str) -> bool:
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    raise _mismatch(value, where, "bool")


def _integer(value: Any, where: str, bounds: tuple[int, int], go_type: str) -> int:
    if value is None:
        return 0
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # a JSON number without a fraction
    if (
        isinstance(value, int)
        and not isinstance(value, bool)
        and bounds[0] <= value <= bounds[1]
    ):
        return value
    raise _mismatch(value, where, go_type)


def _fields(obj: Any, go_type: str, tags: tuple[str, ...]) -> dict[str, Any]:
    """Go's ``encoding/json`` into a struct: each key to the field whose tag it
    equals, else equals ignoring case; later keys overwrite; others ignored."""
    if obj is None:
        return {}
    if not isinstance(obj, dict):
        raise _mismatch(obj, "value", go_type)
    out: dict[str, Any] = {}
    for key, value in obj.items():
        if not isinstance(key, str):
            continue
        tag = (
            key
            if key in tags
            else next((t for t in tags if t.lower() == key.lower()), None)
        )
        if tag is not None:
            out[tag] = value
    return out


def _list(value: Any, where: str, go_type: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise _mismatch(value, where, go_type)
    return value


def _entry(raw: Any, filters: bool) -> NodeEntry:
    tags = ("name", "hami-vnpu-core", "vDeviceCount")
    if filters:
        tags = (*tags, "filterDevices")
    got = _fields(raw, "internal.NodeConfig", tags)
    where = "struct field NodeConfig.nodes."
    uuids: list[str] = []
    indexes: list[int] = []
    if filters:
        fd = _fields(
            got.get("filterDevices"), "internal.FilterDevices", ("uuid", "index")
        )
        fwhere = where + "filterDevices."
        uuids = [
            _string(v, fwhere + "uuid")
            for v in _list(fd.get("uuid"), fwhere + "uuid", "[]string")
        ]
        indexes = [
            _integer(v, fwhere + "index", INT32, "int32")
            for v in _list(fd.get("index"), fwhere + "index", "[]int32")
        ]
    return NodeEntry(
        name=_string(got.get("name"), where + "name"),
        hami_vnpu_core=_boolean(got.get("hami-vnpu-core"), where + "hami-vnpu-core"),
        v_device_count=_integer(
            got.get("vDeviceCount"), where + "vDeviceCount", INT64, "int"
        ),
        filter_uuids=tuple(uuids),
        filter_indexes=tuple(indexes),
    )


def parse_node_config(text: str, *, filters: bool = True) -> list[NodeEntry]:
    """The ``nodes`` entries of a ``node-config.yaml``, as a plugin reads them.

    Args:
        text: The file's contents.
        filters: Whether this plugin knows ``filterDevices`` (v1.4.0 on).

    Raises:
        NodeConfigError: The file does not load (syntax, or a wrong type).
    """
    try:
        doc = load_go_yaml(text)
    except YamlSyntaxError as exc:
        raise NodeConfigError(f"error converting YAML to JSON: {exc}") from exc
    top = _fields(doc, "internal.NodeListConfig", ("nodes",))
    raw_nodes = _list(
        top.get("nodes"), "struct field NodeListConfig.nodes", "[]internal.NodeConfig"
    )
    return [_entry(raw, filters) for raw in raw_nodes]


def entry_for(entries: list[NodeEntry], node: str) -> NodeEntry | None:
    """The first entry whose ``name`` is ``node`` (``LoadNodeConfig``'s loop)."""
    return next((entry for entry in entries if entry.name == node), None)
