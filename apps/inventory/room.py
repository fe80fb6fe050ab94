"""Room on chips, measured against every template (pure: no database, no clock).

"Has room" used to mean "a free slot and a byte of free memory", and
fragmentation was measured against the smallest template only: a chip with
23 MB free and all its AICPU taken showed as having room, and a cluster with
16 GiB free in 4 GiB pieces looked unfragmented while a 12 GiB pod waited.
Here room is always *room for a template*, in the four dimensions the
allocator checks (slot, memory, AICore, AICPU; see the facts file, section 4).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from apps.inventory.hami.deviceconfig import TemplateSpec


@dataclass(frozen=True, slots=True)
class ChipLoad:
    """One chip's totals and usage. A total of 0 AICPU means "not reported"."""

    common_word: str
    memory: int
    memory_used: int
    slots: int
    slots_used: int
    aicore: int
    aicore_used: int
    aicpu: int
    aicpu_used: int
    eligible: bool = True  # healthy and not cordoned


def slices_that_fit(chip: ChipLoad, template: TemplateSpec) -> int:
    """How many more slices of ``template`` the chip takes at once (0: none).

    Every dimension limits: free slots, free memory, and free AICore and AICPU
    where the chip reports them and the template books them.
    """
    if not chip.eligible or template.memory <= 0:
        return 0
    limits = [
        chip.slots - chip.slots_used,
        (chip.memory - chip.memory_used) // template.memory,
    ]
    if chip.aicore and template.ai_core:
        limits.append((chip.aicore - chip.aicore_used) // template.ai_core)
    if chip.aicpu and template.ai_cpu:
        limits.append((chip.aicpu - chip.aicpu_used) // template.ai_cpu)
    return max(0, min(limits))


def fitting_templates(
    chip: ChipLoad, templates: Sequence[TemplateSpec]
) -> list[TemplateSpec]:
    """The templates of which one more slice fits on the chip, smallest first."""
    fitting = [t for t in templates if slices_that_fit(chip, t) > 0]
    return sorted(fitting, key=lambda t: (t.memory, t.name))


@dataclass(slots=True)
class TemplateRoom:
    """Room for one template over all chips of its type."""

    name: str
    memory: int
    ai_core: int | None
    ai_cpu: int | None
    #: Chips on which at least one more slice of this template fits.
    chips_with_room: int = 0
    #: Slices of this template that fit at once, over all chips.
    slices_that_fit: int = 0
    #: Free memory left over once as many of these slices as fit are placed:
    #: memory no slice of this size can use.
    stranded_memory: int = 0


@dataclass(slots=True)
class TypeRoom:
    """Room and fragmentation of one chip type."""

    common_word: str
    chips: int = 0
    eligible_chips: int = 0
    free_memory: int = 0
    #: The largest template of which one slice still fits somewhere (None: none).
    largest_template: str | None = None
    largest_template_memory: int | None = None
    templates: list[TemplateRoom] = field(default_factory=list)
    # Measured against the smallest template (kept for existing API callers).
    smallest_template_memory: int | None = None
    stranded_memory: int = 0
    stranded_chips: int = 0


def type_room(
    common_word: str, templates: Iterable[TemplateSpec], chips: Iterable[ChipLoad]
) -> TypeRoom:
    """Room of every template of one chip type over its chips.

    Only eligible chips (healthy, not cordoned) count: the allocator never
    places on the others, so their free memory is neither usable nor stranded.
    """
    return type_room_counted(common_word, templates, ((chip, 1) for chip in chips))


def type_room_counted(
    common_word: str,
    templates: Iterable[TemplateSpec],
    counted: Iterable[tuple[ChipLoad, int]],
) -> TypeRoom:
    """:func:`type_room` over ``(load, n)`` pairs: ``n`` chips with that same load.

    Every figure is a sum over chips, so identical chips are counted once and
    weighted: the database can group 80,000 chips into a handful of distinct
    loads, and the answer is the same as over the chips one by one.
    """
    templates = sorted(templates, key=lambda t: (t.memory, t.name))
    room = TypeRoom(
        common_word=common_word,
        templates=[
            TemplateRoom(t.name, t.memory, t.ai_core, t.ai_cpu) for t in templates
        ],
        smallest_template_memory=templates[0].memory if templates else None,
    )
    for chip, n in counted:
        room.chips += n
        if not chip.eligible:
            continue
        room.eligible_chips += n
        free = max(0, chip.memory - chip.memory_used)
        room.free_memory += free * n
        for template, entry in zip(templates, room.templates, strict=True):
            fit = slices_that_fit(chip, template)
            entry.slices_that_fit += fit * n
            entry.chips_with_room += n if fit else 0
            entry.stranded_memory += (free - fit * template.memory) * n
        if free and templates and slices_that_fit(chip, templates[0]) == 0:
            room.stranded_memory += free * n
            room.stranded_chips += n
    fitting = [e for e in room.templates if e.chips_with_room]
    if fitting:
        largest = max(fitting, key=lambda e: (e.memory, e.name))
        room.largest_template = largest.name
        room.largest_template_memory = largest.memory
    return room
