"""tests/timeline.py: the summary of a parallel run names each worker's idle
tail and the longest units of work."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from tests.timeline import Timeline


def _report(worker: str, nodeid: str, start: float, stop: float) -> pytest.TestReport:
    report = pytest.TestReport(
        nodeid=nodeid,
        location=("x", 0, "x"),
        keywords={},
        outcome="passed",
        longrepr=None,
        when="call",
        start=start,
        stop=stop,
    )
    report.node = SimpleNamespace(gateway=SimpleNamespace(id=worker))  # type: ignore[attr-defined]
    return report


def test_each_worker_its_busy_time_and_idle_tail_and_the_longest_units(tmp_path):
    timeline = Timeline(began=100.0)
    timeline.add(_report("gw0", "tests/a.py::t1", 100, 130))
    timeline.add(_report("gw0", "tests/a.py::t2", 130, 160))
    timeline.add(_report("gw1", "tests/e2e/test_x.py::t", 100, 110))
    timeline.add(_report("gw1", "tests/e2e/test_y.py::t", 110, 115))

    lines = timeline.lines(top=2)

    assert lines[0] == "run: 60 s from the session's start to the last test"
    assert "worker gw0: busy 60 s, done at 60 s (idle 0 s at the end)" in lines
    assert "worker gw1: busy 15 s, done at 15 s (idle 45 s at the end)" in lines
    # The browser folder is one unit (tests/xdist_scopes.py), listed after a.py.
    units = [line.split()[-1] for line in lines[-2:]]
    assert units == ["tests/a.py", "tests/e2e/"]

    path = tmp_path / "timeline.jsonl"
    timeline.write(path)
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(rows) == 4
    assert (rows[0]["worker"], rows[0]["start"], rows[0]["stop"]) == ("gw0", 0, 30)


def test_an_empty_run_prints_nothing():
    assert Timeline().lines() == []
