"""Builders for allocator tests: the HAMi default chip types and short constructors."""

from __future__ import annotations

from collections.abc import Iterable

from apps.scheduling.allocator import (
    AllocationResult,
    Chip,
    Placement,
    Policy,
    PreemptionProposal,
    Request,
    RunningSlice,
    Strategy,
    Waiting,
)
from harness.chip_types import B4, BY_WORD, P310, RULES, SLOTS  # noqa: F401 - the tests import them from here

BINPACK = Policy(Strategy.BINPACK)
SPREAD = Policy(Strategy.SPREAD)

# (memory, ai_core, ai_cpu) of each template name, whole cards as "whole".
SHAPES = {
    "whole-Ascend310P": (21527, 8, 7),
    "whole-Ascend910B4": (32768, 20, 7),
    **{t.name: (t.memory, t.ai_core, t.ai_cpu) for r in RULES for t in r.templates},
}


def chip(
    chip_id: str,
    common_word: str = "Ascend310P",
    *,
    slices: Iterable[str] = (),
    extra_memory: int = 0,
    node: str | None = None,
    healthy: bool = True,
    cordoned: bool = False,
    **overrides: int,
) -> Chip:
    """A chip with default totals, used by the given template names."""
    rules = BY_WORD[common_word]
    used = [extra_memory, 0, 0, 0]
    for name in slices:
        memory, ai_core, ai_cpu = SHAPES[name]
        used[0] += memory
        used[1] += 1
        used[2] += ai_core
        used[3] += ai_cpu
    fields = {
        "memory": rules.memory_allocatable,
        "slots": SLOTS[common_word],
        "ai_core": rules.ai_core,
        "ai_cpu": rules.ai_cpu,
        "memory_used": used[0],
        "slots_used": used[1],
        "ai_core_used": used[2],
        "ai_cpu_used": used[3],
    }
    fields.update(overrides)
    return Chip(
        id=chip_id,
        node=node or f"node-of-{chip_id}",
        common_word=common_word,
        healthy=healthy,
        cordoned=cordoned,
        **fields,
    )


def req(
    request_id: str,
    memory: int | None = None,
    *,
    common_word: str = "Ascend310P",
    template: str | None = None,
    priority: int = 0,
    at: float = 0.0,
    queue: str = "default",
    allow_preemption: bool = True,
    pinned: str | None = None,
    excluded: Iterable[str] = (),
) -> Request:
    """A pending request."""
    return Request(
        id=request_id,
        common_word=common_word,
        memory=memory,
        template=template,
        priority=priority,
        submitted_at_s=at,
        queue=queue,
        allow_preemption=allow_preemption,
        pinned_chip=pinned,
        excluded_chips=frozenset(excluded),
    )


def slice_(
    slice_id: str,
    chip_id: str,
    template: str,
    *,
    priority: int = 0,
    started: float = 0.0,
    queue: str = "default",
    terminating: bool = False,
) -> RunningSlice:
    """A running slice of a template (or "whole-<common word>")."""
    memory, ai_core, ai_cpu = SHAPES[template]
    return RunningSlice(
        id=slice_id,
        chip_id=chip_id,
        memory=memory,
        ai_core=ai_core,
        ai_cpu=ai_cpu,
        priority=priority,
        started_at_s=started,
        queue=queue,
        namespace="ns",
        pod=f"pod-{slice_id}",
        terminating=terminating,
    )


def outcome_of(
    result: AllocationResult, request_id: str
) -> Placement | PreemptionProposal | Waiting:
    """The one outcome of a request in a result."""
    found: list[Placement | PreemptionProposal | Waiting] = [
        *(p for p in result.placements if p.request_id == request_id),
        *(p for p in result.proposals if p.request_id == request_id),
        *(w for w in result.waiting if w.request_id == request_id),
    ]
    assert len(found) == 1, found
    return found[0]


def waiting_of(result: AllocationResult, request_id: str) -> Waiting:
    """The Waiting entry of a request (fails if it was placed or proposed)."""
    found = outcome_of(result, request_id)
    assert isinstance(found, Waiting), found
    return found


def placement_of(result: AllocationResult, request_id: str) -> Placement:
    """The Placement of a request (fails if it waits or got a proposal)."""
    found = outcome_of(result, request_id)
    assert isinstance(found, Placement), found
    return found


def placed_on(result: AllocationResult) -> dict[str, str]:
    """Request id → chip id of every placement."""
    return {p.request_id: p.chip_id for p in result.placements}
