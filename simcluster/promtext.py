"""Prometheus text exposition format 0.0.4: gauges with labels, nothing more."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


@dataclass
class Gauge:
    """One metric family: its name, help text and samples (labels, value)."""

    name: str
    help: str
    samples: list[tuple[dict[str, str], float]] = field(default_factory=list)

    def add(self, labels: dict[str, str], value: float) -> None:
        """Add one sample (labels keep their insertion order on the line)."""
        self.samples.append((labels, value))


def _escape(value: str) -> str:
    # The three characters the format escapes inside a label value.
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def format_value(value: float) -> str:
    """Integral values without a fraction (memory in KB stays exact), others as repr."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if float(value).is_integer():
        return str(int(value))
    return repr(float(value))


def render(families: Iterable[Gauge]) -> str:
    """The exposition text of ``families`` (a family without samples is left out)."""
    lines: list[str] = []
    for family in families:
        if not family.samples:
            continue
        lines.append(f"# HELP {family.name} {family.help}")
        lines.append(f"# TYPE {family.name} gauge")
        for labels, value in family.samples:
            pairs = ",".join(f'{key}="{_escape(val)}"' for key, val in labels.items())
            lines.append(f"{family.name}{{{pairs}}} {format_value(value)}")
    return "\n".join(lines) + "\n" if lines else ""
