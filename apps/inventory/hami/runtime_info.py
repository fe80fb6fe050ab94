"""The device plugin's runtime info: ``huawei.com/<commonWord>`` on a pod.

Which template (or core percentage) each chip of the pod was given, as the
Ascend device plugin writes it after allocating (facts file, section 3).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ._annotation_json import fold_keys, json_field, load_json_list
from ._gojson import marshal

__all__ = ["RuntimeInfo", "parse_runtime_info", "render_runtime_info"]


@dataclass(frozen=True)
class RuntimeInfo:
    """One entry of ``huawei.com/<commonWord>`` (HAMi ``RuntimeInfo``).

    Attributes:
        uuid: Chip ID.
        temp: Template name; "" for a whole card or hami-core mode.
        memory: MB (HAMi >= v2.9 / v2.10, see the facts).
        core: Core percentage in hami-core mode.
    """

    uuid: str
    temp: str = ""
    memory: int = 0
    core: int = 0


def parse_runtime_info(value: str) -> list[RuntimeInfo]:
    """Parse ``huawei.com/<commonWord>``.

    Args:
        value: JSON array of ``{"UUID", "temp", "memory", "core"}`` objects.

    Returns:
        The entries.

    Raises:
        AnnotationError: Not a JSON array of objects, or wrong field types.
    """
    items = load_json_list(value, "runtime info")
    result = []
    for n, item in enumerate(items):
        fast = _runtime_info_as_written(item)
        if fast is not None:
            result.append(fast)
            continue
        what = f"runtime info[{n}]"
        fields = fold_keys(item, what)
        result.append(
            RuntimeInfo(
                uuid=json_field(fields, "uuid", str, what),
                temp=json_field(fields, "temp", str, what),
                memory=json_field(fields, "memory", int, what),
                core=json_field(fields, "core", int, what),
            )
        )
    return result


_RUNTIME_KEYS = frozenset(("UUID", "temp", "memory", "core"))


def _runtime_info_as_written(item: Any) -> RuntimeInfo | None:
    """The entry when it is exactly as HAMi writes it (its own key names,
    values of the right types, nulls as zero values); None for anything else,
    which the general path folds, checks and explains.

    Every slice's pod has one of these: folding and checking each key
    generally was a third of deriving a first list's slices.
    """
    if type(item) is not dict or not _RUNTIME_KEYS.issuperset(item):
        return None
    uuid, temp = item.get("UUID"), item.get("temp")
    memory, core = item.get("memory"), item.get("core")
    if not (
        (uuid is None or type(uuid) is str)
        and (temp is None or type(temp) is str)
        and (memory is None or type(memory) is int)
        and (core is None or type(core) is int)
    ):
        return None
    return RuntimeInfo(
        uuid=uuid or "", temp=temp or "", memory=memory or 0, core=core or 0
    )


def render_runtime_info(items: Sequence[RuntimeInfo]) -> str:
    """Render ``huawei.com/<commonWord>`` as HAMi writes it.

    Args:
        items: The entries.

    Returns:
        Compact JSON with Go's field names and ``omitempty``.
    """
    rendered = []
    for item in items:
        pairs = [
            ("UUID", item.uuid),
            ("temp", item.temp),
            ("memory", item.memory),
            ("core", item.core),
        ]
        rendered.append({key: value for key, value in pairs if value})
    return marshal(rendered)
