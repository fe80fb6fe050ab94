"""How gopkg.in/yaml.v2 types a plain scalar: YAML 1.1, as HAMi reads the device config.

HAMi, the Ascend device plugin and Volcano parse ``device-config.yaml`` with
Go's yaml.v2, which resolves plain (unquoted) scalars by YAML 1.1 rules, not
the YAML 1.2 core schema that ruamel uses by default. ``hamiVnpuCore: yes``
is a boolean to them; a string ``on`` written unquoted is read back as
``true``; ``0755`` is the octal 493 and ``1_000`` is 1000. The portal reads
and writes with these rules (``_yaml.new_yaml`` plugs them into ruamel), so
what it shows is what HAMi parses, and whatever a YAML 1.1 reader would take
for something other than a string gets quoted on write.

Written from yaml.v2 v2.4.0's documented behaviour (``resolve.go``, and
``decode.go`` for what lands in an ``interface{}``), checked against the real
library by tests/inventory/hami/test_yaml_v2.py:

- The first character decides what is tried: ``+``/``-``/digits (numbers,
  timestamps), ``y Y n N t T f F o O ~`` (only the word table below), ``.``
  (the table, then Go's ParseFloat: ``.5``, ``.5e3``, ``.5_5``). Anything
  else is a string.
- Words: ``y Y yes Yes YES true True TRUE on On ON`` are true, ``n N no No
  NO false False FALSE off Off OFF`` false, ``"" ~ null Null NULL`` null,
  ``.nan .inf +.inf -.inf`` (three spellings each) floats.
- Numbers: underscores are dropped, then Go's ``ParseInt(s, 0, 64)`` (sign,
  ``0x``/``0o``/``0b`` prefixes, a leading ``0`` meaning octal), then
  ``ParseUint``, then a float of the form ``[-+]?(.d+|d+(.d*)?)([eE][-+]?d+)?``
  (so ``08`` is the float 8.0 and ``1e3`` the float 1000.0); a float out of
  range is no float but a string. There are no base-60 numbers (yaml.v2
  dropped them on purpose) and a timestamp decodes to its own text.
"""

from __future__ import annotations

import math
import re
from enum import StrEnum
from typing import Any

__all__ = ["Kind", "is_ambiguous_string", "resolve_plain"]


class Kind(StrEnum):
    """What yaml.v2 decodes a plain scalar into (inside an ``interface{}``)."""

    STR = "str"
    BOOL = "bool"
    INT = "int"
    FLOAT = "float"
    NULL = "null"


def _words(value: Any, kind: Kind, *spellings: str) -> dict[str, tuple[Kind, Any]]:
    return dict.fromkeys(spellings, (kind, value))


_WORDS: dict[str, tuple[Kind, Any]] = {
    **_words(True, Kind.BOOL, "y", "Y", "yes", "Yes", "YES"),
    **_words(True, Kind.BOOL, "true", "True", "TRUE", "on", "On", "ON"),
    **_words(False, Kind.BOOL, "n", "N", "no", "No", "NO"),
    **_words(False, Kind.BOOL, "false", "False", "FALSE", "off", "Off", "OFF"),
    **_words(None, Kind.NULL, "", "~", "null", "Null", "NULL"),
    **_words(math.nan, Kind.FLOAT, ".nan", ".NaN", ".NAN"),
    **_words(math.inf, Kind.FLOAT, ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"),
    **_words(-math.inf, Kind.FLOAT, "-.inf", "-.Inf", "-.INF"),
}
_NUMBER_START = frozenset("+-0123456789")
# yaml.v2's yamlStyleFloat, applied after the underscores are gone.
_STYLE_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
# What Go's ParseFloat accepts from a text that starts with '.': Go's float
# syntax, where an underscore may only stand between two digits.
_DOT_FLOAT = re.compile(r"\.[0-9](_?[0-9])*([eE][-+]?[0-9](_?[0-9])*)?")
_DIGITS = {2: "01", 8: "01234567", 10: "0123456789", 16: "0123456789abcdefABCDEF"}
_PREFIXES = {"x": 16, "X": 16, "o": 8, "O": 8, "b": 2, "B": 2}
_INT64 = 2**63
# Most significant digits of a 64-bit unsigned value in each base.
_MAX_DIGITS = {2: 64, 8: 22, 10: 20, 16: 16}
_UINT64 = 2**64


def _go_parse_int(text: str, *, signed: bool) -> int | None:
    """Go's ``strconv.ParseInt(text, 0, 64)`` (or ``ParseUint``); None on error."""
    negative = False
    body = text
    if signed and body[:1] in ("+", "-"):
        negative, body = body[0] == "-", body[1:]
    base = 10
    if len(body) > 1 and body[0] == "0":
        base = _PREFIXES.get(body[1], 8)
        body = body[2:] if body[1] in _PREFIXES else body[1:]
    if not body or any(c not in _DIGITS[base] for c in body):
        return None
    # More significant digits than 64 bits hold is Go's range error. Checked
    # before int(): Python refuses to convert more than 4300 decimal digits
    # (ValueError), and a 5,000-digit scalar in a ConfigMap is no reason for
    # a 500; yaml.v2 reads it as a string (``_number``).
    if len(body.lstrip("0")) > _MAX_DIGITS[base]:
        return None
    value = -int(body, base) if negative else int(body, base)
    if signed:
        return value if -_INT64 <= value < _INT64 else None
    return value if value < _UINT64 else None


def _finite_float(text: str) -> float | None:
    value = float(text)
    # Go's ParseFloat fails with ErrRange where Python rounds to infinity.
    return None if math.isinf(value) else value


def _number(text: str) -> tuple[Kind, Any]:
    plain = text.replace("_", "")
    for signed in (True, False):
        number = _go_parse_int(plain, signed=signed)
        if number is not None:
            return Kind.INT, number
    if _STYLE_FLOAT.fullmatch(plain):
        value = _finite_float(plain)
        if value is not None:
            return Kind.FLOAT, value
    # Timestamps (2001-12-14) end here too: yaml.v2 gives an interface{} their text.
    return Kind.STR, text


def resolve_plain(text: str) -> tuple[Kind, Any]:
    """Type and value yaml.v2 gives the plain scalar ``text`` in an ``interface{}``.

    Args:
        text: The scalar as written, unquoted and untagged.

    Returns:
        ``(kind, value)``: the value is a bool, int, float, None or ``text``
        itself for a string.
    """
    if text in _WORDS:
        return _WORDS[text]
    first = text[0]
    if first in _NUMBER_START:
        return _number(text)
    if first == "." and _DOT_FLOAT.fullmatch(text):
        value = _finite_float(text.replace("_", ""))
        if value is not None:
            return Kind.FLOAT, value
    return Kind.STR, text


def is_ambiguous_string(text: str) -> bool:
    """True when ``text`` written plain would not be read back as this string."""
    return resolve_plain(text)[0] is not Kind.STR
