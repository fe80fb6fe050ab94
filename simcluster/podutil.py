"""Small helpers about pods and PodDisruptionBudgets shared by API and controllers."""

from __future__ import annotations

import math
import random
from typing import Any

from simcluster.selectors import match_label_selector
from simcluster.store import Obj

TERMINAL_PHASES = frozenset({"Succeeded", "Failed"})
_NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789"


def random_suffix(length: int = 5) -> str:
    """The random name suffix Kubernetes uses for generateName."""
    return "".join(random.choice(_NAME_CHARS) for _ in range(length))  # noqa: S311


def labels_of(obj: Obj) -> dict[str, str]:
    """``metadata.labels`` or an empty dict."""
    return (obj.get("metadata") or {}).get("labels") or {}


def annotations_of(obj: Obj) -> dict[str, str]:
    """``metadata.annotations`` or an empty dict."""
    return (obj.get("metadata") or {}).get("annotations") or {}


def phase(pod: Obj) -> str:
    """``status.phase`` (Pending when absent)."""
    return (pod.get("status") or {}).get("phase") or "Pending"


def is_terminal(pod: Obj) -> bool:
    """Succeeded or Failed."""
    return phase(pod) in TERMINAL_PHASES


def is_terminating(obj: Obj) -> bool:
    """Has a deletionTimestamp."""
    return bool((obj.get("metadata") or {}).get("deletionTimestamp"))


def is_ready(pod: Obj) -> bool:
    """Running with condition Ready=True."""
    if phase(pod) != "Running":
        return False
    for cond in (pod.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "Ready":
            return cond.get("status") == "True"
    return False


def is_healthy(pod: Obj) -> bool:
    """Counts toward a disruption budget: Ready and not being deleted."""
    return is_ready(pod) and not is_terminating(pod)


def set_condition(
    pod: Obj, kind: str, status: str, now: str, reason: str = "", message: str = ""
) -> None:
    """Set a pod condition, keeping lastTransitionTime if the status did not change."""
    conditions: list[dict[str, Any]] = pod.setdefault("status", {}).setdefault(
        "conditions", []
    )
    for cond in conditions:
        if cond.get("type") == kind:
            if cond.get("status") != status:
                cond["lastTransitionTime"] = now
            cond["status"] = status
            _reason(cond, reason, message)
            return
    cond = {
        "type": kind,
        "status": status,
        "lastProbeTime": None,
        "lastTransitionTime": now,
    }
    _reason(cond, reason, message)
    conditions.append(cond)


def _reason(cond: dict[str, Any], reason: str, message: str) -> None:
    for key, value in (("reason", reason), ("message", message)):
        if value:
            cond[key] = value
        else:
            cond.pop(key, None)


def _scaled(value: Any, total: int, round_up: bool) -> int:
    if isinstance(value, str) and value.endswith("%"):
        share = int(value[:-1]) * total / 100
        return math.ceil(share) if round_up else math.floor(share)
    return int(value)


def pdb_status(pdb: Obj, pods: list[Obj]) -> dict[str, Any]:
    """Compute a PDB's status from the pods of its namespace."""
    spec = pdb.get("spec") or {}
    selector = spec.get("selector")
    matched = [
        p
        for p in pods
        if selector is not None
        and match_label_selector(selector, labels_of(p))
        and not is_terminal(p)
    ]
    expected = len(matched)
    healthy = sum(1 for p in matched if is_healthy(p))
    if "minAvailable" in spec:
        desired = _scaled(spec["minAvailable"], expected, round_up=True)
    elif "maxUnavailable" in spec:
        desired = max(
            0, expected - _scaled(spec["maxUnavailable"], expected, round_up=True)
        )
    else:
        desired = 0
    return {
        "observedGeneration": (pdb.get("metadata") or {}).get("generation", 1),
        "expectedPods": expected,
        "currentHealthy": healthy,
        "desiredHealthy": desired,
        "disruptionsAllowed": max(0, healthy - desired),
    }


def pdbs_for(pod: Obj, pdbs: list[Obj]) -> list[Obj]:
    """The PDBs (of the pod's namespace) whose selector matches the pod."""
    labels = labels_of(pod)
    return [
        pdb
        for pdb in pdbs
        if (pdb.get("spec") or {}).get("selector") is not None
        and match_label_selector(pdb["spec"]["selector"], labels)
    ]
