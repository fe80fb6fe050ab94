"""How ``vnpu`` describes a request: one line per state change, ``status`` and ``ls``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Cell = Callable[[dict[str, Any]], str]

#: ``vnpu ls`` columns: (header, how to get the cell from a request).
COLUMNS: tuple[tuple[str, Cell], ...] = (
    ("ID", lambda r: str(r.get("id", ""))),
    ("STATE", lambda r: r.get("state") or ""),
    ("QUEUE", lambda r: r.get("queue") or ""),
    ("CLUSTER", lambda r: r.get("cluster_name") or str(r.get("cluster") or "")),
    ("CHIP TYPE", lambda r: r.get("chip_type") or ""),
    ("SIZE", lambda r: size(r)),
    ("NODE", lambda r: r.get("node") or ""),
    ("EXIT", lambda r: _exit_cell(r)),
    ("CREATED", lambda r: (r.get("created_at") or "")[:19]),
)


def size(request: dict[str, Any]) -> str:
    """What was asked for: a template, MB of memory, or the whole card."""
    if request.get("whole_card"):
        return "whole card"
    if request.get("template"):
        return str(request["template"])
    if request.get("memory") is not None:
        return f"{request['memory']} MB"
    return ""


def _exit_cell(request: dict[str, Any]) -> str:
    code = (request.get("result") or {}).get("exit_code", request.get("exit_code"))
    return "" if code is None else str(code)


def _placement(request: dict[str, Any]) -> str:
    parts = []
    if request.get("node"):
        parts.append(f"node {request['node']}")
    if request.get("chip_uuid"):
        parts.append(f"chip {request['chip_uuid']}")
    if request.get("template_booked"):
        booked = f"template {request['template_booked']}"
        if request.get("memory_booked"):
            booked += f" ({request['memory_booked']} MB)"
        parts.append(booked)
    elif request.get("memory_booked"):
        parts.append(f"{request['memory_booked']} MB")
    return ", ".join(parts)


def state_line(request: dict[str, Any]) -> str:
    """One line for the request's current state, as ``vnpu run`` prints it."""
    rid, state = request.get("id"), request.get("state")
    reason = request.get("reason") or ""
    where = _placement(request)
    if state == "pending":
        position = request.get("position")
        rank = (
            f" (position {position} in queue {request.get('queue')})"
            if position
            else ""
        )
        return f"request {rid} pending{rank}: {reason or 'waiting'}"
    if state == "reserved":
        return f"request {rid} reserved: {where or 'room booked'}"
    if state == "admitted":
        pod = request.get("pod_name") or "its pod"
        return f"request {rid} admitted: {pod} created" + (
            f" on {where}" if where else ""
        )
    if state == "running":
        pod = request.get("pod_name")
        return f"request {rid} running on {where or 'its node'}" + (
            f", pod {pod}" if pod else ""
        )
    line = f"request {rid} {state}"
    return f"{line}: {reason}" if reason else line


def state_key(request: dict[str, Any]) -> tuple[Any, ...]:
    """What, when it changes, makes ``vnpu run`` print a new state line."""
    return tuple(
        request.get(key)
        for key in ("state", "reason", "position", "node", "chip_uuid", "pod_name")
    )


def status_text(request: dict[str, Any]) -> str:
    """``vnpu status``: the request's fields that matter to a pipeline, one a line."""
    result = request.get("result") or {}
    rows = [
        ("request", request.get("id")),
        ("state", request.get("state")),
        ("reason", request.get("reason")),
        ("position", request.get("position")),
        ("cluster", request.get("cluster_name") or request.get("cluster")),
        ("namespace", request.get("namespace")),
        ("queue", request.get("queue")),
        ("chip type", request.get("chip_type")),
        ("size", size(request)),
        ("priority", request.get("priority")),
        ("placed", _placement(request)),
        ("pod", request.get("pod_name")),
        ("exit code", result.get("exit_code", request.get("exit_code"))),
        ("result", result.get("reason")),
        ("time limit", request.get("time_limit_seconds")),
        ("idempotency key", request.get("idempotency_key")),
        ("created", request.get("created_at")),
        ("running since", request.get("running_at")),
        ("finished", result.get("finished_at") or request.get("finished_at")),
    ]
    shown = [(name, value) for name, value in rows if value not in (None, "")]
    width = max(len(name) for name, _ in shown)
    return "\n".join(f"{name + ':':<{width + 1}} {value}" for name, value in shown)


def table(requests: list[dict[str, Any]]) -> str:
    """``vnpu ls``: one row per request, columns aligned."""
    rows = [[header for header, _ in COLUMNS]]
    rows += [[cell(r) for _, cell in COLUMNS] for r in requests]
    widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS))]
    return "\n".join(
        "  ".join(
            cell.ljust(width) for cell, width in zip(row, widths, strict=True)
        ).rstrip()
        for row in rows
    )
