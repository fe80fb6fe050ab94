"""Where a parallel run's minutes go: each xdist worker's busy time, its idle
tail, and the units of work (tests/xdist_scopes.py) that held it longest.

The controller sees every test's report with its worker and its start and
stop times, so nothing runs on the workers. scripts/test.sh prints the
summary at the end of the run and keeps the raw timeline in
``var/test-timeline.jsonl`` (one line per test phase) for a closer look.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.xdist_scopes import unit_of


@dataclass
class Phase:
    worker: str
    nodeid: str
    when: str
    start: float
    stop: float


@dataclass
class Timeline:
    """The phases the controller saw, and what it prints at the end."""

    began: float = field(default_factory=time.time)
    phases: list[Phase] = field(default_factory=list)

    def add(self, report: pytest.TestReport) -> None:
        node = getattr(report, "node", None)
        worker = getattr(getattr(node, "gateway", None), "id", None) or "main"
        self.phases.append(
            Phase(worker, report.nodeid, report.when, report.start, report.stop)
        )

    def lines(self, top: int = 10) -> list[str]:
        """Per worker: busy seconds, when its last test ended and so how long
        it sat idle before the run ended; then the longest units of work."""
        if not self.phases:
            return []
        end = max(p.stop for p in self.phases)
        busy: dict[str, float] = defaultdict(float)
        last: dict[str, float] = defaultdict(float)
        units: dict[str, float] = defaultdict(float)
        unit_worker: dict[str, str] = {}
        for p in self.phases:
            busy[p.worker] += p.stop - p.start
            last[p.worker] = max(last[p.worker], p.stop)
            units[unit_of(p.nodeid)] += p.stop - p.start
            unit_worker[unit_of(p.nodeid)] = p.worker
        out = [
            f"run: {end - self.began:.0f} s from the session's start to the last test"
        ]
        for worker in sorted(busy):
            out.append(
                f"worker {worker}: busy {busy[worker]:.0f} s, "
                f"done at {last[worker] - self.began:.0f} s "
                f"(idle {end - last[worker]:.0f} s at the end)"
            )
        out.append(f"the {top} longest units of work:")
        for unit, seconds in sorted(units.items(), key=lambda kv: -kv[1])[:top]:
            out.append(f"  {seconds:6.0f} s  {unit_worker[unit]}  {unit}")
        return out

    def write(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w") as out:
            for p in self.phases:
                row = {**p.__dict__, "start": p.start - self.began}
                row["stop"] = p.stop - self.began
                out.write(json.dumps(row) + "\n")


class TimelinePlugin:
    """Registered by tests/conftest.py on the controller of an xdist run."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.timeline = Timeline()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.timeline.add(report)

    def pytest_terminal_summary(
        self, terminalreporter: pytest.TerminalReporter
    ) -> None:
        lines = self.timeline.lines()
        if not lines:
            return
        terminalreporter.section("where the time went (tests/timeline.py)")
        for line in lines:
            terminalreporter.write_line(line)
        self.timeline.write(self.path)
        terminalreporter.write_line(f"timeline: {self.path}")
