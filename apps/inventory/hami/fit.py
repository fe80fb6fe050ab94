"""Which template HAMi gives a memory request (``trimMemory``, facts section 4).

HAMi and Volcano sort a chip type's templates by memory and hand out the
first one that is large enough; a request larger than every template takes
a whole card, and one larger than memoryCapacity is rejected.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from .deviceconfig import ChipTypeSpec

__all__ = ["FitKind", "FitResult", "fit_template"]


class FitKind(StrEnum):
    """How a memory request is served."""

    TEMPLATE = "template"
    WHOLE_CARD = "whole_card"
    INVALID = "invalid"


@dataclass(frozen=True)
class FitResult:
    """The outcome of fitting one memory request to a chip type.

    Attributes:
        kind: Template, whole card or invalid.
        template: The template's name (TEMPLATE only).
        memory: MB booked on the chip: the template's memory, memoryAllocatable
            for a whole card, 0 when invalid.
        reason: Human-readable explanation.
    """

    kind: FitKind
    template: str | None
    memory: int
    reason: str


def fit_template(chip_type: ChipTypeSpec, memory: int | None) -> FitResult:
    """Map a ``<resourceMemoryName>`` request to what HAMi books.

    Args:
        chip_type: The chip type requested.
        memory: The memory request in MB; None when the pod asks for no
            memory (a whole card).

    Returns:
        The smallest template whose memory is at least the request (ties in
        file order); else a whole card if the request is at most
        memoryCapacity; else INVALID.
    """
    word = chip_type.common_word
    whole = chip_type.memory_allocatable
    if memory is None:
        return FitResult(
            FitKind.WHOLE_CARD,
            None,
            whole,
            f"{word}: no memory requested, whole card ({whole} MB)",
        )
    if memory < 0:
        return FitResult(FitKind.INVALID, None, 0, f"{word}: {memory} MB is negative")
    # sorted() is stable, so equal memories keep their file order.
    for template in sorted(chip_type.templates, key=lambda t: t.memory):
        if memory <= template.memory:
            return FitResult(
                FitKind.TEMPLATE,
                template.name,
                template.memory,
                f"{word}: {memory} MB fits template {template.name} "
                f"({template.memory} MB)",
            )
    if memory <= chip_type.memory_capacity:
        if chip_type.templates:
            largest = max(chip_type.templates, key=lambda t: t.memory)
            why = (
                f"more than the largest template ({largest.name}, {largest.memory} MB)"
            )
        else:
            why = "asked of a chip type without templates"
        return FitResult(
            FitKind.WHOLE_CARD,
            None,
            whole,
            f"{word}: {memory} MB is {why}, whole card ({whole} MB)",
        )
    return FitResult(
        FitKind.INVALID,
        None,
        0,
        f"{word}: {memory} MB is more than memoryCapacity "
        f"{chip_type.memory_capacity} MB",
    )
