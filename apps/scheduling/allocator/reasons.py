"""Human-readable reasons for requests left waiting. Pure string formatting."""

from __future__ import annotations

from .fit import Resources
from .types import SliceShape


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def shape_text(shape: SliceShape) -> str:
    """Describe a shape, e.g. ``vir02 (6144 MB, 2 AICore, 2 AICPU)``.

    Args:
        shape: The resolved request shape.

    Returns:
        The description.
    """
    if shape.whole_card:
        return f"a whole card ({shape.memory} MB)"
    return f"{shape.template} ({shape.memory} MB, {shape.ai_core} AICore, {shape.ai_cpu} AICPU)"


def free_text(total: Resources, used: Resources) -> str:
    """Describe what is free on a chip.

    Args:
        total: The chip's totals.
        used: Its usage (running and promised).

    Returns:
        E.g. ``3000 MB, 2 slots, 4 AICore, 3 AICPU free``.
    """
    free = Resources(*(max(0, t - u) for t, u in zip(total, used, strict=True)))
    return (
        f"{free.memory} MB, {_plural(free.slots, 'slot')}, "
        f"{free.ai_core} AICore, {free.ai_cpu} AICPU free"
    )


def invalid(detail: str) -> str:
    """Reason for a request that can never be served."""
    return f"invalid: {detail}"


def unknown_chip_type(common_word: str) -> str:
    """Reason for a request naming a chip type without rules."""
    return invalid(f"no chip type {common_word} in the device config")


def pinned_unavailable(chip_id: str, why: str) -> str:
    """Reason for a request pinned to a chip it cannot use."""
    return f"pinned chip {chip_id} {why}"


def no_eligible_chip(
    common_word: str, cordoned: int, unhealthy: int, excluded: int
) -> str:
    """Reason when no chip of the type may be used at all."""
    parts = [
        f"{n} {what}"
        for n, what in (
            (cordoned, "cordoned"),
            (unhealthy, "unhealthy"),
            (excluded, "excluded"),
        )
        if n
    ]
    tail = f" ({', '.join(parts)})" if parts else ""
    return f"no healthy, schedulable {common_word} chip{tail}"


def no_capacity(
    common_word: str,
    shape: SliceShape,
    best: tuple[str, Resources, Resources] | None,
    pinned: bool,
) -> str:
    """Reason when eligible chips exist but none has room.

    Args:
        common_word: The chip type.
        shape: The resolved request shape.
        best: ``(chip id, totals, usage)`` of the closest chip, or None when
            every eligible chip is full.
        pinned: True when the request is pinned to that one chip.

    Returns:
        The reason.
    """
    what = shape_text(shape)
    if pinned and best is not None:
        chip_id, total, used = best
        return f"pinned chip {chip_id} has no room for {what}: {free_text(total, used)}"
    head = (
        f"no healthy {common_word} chip is empty for a whole card of {shape.memory} MB"
        if shape.whole_card
        else f"no healthy {common_word} chip has room for {what}"
    )
    if best is None:
        return f"{head} (all eligible chips are full)"
    chip_id, total, used = best
    return f"{head} (best: {chip_id} with {free_text(total, used)})"


def quota_exhausted(
    queue: str, common_word: str, unit: str, used: int, limit: int, need: int
) -> str:
    """Reason when the queue's quota for the chip type has no room.

    Args:
        queue: The queue.
        common_word: The chip type.
        unit: ``MB`` or ``slices``.
        used: Quota in use (running and promised).
        limit: The quota limit.
        need: What the request needs.

    Returns:
        E.g. ``queue ci quota: 20480 of 20480 MB of Ascend310P in use (needs 6144)``.
    """
    return (
        f"queue {queue} quota: {used} of {limit} {unit} of {common_word} in use "
        f"(request needs {need})"
    )


def freeing_chip(chip_id: str, node: str) -> str:
    """Reason for a request that will fit once capacity being freed is free."""
    return f"waiting for capacity being freed on chip {chip_id} (node {node})"


def freeing_quota(queue: str, common_word: str, chip_id: str) -> str:
    """Reason for a request that will fit once its queue's quota is freed."""
    return (
        f"waiting for quota being freed in queue {queue} for {common_word} "
        f"(room reserved on chip {chip_id})"
    )


def preemption_note(
    policy_allows: bool,
    request_allows: bool,
    priority: int,
    never_preempts: bool = False,
) -> str:
    """Why preemption did not help, appended to a capacity or quota reason."""
    if not policy_allows:
        return "preemption is off"
    if not request_allows:
        return "the request does not allow preemption"
    if never_preempts:
        return "its PriorityClass has preemptionPolicy: Never"
    return (
        f"no set of preemptable running slices with priority below {priority} "
        "frees enough on one chip"
    )


def unguaranteed(node: str, hazards: list[str]) -> str:
    """Say what is not guaranteed on a node where the scheduler picks the chip.

    Args:
        node: The node the pod is steered to.
        hazards: One phrase per chip the scheduler may pick that breaks a
            promise, e.g. ``chip 7 is unhealthy``.

    Returns:
        E.g. ``not guaranteed: Volcano picks the chip on node n1 and may pick
        chip 7, which is unhealthy``.
    """
    return (
        f"not guaranteed: Volcano picks the chip on node {node} and may pick "
        + "; ".join(hazards)
    )


def hazard(chip_id: str, why: str) -> str:
    """One chip the scheduler may pick, and the promise it breaks."""
    return f"chip {chip_id}, which {why}"
