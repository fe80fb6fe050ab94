"""Pods: READY, STATUS and RESTARTS as kube-apiserver's pod printer computes them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from simcluster.columndocs import DOCS
from simcluster.printers.base import (
    AGE,
    NAME,
    Cells,
    Column,
    Obj,
    Printer,
    age_of,
    human_duration,
    meta_of,
    parse_time,
    spec_of,
    status_of,
)

_POD_DONE = {
    "Succeeded": "The pod has completed successfully.",
    "Failed": "The pod failed.",
}


def _finished_at(container_status: Obj) -> datetime | None:
    last = container_status.get("lastState") or {}
    return parse_time((last.get("terminated") or {}).get("finishedAt"))


def _later(a: datetime | None, b: datetime | None) -> datetime | None:
    if a is None:
        return b
    if b is None:
        return a
    return max(a, b)


def _condition_true(status: Obj, kind: str) -> bool:
    return any(
        c.get("type") == kind and c.get("status") == "True"
        for c in status.get("conditions") or []
    )


def _terminated_reason(term: Obj, prefix: str = "") -> str:
    if term.get("reason"):
        return f"{prefix}{term['reason']}"
    if term.get("signal"):
        return f"{prefix}Signal:{term['signal']}"
    return f"{prefix}ExitCode:{term.get('exitCode', 0)}"


@dataclass
class _PodTally:
    """Counters of the pod printer's two passes over container statuses."""

    reason: str
    ready: int = 0
    restarts: int = 0
    last_restart: datetime | None = None
    sidecar_restarts: int = 0
    last_sidecar_restart: datetime | None = None


def _pod_init_pass(pod: Obj, tally: _PodTally) -> bool:
    """Walk the init containers; returns whether the pod is still initializing."""
    init_specs = spec_of(pod).get("initContainers") or []
    sidecars = {c.get("name") for c in init_specs if c.get("restartPolicy") == "Always"}
    for i, cs in enumerate(status_of(pod).get("initContainerStatuses") or []):
        count, finished = int(cs.get("restartCount") or 0), _finished_at(cs)
        tally.restarts += count
        tally.last_restart = _later(tally.last_restart, finished)
        sidecar = cs.get("name") in sidecars
        if sidecar:
            tally.sidecar_restarts += count
            tally.last_sidecar_restart = _later(tally.last_sidecar_restart, finished)
        state = cs.get("state") or {}
        term, waiting = state.get("terminated"), state.get("waiting")
        if term is not None and int(term.get("exitCode") or 0) == 0:
            continue
        if sidecar and cs.get("started"):
            tally.ready += 1 if cs.get("ready") else 0
            continue
        if term is not None:
            tally.reason = _terminated_reason(term, "Init:")
        elif (
            waiting and waiting.get("reason") and waiting["reason"] != "PodInitializing"
        ):
            tally.reason = "Init:" + waiting["reason"]
        else:
            tally.reason = f"Init:{i}/{len(init_specs)}"
        return True
    return False


def _pod_main_pass(pod: Obj, tally: _PodTally) -> None:
    """Walk the app containers (last first, as the server does)."""
    status = status_of(pod)
    tally.restarts = tally.sidecar_restarts
    tally.last_restart = tally.last_sidecar_restart
    has_running, error_reason = False, ""
    for cs in reversed(status.get("containerStatuses") or []):
        tally.restarts += int(cs.get("restartCount") or 0)
        tally.last_restart = _later(tally.last_restart, _finished_at(cs))
        state = cs.get("state") or {}
        waiting, term = state.get("waiting"), state.get("terminated")
        if waiting and waiting.get("reason"):
            tally.reason = waiting["reason"]
        elif term is not None:
            tally.reason = _terminated_reason(term)
            if int(term.get("exitCode") or 0) != 0:
                error_reason = tally.reason
        elif cs.get("ready") and state.get("running") is not None:
            has_running = True
            tally.ready += 1
    # A pod whose last container completed is still Running while others run.
    if tally.reason == "Completed":
        if has_running and _condition_true(status, "Ready"):
            tally.reason = "Running"
        elif error_reason:
            tally.reason = error_reason
        elif has_running:
            tally.reason = "NotReady"


def pod_status(pod: Obj) -> tuple[str, str, str, datetime | None, int]:
    """READY, STATUS, restarts and last restart time of a pod, as printed."""
    spec, status, meta = spec_of(pod), status_of(pod), meta_of(pod)
    phase = status.get("phase") or ""
    tally = _PodTally(reason=status.get("reason") or phase)
    for cond in status.get("conditions") or []:
        if (
            cond.get("type") == "PodScheduled"
            and cond.get("reason") == "SchedulingGated"
        ):
            tally.reason = "SchedulingGated"
    total = len(spec.get("containers") or []) + sum(
        1
        for c in spec.get("initContainers") or []
        if c.get("restartPolicy") == "Always"
    )
    initializing = _pod_init_pass(pod, tally)
    if not initializing or _condition_true(status, "Initialized"):
        _pod_main_pass(pod, tally)
    if meta.get("deletionTimestamp") and status.get("reason") == "NodeLost":
        tally.reason = "Unknown"
    elif meta.get("deletionTimestamp") and phase not in ("Succeeded", "Failed"):
        tally.reason = "Terminating"
    ready = f"{tally.ready}/{total}"
    return ready, tally.reason, str(tally.restarts), tally.last_restart, tally.restarts


def _pod_cells(pod: Obj, now: datetime) -> Cells:
    spec, status = spec_of(pod), status_of(pod)
    ready, reason, restarts, last, count = pod_status(pod)
    if count and last is not None:
        restarts = f"{count} ({human_duration((now - last).total_seconds())} ago)"
    ips = status.get("podIPs") or []
    ip = (ips[0].get("ip") if ips else None) or status.get("podIP") or "<none>"
    gates = spec.get("readinessGates") or []
    gates_cell = "<none>"
    if gates:
        conditions = {
            c.get("type"): c.get("status") for c in status.get("conditions") or []
        }
        true = sum(1 for g in gates if conditions.get(g.get("conditionType")) == "True")
        gates_cell = f"{true}/{len(gates)}"
    return [
        meta_of(pod).get("name", ""),
        ready,
        reason,
        restarts,
        age_of(pod, now),
        ip,
        spec.get("nodeName") or "<none>",
        status.get("nominatedNodeName") or "<none>",
        gates_cell,
    ]


def _pod_conditions(pod: Obj) -> list[Obj]:
    phase = status_of(pod).get("phase")
    if phase not in _POD_DONE:
        return []
    return [
        {
            "type": "Completed",
            "status": "True",
            "reason": phase,
            "message": _POD_DONE[phase],
        }
    ]


POD = Printer(
    (
        NAME,
        Column(
            "Ready", "The aggregate readiness state of this pod for accepting traffic."
        ),
        Column("Status", "The aggregate status of the containers in this pod."),
        Column(
            "Restarts",
            "The number of times the containers in this pod have been restarted and "
            "when the last container in this pod has restarted.",
        ),
        AGE,
        Column("IP", DOCS["PodStatus.podIP"], priority=1),
        Column("Node", DOCS["PodSpec.nodeName"], priority=1),
        Column("Nominated Node", DOCS["PodStatus.nominatedNodeName"], priority=1),
        Column("Readiness Gates", DOCS["PodSpec.readinessGates"], priority=1),
    ),
    _pod_cells,
    _pod_conditions,
)
