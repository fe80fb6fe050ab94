"""What a request's job ended with: exit code, reason and time, per container (pure).

A pipeline fails its build on the job's exit code, not on the pod's phase:
a pod evicted or deleted after its container completed is still a job that
succeeded, and a pod whose container was OOM-killed says so only in the
container's status. Kubernetes puts all of it in ``status.containerStatuses``
(``state.terminated``: ``exitCode``, ``reason``, ``finishedAt``), in any order;
the result lists the containers in the order of the pod's spec, the first
(the one the portal gives the vNPU) being the job's.

Where no container terminated (the portal deleted the pod at its time limit,
a preemption evicted it, it was cancelled), the reason says why the request
ended instead: ``DeadlineExceeded``, ``Preempted``, ``Evicted``,
``Cancelled`` or ``Deleted``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict

from apps.scheduling.choices import RequestState


class ContainerResult(TypedDict):
    """How one container ended (``exit_code`` None: it has not terminated)."""

    name: str
    exit_code: int | None
    reason: str
    finished_at: str | None


class RequestResult(TypedDict):
    """How a request's job ended: its first container's end, and every container's."""

    exit_code: int | None
    reason: str
    finished_at: str | None
    containers: list[ContainerResult]


def container_results(pod: Mapping[str, Any] | None) -> list[ContainerResult]:
    """Each container of ``pod`` (in the spec's order) with its terminated state."""
    if not pod:
        return []
    names = [c.get("name", "") for c in (pod.get("spec") or {}).get("containers", [])]
    statuses = {
        s.get("name", ""): s
        for s in (pod.get("status") or {}).get("containerStatuses") or []
    }
    results: list[ContainerResult] = []
    for name in names:
        state = (statuses.get(name) or {}).get("state") or {}
        ended = state.get("terminated") or {}
        code = ended.get("exitCode")
        results.append(
            ContainerResult(
                name=name,
                exit_code=code if isinstance(code, int) else None,
                reason=str(ended.get("reason") or ""),
                finished_at=ended.get("finishedAt") or None,
            )
        )
    return results


def job_exit_code(pod: Mapping[str, Any] | None) -> int | None:
    """The first container's exit code, once it terminated (None before, or no pod)."""
    containers = container_results(pod)
    return containers[0]["exit_code"] if containers else None


def _why_ended(state: RequestState, reason: str) -> str:
    """The reason of a request whose job has no terminated container to speak for it."""
    if state == RequestState.EXPIRED:
        return "DeadlineExceeded"
    if state == RequestState.CANCELLED:
        return "Cancelled"
    text = reason.lower()
    if "preempted" in text:
        return "Preempted"
    if "evicted" in text:
        return "Evicted"
    if "deleted" in text:
        return "Deleted"
    return "Error" if state == RequestState.FAILED else "Completed"


def request_result(
    state: RequestState,
    reason: str,
    pod: Mapping[str, Any] | None,
    finished_at: str | None,
) -> RequestResult:
    """The result of a request that ended in ``state`` with ``reason``.

    Args:
        state: The final state it moved to.
        reason: The request's reason text (says evicted, preempted, deleted).
        pod: Its pod as last read, or None when it was gone.
        finished_at: When the request ended (ISO 8601), used when no container
            says when it finished.
    """
    containers = container_results(pod)
    first = containers[0] if containers else None
    if first is not None and first["exit_code"] is not None:
        why = first["reason"] or ("Completed" if first["exit_code"] == 0 else "Error")
        if state == RequestState.EXPIRED:
            why = "DeadlineExceeded"  # killed for its time limit, whatever it said
        return RequestResult(
            exit_code=first["exit_code"],
            reason=why,
            finished_at=first["finished_at"] or finished_at,
            containers=containers,
        )
    return RequestResult(
        exit_code=None,
        reason=_why_ended(state, reason),
        finished_at=finished_at,
        containers=containers,
    )


def state_by_exit_code(pod: Mapping[str, Any] | None) -> RequestState | None:
    """Succeeded or Failed by the job's exit code (None: it has not terminated).

    Used when the pod's phase cannot say (it was deleted or evicted after
    its first container ended): the container's code is the job's answer.
    """
    code = job_exit_code(pod)
    if code is None:
        return None
    return RequestState.SUCCEEDED if code == 0 else RequestState.FAILED
