"""The real-fault figures: one row per fault, printed at the end of the pytest run.

Every figure is counted from the database and the cluster by the test that
injected the fault (``test_faults.py``); ``pytest_terminal_summary`` in
``conftest.py`` prints the table, so CI logs show it. Rows also go to
``var/fault-figures.jsonl`` with the simulated-cluster faults' figures.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from tests.faults.figures import record

COLUMNS = (
    ("fault", "fault"),
    ("requests", "requests"),
    ("lost", "lost"),
    ("doubled", "placed twice"),
    ("orphaned", "pods orphaned"),
    ("stuck", "reservations stuck"),
    ("cm_lost", "CM writes lost"),
    ("cm_doubled", "CM writes doubled"),
    ("fresh_seconds", "s to fresh"),
    ("note", "note"),
)


@dataclass
class FaultFigures:
    """What one fault cost. ``cm_*`` are None where no ConfigMap write was made."""

    fault: str
    requests: int
    lost: int
    doubled: int
    orphaned: int
    stuck: int
    cm_lost: int | None
    cm_doubled: int | None
    fresh_seconds: float
    note: str = ""


ROWS: list[FaultFigures] = []


def add(row: FaultFigures) -> None:
    """Keep a row for the summary (and the JSON lines file)."""
    ROWS.append(row)
    record(f"real: {row.fault}", **asdict(row))


def table(resync_seconds: float) -> list[str]:
    """The rows as a text table, with the aim in its title."""
    cells = [[title for _, title in COLUMNS]]
    for row in ROWS:
        values = asdict(row)
        cells.append(
            [
                "-"
                if values[key] is None
                else f"{values[key]:.1f}"
                if key == "fresh_seconds"
                else str(values[key])
                for key, _ in COLUMNS
            ]
        )
    widths = [max(len(line[i]) for line in cells) for i in range(len(COLUMNS))]
    lines = [
        f"faults on the real control plane (aim: all zero, fresh within one "
        f"resync period = {resync_seconds:.0f} s)"
    ]
    for n, line in enumerate(cells):
        lines.append(" | ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)))
        if n == 0:
            lines.append("-+-".join("-" * w for w in widths))
    return lines
