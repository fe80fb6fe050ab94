"""Per-chip fit in four dimensions: memory, slots, AICore and AICPU.

HAMi accounts only slots and memory in template mode; the hardware also limits
AICore and AICPU, so the allocator checks all four (see the facts file, section 4).
"""

from __future__ import annotations

from typing import NamedTuple

from .types import SliceShape


class Resources(NamedTuple):
    """A resource vector of one chip: memory (MB), slots, AICore, AICPU."""

    memory: int
    slots: int
    ai_core: int
    ai_cpu: int


ZERO = Resources(0, 0, 0, 0)


def booking(shape: SliceShape, total: Resources) -> Resources:
    """Return what a shape books on a chip with the given totals.

    Args:
        shape: The resolved request shape.
        total: The chip's totals.

    Returns:
        One slot and the template's memory, AICore and AICPU; a whole card
        books the chip's full AICore and AICPU instead.
    """
    if shape.whole_card:
        return Resources(shape.memory, 1, total.ai_core, total.ai_cpu)
    return Resources(shape.memory, 1, shape.ai_core, shape.ai_cpu)


def shortfall(total: Resources, used: Resources, shape: SliceShape) -> Resources:
    """Return how much usage must be removed from a chip before the shape fits.

    Args:
        total: The chip's totals.
        used: The chip's usage.
        shape: The resolved request shape.

    Returns:
        Per dimension, the amount to free (0 where the shape already fits).
        A whole card needs the chip empty, so its shortfall covers all usage.
    """
    book = booking(shape, total)
    need = [max(0, u + b - t) for u, b, t in zip(used, book, total, strict=True)]
    if shape.whole_card:
        need = [max(n, u) for n, u in zip(need, used, strict=True)]
    return Resources(*need)


def fits(total: Resources, used: Resources, shape: SliceShape) -> bool:
    """Tell whether a shape fits a chip in all four dimensions.

    Args:
        total: The chip's totals.
        used: The chip's usage.
        shape: The resolved request shape.

    Returns:
        True when memory, a slot, AICore and AICPU are all free (and, for a
        whole card, the chip is empty).
    """
    # ``template is None`` is ``shape.whole_card`` without the property call:
    # this runs for every chip the searches look at.
    if shape.template is None:
        return used == ZERO and total.slots >= 1 and total.memory >= shape.memory
    return (
        total.slots - used.slots >= 1
        and total.memory - used.memory >= shape.memory
        and total.ai_core - used.ai_core >= shape.ai_core
        and total.ai_cpu - used.ai_cpu >= shape.ai_cpu
    )


def scheduler_fits(total: Resources, used: Resources, shape: SliceShape) -> bool:
    """Tell whether Volcano's device fit would take the shape on a chip.

    Volcano (deviceshare) counts type, a free slot, memory and AICore, never
    AICPU and never health (docs/scheduler-behaviour.md, "Choosing the chip").

    Args:
        total: The chip's totals.
        used: The chip's usage.
        shape: The resolved request shape.

    Returns:
        True when the shape fits with AICPU left out of the count.
    """
    return fits(
        total._replace(ai_cpu=0),
        used._replace(ai_cpu=0),
        SliceShape(shape.template, shape.memory, shape.ai_core, 0),
    )
