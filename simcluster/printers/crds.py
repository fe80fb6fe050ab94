"""Custom resources: the columns their CRD's ``additionalPrinterColumns`` declare."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from simcluster.printers.base import (
    NAME,
    Cells,
    Column,
    Obj,
    Printer,
    meta_of,
    parse_time,
    since,
)


@dataclass(frozen=True)
class CrdColumn:
    """One ``additionalPrinterColumns`` entry (simple ``.a.b.c`` paths only)."""

    name: str
    type: str
    json_path: str
    priority: int = 0
    description: str = ""

    def column(self) -> Column:
        """The Table column the CRD handler derives from it."""
        text = self.description or (
            f"Custom resource definition column (in JSONPath format): {self.json_path}"
        )
        return Column(self.name, text, type=self.type, priority=self.priority)

    def cell(self, obj: Obj, now: datetime) -> Any:
        """The value at the path, typed as the CRD handler does (None if missing)."""
        value: Any = obj
        for part in self.json_path.strip(".").split("."):
            if not isinstance(value, dict) or part not in value:
                return None
            value = value[part]
        if value is None:
            return None
        if self.type == "string":
            return value if isinstance(value, str) else _json_text(value)
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if self.type == "integer":
            return int(value) if number else None
        if self.type == "number":
            return float(value) if number else None
        if self.type == "boolean":
            return value if isinstance(value, bool) else None
        if self.type == "date" and isinstance(value, str):
            return since(value, now) if parse_time(value) else "<invalid>"
        return None


def _json_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


def _crd_printer(columns: tuple[CrdColumn, ...]) -> Printer:
    # With no additionalPrinterColumns the CRD handler serves a single Age column.
    columns = columns or (CrdColumn("Age", "date", ".metadata.creationTimestamp"),)

    def cells(obj: Obj, now: datetime) -> Cells:
        return [meta_of(obj).get("name", "")] + [c.cell(obj, now) for c in columns]

    return Printer((NAME, *(c.column() for c in columns)), cells)


# Volcano v1.15.1 scheduling.volcano.sh_{queues,podgroups}.yaml, version v1beta1.
QUEUE = _crd_printer((CrdColumn("PARENT", "string", ".spec.parent"),))
PODGROUP = _crd_printer(
    (
        CrdColumn("STATUS", "string", ".status.phase"),
        CrdColumn("minMember", "integer", ".spec.minMember"),
        CrdColumn("RUNNINGS", "integer", ".status.running"),
        CrdColumn("AGE", "date", ".metadata.creationTimestamp"),
        CrdColumn("QUEUE", "string", ".spec.queue", priority=1),
    )
)
