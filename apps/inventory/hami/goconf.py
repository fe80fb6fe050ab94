"""Volcano's scheduler conf read as Volcano reads it, for every reader here.

Volcano parses ``volcano-scheduler.conf`` with gopkg.in/yaml.v2 (YAML 1.1
scalars: ``y``, ``n``, ``yes``, ``on``, ``off`` are booleans, which PyYAML
reads as strings or not at all alike), and a plugin reads its arguments
through ``pkg/scheduler/framework/arguments.go``:

- ``GetBool`` takes a Go bool; from v1.15.0 also a string that Go's
  ``strconv.ParseBool`` accepts (``1 t T TRUE true True`` and ``0 f F FALSE
  false False``, nothing else: not ``yes``, not `` true``). Anything else
  leaves the default (false).
- ``GetInt`` takes only a Go ``int``: a quoted ``"10"`` (a string) or ``10.0``
  (a float) leaves the default (0).

The portal's health checks and simcluster's binder both read the conf here,
so a value is never understood by one of them and ignored by Volcano.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from apps.inventory.hami._yaml import YamlSyntaxError, load, new_yaml, to_plain

__all__ = [
    "YamlSyntaxError",
    "get_bool",
    "get_int",
    "load_go_yaml",
    "parse_bool",
]

_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})


def load_go_yaml(text: str) -> Any:
    """Parse ``text`` as gopkg.in/yaml.v2 does into an ``interface{}``.

    Returns:
        dicts, lists, str, int, float, bool and None (None for an empty text).

    Raises:
        YamlSyntaxError: The text is not one valid YAML document.
    """
    return to_plain(load(new_yaml(), text))


def parse_bool(text: str) -> bool | None:
    """Go's ``strconv.ParseBool``: the value, or None where it returns an error."""
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    return None


def get_bool(args: Mapping[str, Any], key: str, *, strings: bool = True) -> bool | None:
    """``Arguments.GetBool``: what Volcano sets, or None where it keeps the default.

    Args:
        args: A plugin's ``arguments`` as :func:`load_go_yaml` read them.
        key: The argument's name.
        strings: Whether this Volcano also parses a string (v1.15.0 and later).
    """
    value = args.get(key)
    if isinstance(value, bool):
        return value
    if strings and isinstance(value, str):
        return parse_bool(value)
    return None


def get_int(args: Mapping[str, Any], key: str) -> int | None:
    """``Arguments.GetInt``: a Go int only (None: the default is kept)."""
    value = args.get(key)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return None
