"""The fault tests' figures (faults injected, work done, what was lost), for the report.

Each test appends one JSON line to ``var/fault-figures.jsonl``; ``python -m
tests.faults.figures`` prints the totals.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
FILE = ROOT / "var" / "fault-figures.jsonl"


def record(test: str, *, file: Path = FILE, **figures: Any) -> None:
    """Append the figures of one test run (to ``file``: another test's figures
    may keep a file of their own)."""
    file.parent.mkdir(exist_ok=True)
    with file.open("a") as out:
        out.write(json.dumps({"test": test, **figures}, default=str) + "\n")


def record_and_check(
    test: str, *, lost: int, duplicated: int = 0, **figures: Any
) -> None:
    """Record the figures, then fail unless nothing was lost or done twice.

    ``lost`` and ``duplicated`` are counted by the test from the database and
    the cluster after the fault, never written as constants: the row says what
    was measured even when the check fails.
    """
    record(test, lost=lost, duplicated=duplicated, **figures)
    assert (lost, duplicated) == (0, 0), {"test": test, **figures}


def main() -> int:
    if not FILE.is_file():
        print("no figures yet: run the fault tests")  # noqa: T201
        return 1
    injected: Counter[str] = Counter()
    lost = 0
    for line in FILE.read_text().splitlines():
        row = json.loads(line)
        injected.update(row.get("injected") or {})
        lost += int(row.get("lost", 0))
        print(json.dumps(row))  # noqa: T201
    print(f"faults injected: {dict(injected)}; lost: {lost}")  # noqa: T201
    return 0


if __name__ == "__main__":
    sys.exit(main())
