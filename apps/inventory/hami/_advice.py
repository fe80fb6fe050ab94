"""Warnings about valid device configs: consequences the user should know.

Everything here works on chip types that passed the error checks, so the
numbers are known to be positive integers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol

from . import annotations as keys
from ._issues import Issue
from .catalog import (
    allowed_template_names,
    chip_family,
    hardware_template,
    max_vnpus_per_chip,
    model_template_names,
    template_memory_from_name,
)
from .deviceconfig import ChipTypeSpec, TemplateSpec
from .i18n import _, ngettext

# The template rule lives with the allocator (pure, importable from both).
from .template_rule import (
    GO_INSERTION_SORT_MAX,
    shadowed_templates,
    templates_by_memory,
    whole_card_template,
)

__all__ = [
    "HasMemory",
    "change_warnings",
    "chip_warnings",
    "slots_per_chip",
    "worst_combination",
]

# The over-commit search adds one slice per round; chips hold at most 16
# vNPUs, and more slices than that are already reported, so 64 rounds are
# plenty and keep a mistyped tiny template from making validation slow.
_MAX_SEARCH_SLICES = 64


def _warn(
    field: str, message: str, chip: ChipTypeSpec, template: str | None = None
) -> Issue:
    return Issue(field, message, chip.common_word, template, "warning")


class HasMemory(Protocol):
    """Anything with a ``memory`` attribute: a TemplateSpec, a model row..."""

    @property
    def memory(self) -> int: ...


def _memory_of(template: HasMemory | Mapping[str, Any]) -> int:
    if isinstance(template, Mapping):
        memory: object = template.get("memory")
    else:
        memory = template.memory
    if isinstance(memory, bool) or not isinstance(memory, int):
        raise ValueError(f"template memory must be an integer, got {memory!r}")
    return memory


def slots_per_chip(
    memory_allocatable: int, templates: Iterable[HasMemory | Mapping[str, Any]]
) -> int:
    """Slices per chip as the device plugin computes ``VDeviceCount()``.

    Args:
        memory_allocatable: The chip type's memoryAllocatable (MB).
        templates: Its templates: TemplateSpecs, raw mappings or any object
            with a ``memory`` attribute.

    Returns:
        ``memory_allocatable // smallest template memory``, 1 without templates.

    Raises:
        ValueError: A template memory is not an integer, or the smallest is
            not positive (the Go plugin would divide by zero).
    """
    memories = [_memory_of(template) for template in templates]
    if not memories:
        return 1
    smallest = min(memories)
    if smallest <= 0:
        raise ValueError(f"template memory must be greater than 0, got {smallest}")
    return memory_allocatable // smallest


def worst_combination(
    templates: Sequence[TemplateSpec],
    slots: int,
    memory: int,
    weight: Callable[[TemplateSpec], int],
) -> tuple[int, tuple[int, ...]]:
    """Find the slice mix with the largest total weight HAMi would admit.

    HAMi admits any mix whose slice count and memory fit (facts, section 4).
    This is a small unbounded knapsack solved round by round: round n holds,
    per reachable total weight, the mix of n slices using the least memory.

    Args:
        templates: The templates to mix.
        slots: Slices per chip.
        memory: memoryAllocatable (MB).
        weight: What to maximise, e.g. AICPU per template.

    Returns:
        The total weight and the count of each template (by position); the
        mix with fewest slices wins a tie.
    """
    best: tuple[int, tuple[int, ...]] = (0, (0,) * len(templates))
    layer: dict[int, tuple[int, tuple[int, ...]]] = {0: (0, best[1])}
    for _round in range(min(slots, _MAX_SEARCH_SLICES)):
        next_layer: dict[int, tuple[int, tuple[int, ...]]] = {}
        for total, (used, counts) in layer.items():
            for position, template in enumerate(templates):
                new_used = used + template.memory
                if new_used > memory:
                    continue
                new_total = total + weight(template)
                known = next_layer.get(new_total)
                if known is None or new_used < known[0]:
                    new_counts = tuple(
                        c + (i == position) for i, c in enumerate(counts)
                    )
                    next_layer[new_total] = (new_used, new_counts)
        if not next_layer:
            break
        top = max(next_layer)
        if top > best[0]:
            best = (top, next_layer[top][1])
        layer = next_layer
    return best


def _describe_mix(templates: Sequence[TemplateSpec], counts: Sequence[int]) -> str:
    parts = [f"{n} x {t.name}" for t, n in zip(templates, counts, strict=True) if n]
    return " + ".join(parts)


def _smallest(chip: ChipTypeSpec) -> tuple[int, TemplateSpec] | None:
    if not chip.templates:
        return None
    # The one the template rule tries first (file order breaks ties, up to 12).
    first = templates_by_memory(chip.templates)[0]
    return chip.templates.index(first), first


def _slot_warnings(
    chip: ChipTypeSpec, index: int, previous_slots: int | None
) -> list[Issue]:
    slots = slots_per_chip(chip.memory_allocatable, chip.templates)
    smallest = _smallest(chip)
    if smallest is None:
        field = f"vnpus[{index}].templates"
        text = _("%(chip_type)s: 1 slice per chip (no templates: whole cards only)") % {
            "chip_type": chip.common_word
        }
        name = None
    else:
        position, template = smallest
        field = f"vnpus[{index}].templates[{position}].memory"
        name = template.name
        text = ngettext(
            "%(chip_type)s: %(slots)d slice per chip "
            "(%(memory_allocatable)d // %(memory)d, set by %(template)s)",
            "%(chip_type)s: %(slots)d slices per chip "
            "(%(memory_allocatable)d // %(memory)d, set by %(template)s)",
            slots,
        ) % {
            "chip_type": chip.common_word,
            "slots": slots,
            "memory_allocatable": chip.memory_allocatable,
            "memory": template.memory,
            "template": template.name,
        }
    if previous_slots is not None and previous_slots != slots:
        text += _(
            "; was %(previous)d before this change, nodes advertise the new "
            "count once the device plugin restarts"
        ) % {"previous": previous_slots}
    issues = [_warn(field, text, chip, name)]
    family = chip_family(chip.chip_name, chip.common_word)
    limit = max_vnpus_per_chip(family)
    if limit is not None and slots > limit:
        issues.append(
            _warn(
                field,
                _(
                    "%(chip_type)s: %(slots)d slices per chip is more than the "
                    "%(limit)d vNPUs npu-smi can create on one %(family)s chip; the "
                    "extra slices fail when their container starts"
                )
                % {
                    "chip_type": chip.common_word,
                    "slots": slots,
                    "limit": limit,
                    "family": family,
                },
                chip,
                name,
            )
        )
    return issues


def _overcommit_warnings(chip: ChipTypeSpec, index: int) -> list[Issue]:
    issues = []
    slots = slots_per_chip(chip.memory_allocatable, chip.templates)
    ordered = sorted(chip.templates, key=lambda t: t.memory)
    resources: list[tuple[str, str, int | None, Callable[[TemplateSpec], int]]] = [
        ("aiCore", "AICore", chip.ai_core, lambda t: t.ai_core or 0),
        ("aiCPU", "AICPU", chip.ai_cpu, lambda t: t.ai_cpu or 0),
    ]
    for key, label, capacity, weight in resources:
        if capacity is None or not ordered:
            continue
        total, counts = worst_combination(
            ordered, slots, chip.memory_allocatable, weight
        )
        if total <= capacity:
            continue
        used_slices = sum(counts)
        used_memory = sum(t.memory * n for t, n in zip(ordered, counts, strict=True))
        issues.append(
            _warn(
                f"vnpus[{index}].{key}",
                _(
                    "%(chip_type)s: %(mix)s fit by memory (%(used_memory)d of "
                    "%(memory_allocatable)d MB, %(used_slices)d of %(slots)d slices) "
                    "but use %(total)d %(resource)s, more than the chip's "
                    "%(capacity)d; HAMi does not count %(resource)s, so the runtime "
                    "may fail to create some of these vNPUs"
                )
                % {
                    "chip_type": chip.common_word,
                    "mix": _describe_mix(ordered, counts),
                    "used_memory": used_memory,
                    "memory_allocatable": chip.memory_allocatable,
                    "used_slices": used_slices,
                    "slots": slots,
                    "total": total,
                    "resource": label,
                    "capacity": capacity,
                },
                chip,
            )
        )
    return issues


def _rule_warnings(chip: ChipTypeSpec, index: int) -> list[Issue]:
    """Where the template rule surprises: equal memories, a whole card that is a slice."""
    issues = []
    position = {t.name: i for i, t in enumerate(chip.templates)}
    ordered = templates_by_memory(chip.templates)
    shadowed = shadowed_templates(chip)
    for memory in sorted({t.memory for t in chip.templates}):
        tied = [t.name for t in ordered if t.memory == memory]
        if len(tied) < 2:
            continue
        winner, losers = tied[0], tied[1:]
        if len(chip.templates) > GO_INSERTION_SORT_MAX:
            why = _(
                "with more than %(max)d templates Go's sort does not keep file "
                "order, and it puts %(winner)s first"
            ) % {"max": GO_INSERTION_SORT_MAX, "winner": winner}
        else:
            why = _("%(winner)s comes first in the file") % {"winner": winner}
        issues.append(
            _warn(
                f"vnpus[{index}].templates[{position[losers[0]]}].memory",
                _(
                    "%(chip_type)s: templates %(tied)s all have %(memory)d MB; a "
                    "request carries only memory, so HAMi and Volcano always create "
                    "%(winner)s (%(why)s) and never %(losers)s"
                )
                % {
                    "chip_type": chip.common_word,
                    "tied": ", ".join(tied),
                    "memory": memory,
                    "winner": winner,
                    "why": why,
                    "losers": ", ".join(losers),
                },
                chip,
                losers[0],
            )
        )
    full = whole_card_template(chip)
    if full is not None and full.name not in shadowed:
        issues.append(
            _warn(
                f"vnpus[{index}].templates[{position[full.name]}].memory",
                _(
                    "%(chip_type)s: template %(template)s has memoryAllocatable's "
                    "%(memory_allocatable)d MB, so a whole-card request (no -memory; "
                    "with Volcano also -memory: 0) becomes a %(template)s slice "
                    "instead of a whole card"
                )
                % {
                    "chip_type": chip.common_word,
                    "template": full.name,
                    "memory_allocatable": chip.memory_allocatable,
                },
                chip,
                full.name,
            )
        )
    return issues


def _template_warnings(chip: ChipTypeSpec, index: int) -> list[Issue]:
    issues = []
    family = chip_family(chip.chip_name, chip.common_word)
    model_names = model_template_names(chip.chip_name)
    for position, template in enumerate(chip.templates):
        path = f"vnpus[{index}].templates[{position}]"
        who = {"chip_type": chip.common_word, "template": template.name}
        if (
            model_names is not None
            and template.name in allowed_template_names(family)
            and template.name not in model_names
        ):
            issues.append(
                _warn(
                    f"{path}.name",
                    _(
                        "%(chip_type)s template %(template)s: not one of "
                        "MindCluster's %(chip_name)s templates (%(names)s); the chip "
                        "may refuse to create it"
                    )
                    % {
                        **who,
                        "chip_name": chip.chip_name,
                        "names": ", ".join(sorted(model_names)),
                    },
                    chip,
                    template.name,
                )
            )
        promised = template_memory_from_name(template.name)
        if promised is not None and promised != template.memory:
            issues.append(
                _warn(
                    f"{path}.memory",
                    _(
                        "%(chip_type)s template %(template)s: memory %(memory)d MB "
                        "differs from the %(gb)d GB (%(promised)d MB) the template "
                        "name promises"
                    )
                    % {
                        **who,
                        "memory": template.memory,
                        "gb": promised // 1024,
                        "promised": promised,
                    },
                    chip,
                    template.name,
                )
            )
        hardware = hardware_template(family, template.name)
        if hardware is None:
            continue
        for key, label, configured, real in (
            ("aiCore", "AICores", template.ai_core, hardware.ai_core),
            ("aiCPU", "AICPUs", template.ai_cpu, hardware.ai_cpu),
        ):
            if configured is not None and configured != real:
                issues.append(
                    _warn(
                        f"{path}.{key}",
                        _(
                            "%(chip_type)s template %(template)s: %(key)s "
                            "%(configured)d differs from the %(real)d %(resource)s "
                            "the hardware gives this template"
                        )
                        % {
                            **who,
                            "key": key,
                            "configured": configured,
                            "real": real,
                            "resource": label,
                        },
                        chip,
                        template.name,
                    )
                )
    return issues


def chip_warnings(
    chip: ChipTypeSpec, index: int, previous_slots: int | None
) -> list[Issue]:
    """All warnings about one valid chip type.

    Args:
        chip: The chip type (it passed the error checks).
        index: Its position in ``vnpus``.
        previous_slots: Its slices per chip before the edit, if known.

    Returns:
        The warnings, slot count first.
    """
    issues = _slot_warnings(chip, index, previous_slots)
    issues += _overcommit_warnings(chip, index)
    issues += _template_warnings(chip, index)
    issues += _rule_warnings(chip, index)
    if chip.resource_core_name is not None and (
        chip.resource_core_name != f"{chip.resource_name}-core"
    ):
        issues.append(
            _warn(
                f"vnpus[{index}].resourceCoreName",
                _(
                    "%(chip_type)s: Volcano ignores resourceCoreName %(configured)s "
                    "and uses %(used)s"
                )
                % {
                    "chip_type": chip.common_word,
                    "configured": chip.resource_core_name,
                    "used": f"{chip.resource_name}-core",
                },
                chip,
            )
        )
    return issues


def _orphans(common_word: str, resource_name: Any, resources: set[Any]) -> str:
    """Describe what nodes and pods still carry under an old commonWord."""
    text = _(
        "node annotations %(register)s and %(handshake)s, and pod annotations "
        "%(allocated)s, %(to_allocate)s and %(runtime)s are orphaned"
    ) % {
        "register": keys.register_key(common_word),
        "handshake": keys.handshake_key(common_word),
        "allocated": keys.allocated_key(common_word),
        "to_allocate": keys.to_allocate_key(common_word),
        "runtime": keys.runtime_key(common_word),
    }
    if isinstance(resource_name, str) and resource_name not in resources:
        text += _(
            "; pods requesting %(resource)s can no longer be scheduled and "
            "nodes keep advertising it until the device plugin restarts"
        ) % {"resource": resource_name}
    return text


def _by_common_word(
    raw_configs: Sequence[Any],
) -> dict[str, tuple[int, Mapping[str, Any]]]:
    found: dict[str, tuple[int, Mapping[str, Any]]] = {}
    for index, raw in enumerate(raw_configs):
        if isinstance(raw, Mapping) and isinstance(raw.get("commonWord"), str):
            found.setdefault(raw["commonWord"], (index, raw))
    return found


def _changed_keys(
    common_word: str,
    index: int,
    old: Mapping[str, Any],
    new: Mapping[str, Any],
    chip_names: set[Any],
) -> list[Issue]:
    issues = []
    before_chip = old.get("chipName")
    if isinstance(before_chip, str) and before_chip not in chip_names:
        issues.append(
            Issue(
                f"vnpus[{index}].chipName",
                _(
                    "%(chip_type)s: chipName changes from %(before)s to %(after)s; "
                    "the device plugin on nodes whose chips report %(before)s stops "
                    'with "can not find vnpu config"'
                )
                % {
                    "chip_type": common_word,
                    "before": before_chip,
                    "after": new.get("chipName"),
                },
                common_word,
                None,
                "warning",
            )
        )
    for key in ("resourceName", "resourceMemoryName", "resourceCoreName"):
        before, after = old.get(key), new.get(key)
        if isinstance(before, str) and before != after:
            issues.append(
                Issue(
                    f"vnpus[{index}].{key}",
                    _(
                        "%(chip_type)s: %(key)s changes from %(before)s to %(after)s; "
                        "pods requesting %(before)s will no longer be scheduled"
                    )
                    % {
                        "chip_type": common_word,
                        "key": key,
                        "before": before,
                        "after": after,
                    },
                    common_word,
                    None,
                    "warning",
                )
            )
    return issues


def change_warnings(raw_configs: Sequence[Any], previous: Sequence[Any]) -> list[Issue]:
    """Warnings about chip types renamed, removed or re-keyed by an edit.

    The commonWord is part of every annotation key and resource name, so
    renaming or removing one orphans what nodes and pods carry (facts,
    section 0).

    Args:
        raw_configs: The new chip types (plain values).
        previous: The chip types before the edit.

    Returns:
        The warnings.
    """
    issues: list[Issue] = []
    current = _by_common_word(raw_configs)
    before = _by_common_word(previous)
    chip_names = {
        raw.get("chipName") for raw in raw_configs if isinstance(raw, Mapping)
    }
    resources = {
        raw.get("resourceName") for raw in raw_configs if isinstance(raw, Mapping)
    }
    for common_word, (_index, old) in before.items():
        if common_word in current:
            index, new = current[common_word]
            issues += _changed_keys(common_word, index, old, new, chip_names)
            continue
        old_chip = old.get("chipName")
        renamed = [
            (index, word)
            for word, (index, new) in current.items()
            if word not in before
            and isinstance(old_chip, str)
            and new.get("chipName") == old_chip
        ]
        orphans = _orphans(common_word, old.get("resourceName"), resources)
        if renamed:
            index, word = renamed[0]
            issues.append(
                Issue(
                    f"vnpus[{index}].commonWord",
                    _(
                        "%(chip_type)s is renamed to %(new)s (chipName %(chip_name)s): "
                        "existing %(orphans)s"
                    )
                    % {
                        "chip_type": common_word,
                        "new": word,
                        "chip_name": old_chip,
                        "orphans": orphans,
                    },
                    word,
                    None,
                    "warning",
                )
            )
        else:
            issues.append(
                Issue(
                    "vnpus",
                    _("%(chip_type)s is removed: existing %(orphans)s")
                    % {"chip_type": common_word, "orphans": orphans},
                    common_word,
                    None,
                    "warning",
                )
            )
    return issues
