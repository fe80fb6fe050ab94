"""Human-readable reasons for requests left waiting. Pure string formatting.

Each is a :class:`~apps.inventory.hami.messages.Message` (made with ``N_``):
its English text, with the template and values to show it in the reader's
language where it is read (``Request.reason_message``, apps.scheduling.texts).
Chip ids, node, queue and chip type names and numbers are values.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from apps.inventory.hami.messages import N_

from .fit import Resources
from .types import SliceShape


def listed(first: str, then: str) -> str:
    """Two items of a list: ``a, b``."""
    return N_("%(first)s, %(then)s", first=first, then=then)


def then_also(first: str, then: str) -> str:
    """Two clauses: ``a; b``."""
    return N_("%(first)s; %(then)s", first=first, then=then)


def joined(parts: Sequence[str], pair: Callable[[str, str], str] = listed) -> str:
    """``parts`` joined two by two with ``pair`` (:func:`listed`, :func:`then_also`)."""
    if not parts:
        return ""
    text = parts[-1]
    for part in reversed(parts[:-1]):
        text = pair(part, text)
    return text


def shape_text(shape: SliceShape) -> str:
    """Describe a shape, e.g. ``vir02 (6144 MB, 2 AICore, 2 AICPU)``.

    Args:
        shape: The resolved request shape.

    Returns:
        The description.
    """
    if shape.whole_card:
        return N_("a whole card (%(memory)s MB)", memory=shape.memory)
    return N_(
        "%(template)s (%(memory)s MB, %(ai_core)s AICore, %(ai_cpu)s AICPU)",
        template=shape.template,
        memory=shape.memory,
        ai_core=shape.ai_core,
        ai_cpu=shape.ai_cpu,
    )


def free_text(total: Resources, used: Resources) -> str:
    """Describe what is free on a chip.

    Args:
        total: The chip's totals.
        used: Its usage (running and promised).

    Returns:
        E.g. ``3000 MB, 2 slots, 4 AICore, 3 AICPU free``.
    """
    free = Resources(*(max(0, t - u) for t, u in zip(total, used, strict=True)))
    slots = (
        N_("%(count)s slot", count=free.slots)
        if free.slots == 1
        else N_("%(count)s slots", count=free.slots)
    )
    return N_(
        "%(memory)s MB, %(slots)s, %(ai_core)s AICore, %(ai_cpu)s AICPU free",
        memory=free.memory,
        slots=slots,
        ai_core=free.ai_core,
        ai_cpu=free.ai_cpu,
    )


def invalid(detail: str) -> str:
    """Reason for a request that can never be served."""
    return N_("invalid: %(detail)s", detail=detail)


def unknown_chip_type(common_word: str) -> str:
    """Reason for a request naming a chip type without rules."""
    return invalid(
        N_("no chip type %(chip_type)s in the device config", chip_type=common_word)
    )


def pinned_unavailable(chip_id: str, why: str) -> str:
    """Reason for a request pinned to a chip it cannot use."""
    return N_("pinned chip %(chip)s %(why)s", chip=chip_id, why=why)


def no_eligible_chip(
    common_word: str, cordoned: int, unhealthy: int, excluded: int
) -> str:
    """Reason when no chip of the type may be used at all."""
    parts = [
        text
        for n, text in (
            (cordoned, N_("%(count)s cordoned", count=cordoned)),
            (unhealthy, N_("%(count)s unhealthy", count=unhealthy)),
            (excluded, N_("%(count)s excluded", count=excluded)),
        )
        if n
    ]
    if not parts:
        return N_("no healthy, schedulable %(chip_type)s chip", chip_type=common_word)
    return N_(
        "no healthy, schedulable %(chip_type)s chip (%(counts)s)",
        chip_type=common_word,
        counts=joined(parts),
    )


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
        return N_(
            "pinned chip %(chip)s has no room for %(shape)s: %(free)s",
            chip=chip_id,
            shape=what,
            free=free_text(total, used),
        )
    head = (
        N_(
            "no healthy %(chip_type)s chip is empty for a whole card of %(memory)s MB",
            chip_type=common_word,
            memory=shape.memory,
        )
        if shape.whole_card
        else N_(
            "no healthy %(chip_type)s chip has room for %(shape)s",
            chip_type=common_word,
            shape=what,
        )
    )
    if best is None:
        return N_("%(head)s (all eligible chips are full)", head=head)
    chip_id, total, used = best
    return N_(
        "%(head)s (best: %(chip)s with %(free)s)",
        head=head,
        chip=chip_id,
        free=free_text(total, used),
    )


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
    return N_(
        "queue %(queue)s quota: %(used)s of %(limit)s %(unit)s of %(chip_type)s "
        "in use (request needs %(need)s)",
        queue=queue,
        used=used,
        limit=limit,
        unit=N_("slices") if unit == "slices" else unit,
        chip_type=common_word,
        need=need,
    )


def freeing_chip(chip_id: str, node: str) -> str:
    """Reason for a request that will fit once capacity being freed is free."""
    return N_(
        "waiting for capacity being freed on chip %(chip)s (node %(node)s)",
        chip=chip_id,
        node=node,
    )


def freeing_quota(queue: str, common_word: str, chip_id: str) -> str:
    """Reason for a request that will fit once its queue's quota is freed."""
    return N_(
        "waiting for quota being freed in queue %(queue)s for %(chip_type)s "
        "(room reserved on chip %(chip)s)",
        queue=queue,
        chip_type=common_word,
        chip=chip_id,
    )


def with_note(reason: str, note: str) -> str:
    """A capacity or quota reason followed by why preemption did not help."""
    return N_("%(reason)s; %(note)s", reason=reason, note=note)


def preemption_note(
    policy_allows: bool,
    request_allows: bool,
    priority: int,
    never_preempts: bool = False,
) -> str:
    """Why preemption did not help, appended to a capacity or quota reason."""
    if not policy_allows:
        return N_("preemption is off")
    if not request_allows:
        return N_("the request does not allow preemption")
    if never_preempts:
        return N_("its PriorityClass has preemptionPolicy: Never")
    return N_(
        "no set of preemptable running slices with priority below %(priority)s "
        "frees enough on one chip",
        priority=priority,
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
    return N_(
        "not guaranteed: Volcano picks the chip on node %(node)s and may pick %(hazards)s",
        node=node,
        hazards=joined(hazards, then_also),
    )


def hazard(chip_id: str, why: str) -> str:
    """One chip the scheduler may pick, and the promise it breaks."""
    return N_("chip %(chip)s, which %(why)s", chip=chip_id, why=why)
