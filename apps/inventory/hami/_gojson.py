"""Serialise JSON exactly like Go's ``encoding/json.Marshal``.

The portal writes annotations that HAMi also writes; producing the same
bytes keeps a re-written annotation from looking like a change.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

__all__ = ["go_map", "marshal"]

# Go escapes these even inside strings, to keep JSON safe to embed in HTML.
_GO_ESCAPES = str.maketrans(
    {
        "<": "\\u003c",
        ">": "\\u003e",
        "&": "\\u0026",
        "\u2028": "\\u2028",
        "\u2029": "\\u2029",
    }
)
_EXPONENT = re.compile(r"e([+-])0*(\d)")
# Go prints floats with an exponent outside [1e-6, 1e21).
_SMALL, _LARGE = 1e-6, 1e21


def _float(value: float) -> str:
    if not math.isfinite(value):
        raise ValueError(f"Go cannot marshal {value!r}")
    if value.is_integer() and abs(value) < _LARGE:
        return str(int(value))
    if _SMALL <= abs(value) < _LARGE:
        # Shortest round-trip digits, written without an exponent.
        return format(Decimal(repr(value)), "f")
    return _EXPONENT.sub(r"e\1\2", repr(value))


def go_map(value: Any) -> Any:
    """Sort mapping keys recursively, as Go marshals ``map[string]any``.

    Args:
        value: A decoded JSON value.

    Returns:
        The same value with every mapping's keys in sorted order.
    """
    if isinstance(value, Mapping):
        return {str(k): go_map(value[k]) for k in sorted(value, key=str)}
    if isinstance(value, list | tuple):
        return [go_map(v) for v in value]
    return value


def marshal(value: Any) -> str:
    """Encode ``value`` as compact JSON with Go's escaping and number format.

    Args:
        value: dicts (written in their order, like the fields of a Go
            struct; pass Go maps through :func:`go_map`), lists, str, int,
            float, bool and None.

    Returns:
        The JSON text.
    """
    if isinstance(value, Mapping):
        return (
            "{"
            + ",".join(f"{marshal(str(k))}:{marshal(v)}" for k, v in value.items())
            + "}"
        )
    if isinstance(value, list | tuple):
        return "[" + ",".join(marshal(v) for v in value) + "]"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False).translate(_GO_ESCAPES)
    if isinstance(value, float):
        return _float(value)
    return json.dumps(value)  # int, bool, None
