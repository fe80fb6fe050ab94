"""How ``vnpu`` describes a request: one line per state change, ``status`` and ``ls``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from unicodedata import east_asian_width

from vnpucli.i18n import _

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
        return _("whole card")
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
        parts.append(_("node %(node)s") % {"node": request["node"]})
    if request.get("chip_uuid"):
        parts.append(_("chip %(chip)s") % {"chip": request["chip_uuid"]})
    if request.get("template_booked"):
        booked = _("template %(template)s") % {"template": request["template_booked"]}
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
    words = {"id": rid, "state": state, "reason": reason, "where": where}
    if state == "pending":
        words.update(position=request.get("position"), queue=request.get("queue"))
        words["reason"] = reason or _("waiting")
        if words["position"]:
            return (
                _(
                    "request %(id)s pending (position %(position)s in queue "
                    "%(queue)s): %(reason)s"
                )
                % words
            )
        return _("request %(id)s pending: %(reason)s") % words
    if state == "reserved":
        words["where"] = where or _("room booked")
        return _("request %(id)s reserved: %(where)s") % words
    if state == "admitted":
        words["pod"] = request.get("pod_name") or _("its pod")
        if where:
            return _("request %(id)s admitted: %(pod)s created on %(where)s") % words
        return _("request %(id)s admitted: %(pod)s created") % words
    if state == "running":
        words.update(where=where or _("its node"), pod=request.get("pod_name"))
        if words["pod"]:
            return _("request %(id)s running on %(where)s, pod %(pod)s") % words
        return _("request %(id)s running on %(where)s") % words
    if reason:
        return _("request %(id)s %(state)s: %(reason)s") % words
    return _("request %(id)s %(state)s") % words


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
        (_("request"), request.get("id")),
        (_("state"), request.get("state")),
        (_("reason"), request.get("reason")),
        (_("position"), request.get("position")),
        (_("cluster"), request.get("cluster_name") or request.get("cluster")),
        (_("namespace"), request.get("namespace")),
        (_("queue"), request.get("queue")),
        (_("chip type"), request.get("chip_type")),
        (_("size"), size(request)),
        (_("priority"), request.get("priority")),
        (_("placed"), _placement(request)),
        (_("pod"), request.get("pod_name")),
        (_("exit code"), result.get("exit_code", request.get("exit_code"))),
        (_("result"), result.get("reason")),
        (_("time limit"), request.get("time_limit_seconds")),
        (_("idempotency key"), request.get("idempotency_key")),
        (_("created"), request.get("created_at")),
        (_("running since"), request.get("running_at")),
        (_("finished"), result.get("finished_at") or request.get("finished_at")),
    ]
    shown = [(name, value) for name, value in rows if value not in (None, "")]
    width = max(_cells(name) for name, _value in shown)
    return "\n".join(
        f"{name}:{' ' * (width - _cells(name))} {value}" for name, value in shown
    )


def _cells(text: str) -> int:
    """How many terminal cells ``text`` takes (a Chinese character takes two)."""
    return sum(2 if east_asian_width(char) in "WF" else 1 for char in text)


def table(requests: list[dict[str, Any]]) -> str:
    """``vnpu ls``: one row per request, columns aligned."""
    rows = [[header for header, _cell in COLUMNS]]
    rows += [[cell(r) for _header, cell in COLUMNS] for r in requests]
    widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS))]
    return "\n".join(
        "  ".join(
            cell.ljust(width) for cell, width in zip(row, widths, strict=True)
        ).rstrip()
        for row in rows
    )
