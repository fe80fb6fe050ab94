"""The building blocks of the printers: columns, rows and kubectl's formatting rules."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from simcluster.columndocs import DOCS

Obj = dict[str, Any]
Cells = list[Any]


@dataclass(frozen=True)
class Column:
    """One ``TableColumnDefinition``."""

    name: str
    description: str
    type: str = "string"
    format: str = ""
    priority: int = 0

    def definition(self) -> dict[str, Any]:
        """The JSON form (every field is always present)."""
        return {
            "name": self.name,
            "type": self.type,
            "format": self.format,
            "description": self.description,
            "priority": self.priority,
        }


@dataclass(frozen=True)
class Printer:
    """The columns of a resource and how to fill a row from an object."""

    columns: tuple[Column, ...]
    cells: Callable[[Obj, datetime], Cells]
    conditions: Callable[[Obj], list[Obj]] | None = None


# -- formatting helpers (kubectl's and apimachinery's rules) ---------------------
def parse_time(value: Any) -> datetime | None:
    """An RFC 3339 timestamp (``Z`` or offset, optional fraction), or None."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def human_duration(seconds: float) -> str:
    """apimachinery's ``duration.HumanDuration``: ``45s``, ``3m20s``, ``5h10m``, ``12d``."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        return f"{minutes}m{s % 60}s" if s % 60 else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        return f"{hours}h{minutes % 60}m" if minutes % 60 else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        return f"{hours // 24}d{hours % 24}h" if hours % 24 else f"{hours // 24}d"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = (hours // 24) % 365
        years = hours // 24 // 365
        return f"{years}y{days}d" if days else f"{years}y"
    return f"{hours // 24 // 365}y"


def since(value: Any, now: datetime) -> str:
    """Age of a timestamp as the printers show it (``<unknown>`` when unset)."""
    at = parse_time(value)
    if at is None:
        return "<unknown>"
    return human_duration((now - at).total_seconds())


def age_of(obj: Obj, now: datetime) -> str:
    return since(meta_of(obj).get("creationTimestamp"), now)


def meta_of(obj: Obj) -> Obj:
    return obj.get("metadata") or {}


def spec_of(obj: Obj) -> Obj:
    return obj.get("spec") or {}


def status_of(obj: Obj) -> Obj:
    return obj.get("status") or {}


def format_labels(labels: dict[str, str] | None) -> str:
    """``labels.FormatLabels``: sorted ``k=v`` pairs, or ``<none>``."""
    text = ",".join(f"{k}={v}" for k, v in sorted((labels or {}).items()))
    return text or "<none>"


_OPERATORS = {"In": " in ", "NotIn": " notin ", "Exists": "", "DoesNotExist": ""}


def selector_string(selector: Obj | None) -> str | None:
    """``LabelSelectorAsSelector(s).String()``; None for an invalid selector.

    Requirements are sorted by key; ``in``/``notin`` values are sorted too.
    A missing or empty selector prints as the empty string.
    """
    if not selector:
        return ""
    reqs: list[tuple[str, str]] = [
        (k, f"{k}={v}") for k, v in (selector.get("matchLabels") or {}).items()
    ]
    for expr in selector.get("matchExpressions") or []:
        key, op = expr.get("key", ""), expr.get("operator", "")
        if op not in _OPERATORS:
            return None
        values = sorted(expr.get("values") or [])
        if op == "Exists":
            reqs.append((key, key))
        elif op == "DoesNotExist":
            reqs.append((key, "!" + key))
        else:
            joined = values[0] if len(values) == 1 else ",".join(values)
            reqs.append((key, f"{key}{_OPERATORS[op]}({joined})"))
    reqs.sort(key=lambda r: r[0])
    return ",".join(text for _, text in reqs)


def container_cells(template_spec: Obj) -> tuple[str, str]:
    containers = template_spec.get("containers") or []
    return (
        ",".join(c.get("name", "") for c in containers),
        ",".join(c.get("image", "") for c in containers),
    )


def int_or_string(value: Any) -> str:
    return "N/A" if value is None else str(value)


# -- columns ---------------------------------------------------------------------
NAME = Column("Name", DOCS["meta.name"], format="name")
AGE = Column("Age", DOCS["meta.creationTimestamp"])
CONTAINERS = Column(
    "Containers", "Names of each container in the template.", priority=1
)
IMAGES = Column(
    "Images", "Images referenced by each container in the template.", priority=1
)
