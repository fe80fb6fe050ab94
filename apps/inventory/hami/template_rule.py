"""The template rule: which template a vNPU request becomes. The only implementation.

HAMi, Volcano and the device plugin load a chip type's templates and sort them
by memory with Go's ``sort.Slice`` (:mod:`.gosort`: file order for equal
memories up to 12 templates, Go's own deterministic order beyond). Then
(``trimMemory`` in HAMi's ``pkg/device/ascend/device.go`` and Volcano's
``devices/ascend/hami/device_info.go``):

- a request of ``m`` MB becomes the first template with ``m <= memory``;
- a larger one, up to ``memoryCapacity``, becomes a whole card, booking
  ``memoryAllocatable``;
- a whole card is then trimmed once more when the vNPU is created: if a template
  has at least ``memoryAllocatable`` MB (validation allows only equal), the
  "whole card" is a slice of that template;
- no ``-memory`` at all is a whole card. Volcano also reads ``-memory: 0`` as a
  whole card (HAMi: the smallest template), and Volcano does not refuse a
  request over ``memoryCapacity``: it books 0 MB and creates the smallest
  template (HAMi: refused).
- Volcano stores the ``-memory`` limit as an ``int32`` (``ExtractResourceRequest``
  in ``pkg/scheduler/api/devices/util.go``: ``int32(memnums)``), so a value
  past 2147483647 wraps: 17179869184 (2^34) becomes 0, a whole card, and
  4294970368 (2^32 + 3072) becomes 3072, a vir01. A value that wraps below 0
  is left negative by Volcano, which then books negative memory; the portal
  calls it invalid.

The allocator (``apps.scheduling.allocator.shapes``), the fit API and command,
the publish what-if and simcluster all call :func:`fit_template`, so the portal
books the template the scheduler hands out. It is a rule of the HAMi format, so
it lives with the format, below the inventory and scheduling that both read it;
like the rest of this package it imports only the stdlib.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from .gosort import GO_INSERTION_SORT_MAX, go_sort_slice_order
from .messages import N_, Message

__all__ = [
    "GO_INSERTION_SORT_MAX",
    "ChipTypeLike",
    "FitKind",
    "FitResult",
    "Scheduler",
    "TemplateLike",
    "fit_template",
    "shadowed_templates",
    "templates_by_memory",
    "whole_card_fit",
    "whole_card_template",
]


class Scheduler(enum.StrEnum):
    """Which scheduler reads the request: they differ at the edges only."""

    HAMI = "hami"
    VOLCANO = "volcano"


class FitKind(enum.StrEnum):
    """How a memory request is served."""

    TEMPLATE = "template"
    WHOLE_CARD = "whole_card"
    INVALID = "invalid"


@dataclass(frozen=True, slots=True)
class FitResult:
    """The outcome of the template rule for one request.

    Attributes:
        kind: Template, whole card or invalid.
        template: The template's name (TEMPLATE only).
        memory: MB booked on the chip: the template's memory, memoryAllocatable
            for a whole card (or a whole card that became a template), 0 when
            invalid or when Volcano books nothing for an oversized request.
        reason: Human-readable explanation, starting with the chip type (a
            :class:`~.messages.Message`: English, translated where shown).
    """

    kind: FitKind
    template: str | None
    memory: int
    reason: str


class TemplateLike(Protocol):
    """A template as any caller holds it (the allocator's ``TemplateShape``, ``TemplateSpec``)."""

    @property
    def name(self) -> str: ...

    @property
    def memory(self) -> int: ...


class ChipTypeLike(Protocol):
    """A chip type as any caller holds it (``ChipTypeRules``, ``ChipTypeSpec``).

    ``templates`` must be in device-config file order: ties depend on it.
    """

    @property
    def common_word(self) -> str: ...

    @property
    def memory_allocatable(self) -> int: ...

    @property
    def memory_capacity(self) -> int: ...

    @property
    def templates(self) -> Sequence[TemplateLike]: ...


T = TypeVar("T", bound=TemplateLike)


def templates_by_memory(templates: Sequence[T]) -> tuple[T, ...]:
    """Return templates in the order the schedulers try them.

    Args:
        templates: A chip type's templates in device-config file order.

    Returns:
        The templates sorted by memory as Go's ``sort.Slice`` leaves them.
    """
    order = go_sort_slice_order([t.memory for t in templates])
    return tuple(templates[i] for i in order)


def whole_card_template(chip_type: ChipTypeLike) -> TemplateLike | None:
    """Return the template a whole-card request becomes, if any.

    Args:
        chip_type: The chip type.

    Returns:
        The first template (in rule order) with at least ``memoryAllocatable``
        MB, or None when a whole card stays a whole card.
    """
    for t in templates_by_memory(chip_type.templates):
        if chip_type.memory_allocatable <= t.memory:
            return t
    return None


def shadowed_templates(chip_type: ChipTypeLike) -> dict[str, str]:
    """Return the templates no request can get, each with the one it gets instead.

    A request carries only memory, so of templates with equal memory only the
    first in rule order is ever handed out.

    Args:
        chip_type: The chip type.

    Returns:
        ``{shadowed name: name handed out for its memory}``.
    """
    first: dict[int, str] = {}
    shadowed: dict[str, str] = {}
    for t in templates_by_memory(chip_type.templates):
        if t.memory in first:
            shadowed[t.name] = first[t.memory]
        else:
            first[t.memory] = t.name
    return shadowed


def _reason(word: str, detail: str) -> Message:
    """``<chip type>: <detail>``, the form of every reason."""
    return N_("%(chip_type)s: %(detail)s", chip_type=word, detail=detail)


def whole_card_fit(chip_type: ChipTypeLike, why: str) -> FitResult:
    """Return what a whole card of the chip type books, ``why`` leading the reason.

    Args:
        chip_type: The chip type.
        why: Why the request is a whole card, for the reason.

    Returns:
        A whole card booking memoryAllocatable, or the template it becomes.
    """
    word, whole = chip_type.common_word, chip_type.memory_allocatable
    template = whole_card_template(chip_type)
    if template is None:
        return FitResult(
            FitKind.WHOLE_CARD,
            None,
            whole,
            _reason(
                word, N_("%(why)s, whole card (%(whole)d MB)", why=why, whole=whole)
            ),
        )
    return FitResult(
        FitKind.TEMPLATE,
        template.name,
        whole,
        _reason(
            word,
            N_(
                "%(why)s, whole card (%(whole)d MB), which is template %(template)s "
                "(%(memory)d MB is at least memoryAllocatable)",
                why=why,
                whole=whole,
                template=template.name,
                memory=template.memory,
            ),
        ),
    )


def as_int32(value: int) -> int:
    """Go's ``int32(value)`` of an int64: the low 32 bits, two's complement."""
    return (value + 2**31) % 2**32 - 2**31


def _volcano_wrapped(chip_type: ChipTypeLike, memory: int) -> FitResult:
    """The fit of a ``-memory`` that Volcano's int32 wraps (module docstring)."""
    wrapped = as_int32(memory)
    why = N_(
        "%(memory)d MB wraps to %(wrapped)d MB in Volcano's int32",
        memory=memory,
        wrapped=wrapped,
    )
    word = chip_type.common_word
    if wrapped == 0:
        return whole_card_fit(
            chip_type, N_("%(why)s, which asks for a whole card", why=why)
        )
    if wrapped < 0:
        return FitResult(
            FitKind.INVALID,
            None,
            0,
            _reason(word, N_("%(why)s: Volcano would book negative memory", why=why)),
        )
    fit = fit_template(chip_type, wrapped, scheduler=Scheduler.VOLCANO)
    detail = fit.reason.params["detail"] if isinstance(fit.reason, Message) else ""
    reason = _reason(word, N_("%(why)s; %(detail)s", why=why, detail=detail))
    return FitResult(fit.kind, fit.template, fit.memory, reason)


def _beyond_templates(
    chip_type: ChipTypeLike,
    memory: int,
    ordered: Sequence[TemplateLike],
    scheduler: Scheduler,
) -> FitResult:
    """The fit of a request larger than every template: a whole card up to
    ``memoryCapacity``; beyond it INVALID (HAMi) or 0 MB booked (Volcano)."""
    word = chip_type.common_word
    if memory <= chip_type.memory_capacity:
        why = (
            N_(
                "%(memory)d MB is more than the largest template (%(template)s, "
                "%(size)d MB)",
                memory=memory,
                template=ordered[-1].name,
                size=ordered[-1].memory,
            )
            if ordered
            else N_(
                "%(memory)d MB is asked of a chip type without templates",
                memory=memory,
            )
        )
        return whole_card_fit(chip_type, why)
    over = N_(
        "%(memory)d MB is more than memoryCapacity %(capacity)d MB",
        memory=memory,
        capacity=chip_type.memory_capacity,
    )
    if scheduler is Scheduler.HAMI:
        return FitResult(FitKind.INVALID, None, 0, _reason(word, over))
    # Volcano's trimMemory gives 0 MB; the vNPU is then trimMemory(0).
    if ordered:
        return FitResult(
            FitKind.TEMPLATE,
            ordered[0].name,
            0,
            _reason(
                word,
                N_(
                    "%(over)s: Volcano books 0 MB and creates the smallest template "
                    "%(template)s",
                    over=over,
                    template=ordered[0].name,
                ),
            ),
        )
    return FitResult(
        FitKind.WHOLE_CARD,
        None,
        0,
        _reason(
            word, N_("%(over)s: Volcano books 0 MB and gives a whole card", over=over)
        ),
    )


def fit_template(
    chip_type: ChipTypeLike,
    memory: int | None,
    *,
    scheduler: Scheduler = Scheduler.HAMI,
) -> FitResult:
    """Apply the template rule to one ``<resourceMemoryName>`` request.

    Args:
        chip_type: The chip type requested (templates in file order).
        memory: The memory request in MB; None when the pod asks for no
            memory (a whole card).
        scheduler: Whose reading of ``-memory: 0`` and of requests over
            ``memoryCapacity`` applies.

    Returns:
        The template (first in rule order with enough memory); else a whole
        card, or the template a whole card becomes; else INVALID (HAMi) or the
        smallest template booking 0 MB (Volcano).
    """
    word = chip_type.common_word
    if memory is None:
        return whole_card_fit(chip_type, N_("no memory requested"))
    if scheduler is Scheduler.VOLCANO and memory != as_int32(memory):
        return _volcano_wrapped(chip_type, memory)
    if memory < 0:
        return FitResult(
            FitKind.INVALID,
            None,
            0,
            _reason(word, N_("%(memory)d MB is negative", memory=memory)),
        )
    if memory == 0 and scheduler is Scheduler.VOLCANO:
        return whole_card_fit(chip_type, N_("0 MB asks Volcano for a whole card"))
    ordered = templates_by_memory(chip_type.templates)
    for t in ordered:
        if memory <= t.memory:
            return FitResult(
                FitKind.TEMPLATE,
                t.name,
                t.memory,
                _reason(
                    word,
                    N_(
                        "%(memory)d MB fits template %(template)s (%(size)d MB)",
                        memory=memory,
                        template=t.name,
                        size=t.memory,
                    ),
                ),
            )
    return _beyond_templates(chip_type, memory, ordered, scheduler)
