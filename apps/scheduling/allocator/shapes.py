"""The shapes a request books: the HAMi template rule over the allocator's types.

The rule itself (which template a memory request becomes) is the HAMi
format's, in :mod:`apps.inventory.hami.template_rule`; this turns its answer
into the :class:`SliceShape` the allocator books, AICore and AICPU included.
The format package is pure Python like this one (its own test keeps it so).
"""

from __future__ import annotations

from apps.inventory.hami.template_rule import (
    FitKind,
    fit_template,
    shadowed_templates,
    templates_by_memory,
    whole_card_fit,
)

from .errors import InvalidRequest
from .types import ChipTypeRules, SliceShape, TemplateShape

__all__ = ["all_shapes", "resolve_shape", "whole_card"]


def _shape(rules: ChipTypeRules, name: str, memory: int) -> SliceShape:
    t = next(t for t in rules.templates if t.name == name)
    return SliceShape(t.name, memory, t.ai_core, t.ai_cpu)


def whole_card(rules: ChipTypeRules) -> SliceShape:
    """Return what a whole-card request of a chip type books.

    Args:
        rules: The chip type.

    Returns:
        A shape with no template that books memoryAllocatable and all AICore
        and AICPU of the chip type (the allocator uses each chip's own
        totals); or, when a template has memoryAllocatable MB, that template.
    """
    fit = whole_card_fit(rules, "whole card")
    if fit.template is not None:
        return _shape(rules, fit.template, fit.memory)
    return SliceShape(None, rules.memory_allocatable, rules.ai_core, rules.ai_cpu)


def all_shapes(rules: ChipTypeRules) -> tuple[SliceShape, ...]:
    """Return every shape a request of this chip type can turn into.

    Args:
        rules: The chip type.

    Returns:
        The template shapes that can be handed out (rule order), then the
        whole card unless it is one of them.
    """
    shadowed = shadowed_templates(rules)
    shapes = [
        SliceShape(t.name, t.memory, t.ai_core, t.ai_cpu)
        for t in templates_by_memory(rules.templates)
        if t.name not in shadowed
    ]
    whole = whole_card(rules)
    if whole not in shapes:
        shapes.append(whole)
    return tuple(shapes)


def resolve_shape(
    rules: ChipTypeRules, *, memory: int | None, template: str | None
) -> SliceShape:
    """Apply the template rule to one portal request.

    The portal's pod asks for the chosen template's memory (or no memory for
    a whole card), and HAMi and Volcano read that alike, so this uses HAMi's
    reading of the user's request.

    Args:
        rules: The chip type the request asks for.
        memory: Requested MB; None asks for a whole card.
        template: An explicit template name; when given it wins over ``memory``.

    Returns:
        The shape the request books.

    Raises:
        InvalidRequest: The template is unknown or can never be handed out
            (another template has the same memory and comes first), the
            memory is negative, or the memory is more than ``memoryCapacity``.
    """
    if template is not None:
        named: TemplateShape | None = next(
            (t for t in rules.templates if t.name == template), None
        )
        if named is None:
            known = (
                ", ".join(t.name for t in templates_by_memory(rules.templates))
                or "none"
            )
            raise InvalidRequest(
                f"unknown template {template} for {rules.common_word} (known: {known})"
            )
        winner = shadowed_templates(rules).get(template)
        if winner is not None:
            raise InvalidRequest(
                f"template {template} of {rules.common_word} is never handed out: "
                f"{winner} has the same memory ({named.memory} MB) and comes first, "
                f"so the scheduler creates {winner}; ask for {winner}"
            )
        memory = named.memory
    fit = fit_template(rules, memory)
    if fit.kind is FitKind.INVALID:
        raise InvalidRequest(fit.reason)
    if fit.template is not None:
        return _shape(rules, fit.template, fit.memory)
    return SliceShape(None, fit.memory, rules.ai_core, rules.ai_cpu)
