"""The job contract: how long a simulated container runs, what it prints, how it ends.

simcluster runs nothing, so a pod says what its "job" would do, in its first
container's env (the pod annotations are equivalents; a variable that is set
wins over its annotation, even when empty):

- ``SIMCLUSTER_RUN_SECONDS`` / ``simcluster.io/run-seconds``: seconds the
  container runs once started (a float; unset: until the pod is deleted);
- ``SIMCLUSTER_EXIT_CODE`` / ``simcluster.io/exit-code``: the code it ends
  with (default 0; taken modulo 256 as a process's exit status is);
- ``SIMCLUSTER_LOG`` / ``simcluster.io/log``: the lines it prints,
  ``\\n``-separated. Line i of n is printed at start + i * run / n (all at
  start when the run has no end), so a follower sees them arrive.

Any other container of the pod may carry its own ``SIMCLUSTER_EXIT_CODE`` and
``SIMCLUSTER_LOG`` (env only); it runs as long as the first one. Pure
functions on pod JSON, so that kubestack's simulated nodes can play the same
contract.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

RUN_ENV = "SIMCLUSTER_RUN_SECONDS"
EXIT_ENV = "SIMCLUSTER_EXIT_CODE"
LOG_ENV = "SIMCLUSTER_LOG"
RUN_ANNOTATION = "simcluster.io/run-seconds"
EXIT_ANNOTATION = "simcluster.io/exit-code"
LOG_ANNOTATION = "simcluster.io/log"

Pod = dict[str, Any]


@dataclass(frozen=True)
class Job:
    """What a pod's containers do: one run length, an exit code and lines each."""

    run_seconds: float | None = None
    exit_codes: dict[str, int] = field(default_factory=dict)
    lines: dict[str, list[str]] = field(default_factory=dict)

    def exit_code(self, container: str) -> int:
        """The code ``container`` ends with (0 unless the contract says)."""
        return self.exit_codes.get(container, 0)


def _env(container: Any) -> dict[str, str]:
    """A container's literal env values. An entry with ``valueFrom`` cannot be
    resolved here and counts as unset; one with neither is empty (the API
    server omits an empty ``value``)."""
    out: dict[str, str] = {}
    if not isinstance(container, dict):
        return out
    for entry in container.get("env") or []:
        if isinstance(entry, dict) and "name" in entry and "valueFrom" not in entry:
            out[str(entry["name"])] = str(entry.get("value") or "")
    return out


def parse_run_seconds(text: str | None) -> float | None:
    """Seconds of run, or None (unset, not a number, NaN or infinite: no end)."""
    if text is None or not text.strip():
        return None
    try:
        seconds = float(text)
    except ValueError:
        return None
    if math.isnan(seconds) or math.isinf(seconds):
        return None
    return max(0.0, seconds)


def parse_exit_code(text: str | None) -> int:
    """The exit status a process reports for ``exit(text)``: 0..255, default 0."""
    if text is None:
        return 0
    try:
        return int(text.strip()) % 256
    except ValueError:
        return 0


def split_lines(text: str | None) -> list[str]:
    """``a\\nb\\n`` -> ``["a", "b"]``; one trailing newline does not add a line."""
    if not text:
        return []
    return text.removesuffix("\n").split("\n")


def read_job(pod: Pod) -> Job:
    """The contract as ``pod`` states it (env first, then annotations)."""
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    containers = (pod.get("spec") or {}).get("containers") or []
    first = _env(containers[0]) if containers else {}
    run = first[RUN_ENV] if RUN_ENV in first else annotations.get(RUN_ANNOTATION)
    codes: dict[str, int] = {}
    lines: dict[str, list[str]] = {}
    for index, container in enumerate(containers):
        if not isinstance(container, dict):
            continue
        name = str(container.get("name", ""))
        env = _env(container)
        code = env.get(EXIT_ENV)
        log = env.get(LOG_ENV)
        if index == 0:
            code = code if EXIT_ENV in env else annotations.get(EXIT_ANNOTATION)
            log = log if LOG_ENV in env else annotations.get(LOG_ANNOTATION)
        codes[name] = parse_exit_code(code)
        lines[name] = split_lines(log)
    return Job(parse_run_seconds(run), codes, lines)


def schedule(
    lines: list[str], run_seconds: float | None, started_ns: int
) -> list[tuple[int, str]]:
    """When each line is printed (wall-clock ns): spread over the run."""
    if not lines:
        return []
    step = (run_seconds or 0.0) * 1e9 / len(lines)
    return [(started_ns + round(i * step), line) for i, line in enumerate(lines)]


def exit_reason(code: int) -> str:
    """The kubelet's reason for a container that exited with ``code``."""
    return "Completed" if code == 0 else "Error"
