"""Reading the JSON of HAMi's annotations as Go's encoding/json reads it.

Shared by the node and pod annotation parsers (``annotations``) and the
runtime info (``runtime_info``): keys match case-insensitively, a missing or
null field is Go's zero value, a value of the wrong type is an error Go
would also report.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


class AnnotationError(ValueError):
    """An annotation value cannot be parsed."""


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


# One decoder for every annotation: ``json.loads`` with an option builds a new
# one per call, a fifth of the parse on a 20,000-slice first list.
_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def load_json_list(value: str, what: str) -> list[Any]:
    """The JSON array ``value`` (null is an empty one, as Go decodes it)."""
    if not isinstance(value, str):
        raise AnnotationError(f"{what}: expected a string, got {type(value).__name__}")
    try:
        data = _DECODER.decode(value)
    except ValueError as exc:
        raise AnnotationError(f"{what}: not valid JSON ({exc})") from exc
    if data is None:  # Go decodes "null" into an empty slice
        return []
    if not isinstance(data, list):
        raise AnnotationError(f"{what}: expected a JSON array")
    return data


def fold_keys(item: Any, what: str) -> dict[str, Any]:
    """Lower-case the keys; Go matches JSON keys to fields case-insensitively."""
    if not isinstance(item, dict):
        raise AnnotationError(f"{what}: expected a JSON object, got {item!r}")
    # The last of duplicate keys wins, as in Go.
    return {key.lower(): value for key, value in item.items()}


def json_field(fields: Mapping[str, Any], key: str, kind: type, what: str) -> Any:
    """Field ``key`` of folded ``fields``, checked to be a ``kind``."""
    value = fields.get(key)
    if value is None:  # missing or null: Go leaves the zero value
        return kind()
    wrong_bool = kind is int and isinstance(value, bool)
    if wrong_bool or not isinstance(value, kind):
        raise AnnotationError(f"{what}: {key} must be {kind.__name__}, got {value!r}")
    return value
