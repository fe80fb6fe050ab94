"""HAMi's request → template rule (``trimMemory`` in pkg/device/ascend/device.go).

Templates are taken by memory ascending; a request of ``m`` MB becomes the first
template with ``m <= template.memory``. Larger requests up to ``memoryCapacity``
become a whole card booking ``memoryAllocatable``. Anything larger is invalid.
"""

from __future__ import annotations

from .errors import InvalidRequest
from .types import ChipTypeRules, SliceShape, TemplateShape


def templates_by_memory(rules: ChipTypeRules) -> tuple[TemplateShape, ...]:
    """Return the chip type's templates in the order HAMi tries them.

    HAMi sorts by memory with an unstable sort; ties are broken by name here so
    the result never depends on the order of the config file.

    Args:
        rules: The chip type.

    Returns:
        The templates, smallest memory first.
    """
    return tuple(sorted(rules.templates, key=lambda t: (t.memory, t.name)))


def whole_card(rules: ChipTypeRules) -> SliceShape:
    """Return the whole-card shape of a chip type.

    Args:
        rules: The chip type.

    Returns:
        A shape with no template that books memoryAllocatable and all AICore
        and AICPU of the chip type (the allocator uses each chip's own totals).
    """
    return SliceShape(None, rules.memory_allocatable, rules.ai_core, rules.ai_cpu)


def all_shapes(rules: ChipTypeRules) -> tuple[SliceShape, ...]:
    """Return every shape a request of this chip type can turn into.

    Args:
        rules: The chip type.

    Returns:
        The template shapes (smallest first), then the whole card.
    """
    shapes = [
        SliceShape(t.name, t.memory, t.ai_core, t.ai_cpu)
        for t in templates_by_memory(rules)
    ]
    shapes.append(whole_card(rules))
    return tuple(shapes)


def resolve_shape(
    rules: ChipTypeRules, *, memory: int | None, template: str | None
) -> SliceShape:
    """Apply HAMi's template rule to one request.

    Args:
        rules: The chip type the request asks for.
        memory: Requested MB; None asks for a whole card.
        template: An explicit template name; when given it wins over ``memory``.

    Returns:
        The shape the request books.

    Raises:
        InvalidRequest: The template is unknown, the memory is negative, or the
            memory is more than ``memoryCapacity``.
    """
    if template is not None:
        for t in rules.templates:
            if t.name == template:
                return SliceShape(t.name, t.memory, t.ai_core, t.ai_cpu)
        known = ", ".join(t.name for t in templates_by_memory(rules)) or "none"
        raise InvalidRequest(
            f"unknown template {template} for {rules.common_word} (known: {known})"
        )
    if memory is None:
        return whole_card(rules)
    if memory < 0:
        raise InvalidRequest(f"negative memory {memory} MB")
    for t in templates_by_memory(rules):
        if memory <= t.memory:
            return SliceShape(t.name, t.memory, t.ai_core, t.ai_cpu)
    if memory <= rules.memory_capacity:
        return whole_card(rules)
    raise InvalidRequest(
        f"{memory} MB is more than memoryCapacity {rules.memory_capacity} "
        f"of {rules.common_word}"
    )
