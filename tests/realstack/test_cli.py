"""``python -m kubestack up``: prints ``ready`` with a working kubeconfig, and
Ctrl-C stops every process it started."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kubestack import build

pytestmark = [pytest.mark.realstack, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]


def _children_of(pid: int) -> set[int]:
    """Every live descendant of ``pid`` (from /proc)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # "pid (comm) state ppid ...": comm may hold spaces, so split after ")"
        parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier}
        found |= frontier
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_up_prints_ready_and_ctrl_c_leaves_nothing_running(tmp_path):
    kubeconfig = tmp_path / "real.kubeconfig"
    up = subprocess.Popen(
        [sys.executable, "-m", "kubestack", "up", "--kubeconfig", str(kubeconfig)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: list[str] = []
    try:
        assert up.stdout is not None
        deadline = time.monotonic() + 180
        for line in up.stdout:
            lines.append(line.rstrip())
            if line.strip() == "ready" or time.monotonic() > deadline:
                break
        assert lines, "kubestack up printed nothing"
        assert lines[-1] == "ready", "\n".join(lines)
        started = _children_of(up.pid)
        assert len(started) >= 7, (
            started
        )  # etcd, apiserver, 2 controllers, 2 schedulers, kwok

        kubectl = build.tools_bin_dir() / "kubectl"
        pods = subprocess.run(
            [
                str(kubectl),
                "--kubeconfig",
                str(kubeconfig),
                "get",
                "pods",
                "-o",
                "name",
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        # the guide's two pods, placed by the real Volcano before "ready"
        assert pods == ["pod/npu-pod-310p", "pod/npu-pod-910b"]
    finally:
        up.send_signal(signal.SIGINT)
        rest, _ = up.communicate(timeout=60)
    assert up.returncode == 0, rest
    assert "==> stopping" in rest
    left = {pid for pid in started if _alive(pid)}
    assert not left, [Path(f"/proc/{p}/cmdline").read_bytes()[:80] for p in left]
    assert os.path.exists(kubeconfig)
