"""Label and field selectors, in the string syntax of the list/watch query."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from simcluster import errors

Predicate = Callable[[Mapping[str, Any]], bool]

_KEY = r"[A-Za-z0-9./_-]+"
_SET_RE = re.compile(rf"^\s*({_KEY})\s+(in|notin)\s*\(([^)]*)\)\s*$")
_OP_RE = re.compile(rf"^\s*({_KEY})\s*(==|!=|=|>|<)\s*([A-Za-z0-9._-]*)\s*$")
_EXISTS_RE = re.compile(rf"^\s*(!?)\s*({_KEY})\s*$")

# Fields each kind supports in fieldSelector, besides metadata.name/namespace.
FIELD_LABELS: dict[str, frozenset[str]] = {
    "Pod": frozenset(
        {
            "spec.nodeName",
            "status.phase",
            "spec.schedulerName",
            "spec.restartPolicy",
            "spec.serviceAccountName",
            "status.podIP",
            "status.nominatedNodeName",
        }
    ),
    "Event": frozenset(
        {
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "reportingComponent",
            "source",
            "type",
        }
    ),
    "Node": frozenset({"spec.unschedulable"}),
    "Namespace": frozenset({"status.phase"}),
}


def _split_top(text: str) -> list[str]:
    """Split on commas that are not inside parentheses."""
    parts: list[str] = []
    depth = 0
    current: list[str] = []
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return [p for p in parts if p.strip()]


def _requirement(text: str) -> Predicate:
    match = _SET_RE.match(text)
    if match:
        key, op, raw = match.groups()
        values = {v.strip() for v in raw.split(",") if v.strip()}
        if op == "in":
            return lambda labels: labels.get(key) in values
        return lambda labels: labels.get(key) not in values
    match = _OP_RE.match(text)
    if match:
        key, op, value = match.groups()
        if op in ("=", "=="):
            return lambda labels: labels.get(key) == value
        if op == "!=":
            return lambda labels: labels.get(key) != value
        try:
            number = int(value)
        except ValueError:
            raise errors.bad_request(f"unable to parse requirement: {text!r}") from None
        if op == ">":
            return lambda labels: _as_int(labels.get(key)) > number
        return lambda labels: _as_int(labels.get(key)) < number
    match = _EXISTS_RE.match(text)
    if match:
        negate, key = match.groups()
        if negate:
            return lambda labels: key not in labels
        return lambda labels: key in labels
    raise errors.bad_request(f"unable to parse requirement: found {text!r}")


def _as_int(value: Any) -> float:
    try:
        return int(value)
    except (TypeError, ValueError):
        return float("nan")


def parse_label_selector(text: str | None) -> Predicate | None:
    """Compile a label selector string; None for an empty selector."""
    if not text or not text.strip():
        return None
    reqs = [_requirement(part) for part in _split_top(text)]
    return lambda labels: all(req(labels) for req in reqs)


def _field_value(obj: Mapping[str, Any], path: str) -> str:
    current: Any = obj
    for part in path.split("."):
        if not isinstance(current, Mapping):
            return ""
        current = current.get(part)
    if current is None:
        return ""
    if isinstance(current, bool):
        return "true" if current else "false"
    return str(current)


def parse_field_selector(
    text: str | None, kind: str
) -> Callable[[Mapping[str, Any]], bool] | None:
    """Compile a field selector for objects of ``kind``; None for an empty one."""
    if not text or not text.strip():
        return None
    allowed = FIELD_LABELS.get(kind, frozenset()) | {
        "metadata.name",
        "metadata.namespace",
    }
    checks: list[tuple[str, bool, str]] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        for op in ("!=", "==", "="):
            if op in part:
                field, value = part.split(op, 1)
                equal = op != "!="
                break
        else:
            raise errors.bad_request(
                f"invalid selector: '{text}'; can't understand '{part}'"
            )
        field = field.strip()
        if field not in allowed:
            raise errors.bad_request(f"field label not supported: {field}")
        checks.append((field, equal, value.strip()))

    def predicate(obj: Mapping[str, Any]) -> bool:
        return all((_field_value(obj, f) == v) == eq for f, eq, v in checks)

    return predicate


def match_label_selector(
    selector: Mapping[str, Any] | None, labels: Mapping[str, str]
) -> bool:
    """Match a structured ``LabelSelector`` (matchLabels + matchExpressions).

    An empty selector matches everything, as in policy/v1 and apps/v1.
    """
    if not selector:
        return True
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or []:
        key, op, values = (
            expr.get("key"),
            expr.get("operator"),
            expr.get("values") or [],
        )
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and labels.get(key) in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
    return True
