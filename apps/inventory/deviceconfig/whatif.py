"""What publishing the portal's edited chip types would do, before anyone publishes.

Compares the portal's current (edited, not yet published) chip types and
templates with the baseline version, the config the cluster runs, and answers
from the database only:

- per chip type: slots per chip (the device plugin's ``VDeviceCount()``:
  memoryAllocatable // smallest template) before and after, and per template
  how many slices fit one chip alone (``min(slots, allocatable // memory)``);
- which running slices would no longer be valid: their template removed or
  resized, their chip type's commonWord renamed or removed (every annotation
  key carries it), with pod, namespace, node and chip;
- chips already holding more slices or memory than the new numbers allow;
- AICore / AICPU over-commit that HAMi would admit but the hardware may
  refuse (``validate_configs`` warnings).
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from apps.inventory.deviceconfig.selectors import deviceconfig_baseline
from apps.inventory.deviceconfig.specs import chip_type_specs
from apps.inventory.hami.deviceconfig import (
    ChipTypeSpec,
    DeviceConfigError,
    config_to_raw,
    parse_device_config,
)
from apps.inventory.hami.template_rule import templates_by_memory
from apps.inventory.hami.validation import Issue, slots_per_chip, validate_configs
from apps.inventory.models import Chip, Cluster, Slice

# Chip-level AICore/AICPU warnings are the over-commit ones (validation/_advice).
_OVERCOMMIT_FIELD = re.compile(r"^vnpus\[\d+\]\.(aiCore|aiCPU)$")


def _baseline_specs(cluster: Cluster) -> tuple[int | None, list[ChipTypeSpec]]:
    baseline = deviceconfig_baseline(cluster)
    if baseline is None:
        return None, []
    try:
        return baseline.number, parse_device_config(baseline.text).chip_types()
    except DeviceConfigError:
        return baseline.number, []  # an unreadable baseline: everything is "added"


def _renames(
    current: dict[str, ChipTypeSpec], before: dict[str, ChipTypeSpec]
) -> dict[str, str]:
    """Old commonWord -> new one, for chip types whose chipName moved to a new word."""
    renamed: dict[str, str] = {}
    for word, old in before.items():
        if word in current:
            continue
        for new_word, new in current.items():
            if new_word not in before and new.chip_name == old.chip_name:
                renamed[word] = new_word
                break
    return renamed


def _chip_type_row(
    spec: ChipTypeSpec,
    old: ChipTypeSpec | None,
    renamed_from: str | None,
    issues: list[Issue],
) -> dict[str, Any]:
    slots = slots_per_chip(spec.memory_allocatable, spec.templates)
    old_templates = {t.name: t for t in old.templates} if old else {}
    templates = []
    # In the order the template rule tries them (equal memories: file order).
    for template in templates_by_memory(spec.templates):
        previous = old_templates.get(template.name)
        if previous is None:
            change = "added"
        elif previous.memory != template.memory:
            change = "resized"
        else:
            change = "unchanged"
        templates.append(
            {
                **{
                    k: getattr(template, k)
                    for k in ("name", "memory", "ai_core", "ai_cpu")
                },
                "fit_alone": min(slots, spec.memory_allocatable // template.memory),
                "template_change": change,
                "memory_before": previous.memory if previous else None,
            }
        )
    names = {t.name for t in spec.templates}
    if old is None:
        change = "added"
    elif dataclasses.asdict(old) == dataclasses.asdict(spec):
        change = "unchanged"
    else:
        change = "changed"
    mine = [i for i in issues if i.chip_type == spec.common_word]
    return {
        "common_word": spec.common_word,
        "chip_name": spec.chip_name,
        "chip_type_change": "renamed" if renamed_from else change,
        "renamed_from": renamed_from,
        "memory_allocatable": spec.memory_allocatable,
        "slots_per_chip": slots,
        "slots_per_chip_before": (
            slots_per_chip(old.memory_allocatable, old.templates) if old else None
        ),
        "templates": templates,
        "removed_templates": sorted(set(old_templates) - names),
        "overcommit": [i.message for i in mine if _OVERCOMMIT_FIELD.match(i.field)],
        "warnings": [i.message for i in mine],
    }


def _slice_problem(
    slice_: Slice,
    current: dict[str, ChipTypeSpec],
    before: dict[str, ChipTypeSpec],
    renamed: dict[str, str],
) -> str | None:
    word = slice_.common_word
    spec = current.get(word)
    if spec is None:
        if word in renamed:
            return (
                f"chip type {word} is renamed to {renamed[word]}: the pod's "
                f"annotations and resource names still say {word}"
            )
        return f"chip type {word} is removed"
    if not slice_.template:
        return None  # a whole card has no template to lose
    template = next((t for t in spec.templates if t.name == slice_.template), None)
    if template is None:
        return f"template {slice_.template} is removed from {word}"
    old = before.get(word)
    old_template = (
        next((t for t in old.templates if t.name == slice_.template), None)
        if old
        else None
    )
    # What the pod booked is the truth; the baseline's number when unknown.
    booked = slice_.memory or (old_template.memory if old_template else 0)
    if booked and booked != template.memory:
        return (
            f"template {slice_.template} of {word} is resized from {booked} MB "
            f"to {template.memory} MB"
        )
    return None


def _invalid_slices(
    cluster: Cluster,
    current: dict[str, ChipTypeSpec],
    before: dict[str, ChipTypeSpec],
    renamed: dict[str, str],
    *,
    already: bool = False,
) -> list[dict[str, Any]]:
    """Running slices the draft leaves without their template or chip type.

    A slice that the published baseline already fails the same way (a pod
    created by hand with a template the config never had, or booked before
    a publish that already resized it) is not this publish's doing: it is
    listed with ``already=True`` and left out otherwise, so the Impact panel
    and the publish guard blame only what this publish would break.
    """
    rows = []
    slices = (
        Slice.objects.filter(cluster=cluster)
        .select_related("chip")
        .order_by("namespace", "pod_name", "container_index")
    )
    for slice_ in slices:
        problem = _slice_problem(slice_, current, before, renamed)
        if problem is None:
            continue
        live_problem = bool(before) and _slice_problem(slice_, before, before, {})
        if bool(live_problem) != already:
            continue
        rows.append(
            {
                "namespace": slice_.namespace,
                "pod_name": slice_.pod_name,
                "node_name": slice_.node_name,
                "common_word": slice_.common_word,
                "chip_uuid": slice_.chip_uuid,
                "chip_index": slice_.chip.index if slice_.chip else None,
                "template": slice_.template,
                "memory": slice_.memory,
                "reason": problem,
            }
        )
    return rows


def _overbooked_chips(
    cluster: Cluster, current: dict[str, ChipTypeSpec]
) -> list[dict[str, Any]]:
    limits = {
        word: (slots_per_chip(s.memory_allocatable, s.templates), s.memory_allocatable)
        for word, s in current.items()
    }
    rows = []
    chips = (
        Chip.objects.filter(cluster=cluster, common_word__in=list(limits))
        .order_by("node__name", "common_word", "index")
        .values_list("node__name", "common_word", "index", "slots_used", "memory_used")
    )
    for node, word, index, slots_used, memory_used in chips:
        slots, memory = limits[word]
        if slots_used > slots or memory_used > memory:
            rows.append(
                {
                    "node_name": node,
                    "common_word": word,
                    "chip_index": index,
                    "slots_used": slots_used,
                    "slots_per_chip": slots,
                    "memory_used": memory_used,
                    "memory_allocatable": memory,
                }
            )
    return rows


def template_what_if(cluster: Cluster) -> dict[str, Any]:
    """Preview what publishing the portal's current chip types would change.

    Args:
        cluster: The cluster.

    Returns:
        ``cluster``, ``baseline_version``, ``valid`` and ``errors`` (the
        current config's validation), ``chip_types`` (one row each: slots
        before and after, templates with ``fit_alone`` and their change,
        removed templates, over-commit and other warnings),
        ``removed_chip_types`` (commonWords gone, with ``renamed_to``),
        ``invalid_slices`` (running slices this publish would break),
        ``already_invalid_slices`` (broken under the published config
        already) and ``overbooked_chips``.
    """
    number, before_list = _baseline_specs(cluster)
    current_list = chip_type_specs(cluster)
    current = {s.common_word: s for s in current_list}
    before = {s.common_word: s for s in before_list}
    renamed = _renames(current, before)
    renamed_from = {new: old for old, new in renamed.items()}
    report = validate_configs(
        config_to_raw(current_list),
        previous=config_to_raw(before_list) if number is not None else None,
    )
    issues = list(report.warnings)
    chip_types = [
        _chip_type_row(
            spec,
            before.get(spec.common_word)
            or before.get(renamed_from.get(spec.common_word, "")),
            renamed_from.get(spec.common_word),
            issues,
        )
        for spec in current_list
    ]
    return {
        "cluster": cluster.name,
        "baseline_version": number,
        "valid": report.ok,
        "errors": [e.message for e in report.errors],
        "chip_types": chip_types,
        "removed_chip_types": [
            {"common_word": word, "renamed_to": renamed.get(word)}
            for word in before
            if word not in current
        ],
        "invalid_slices": _invalid_slices(cluster, current, before, renamed),
        "already_invalid_slices": _invalid_slices(
            cluster, current, before, renamed, already=True
        ),
        "overbooked_chips": _overbooked_chips(cluster, current),
    }


def slices_broken_by_draft(cluster: Cluster) -> list[dict[str, Any]]:
    """The running slices publishing the portal's chip types now would break
    (not those the published config already fails); see ``_invalid_slices``."""
    _, before_list = _baseline_specs(cluster)
    current = {s.common_word: s for s in chip_type_specs(cluster)}
    before = {s.common_word: s for s in before_list}
    return _invalid_slices(cluster, current, before, _renames(current, before))


def slice_name(row: dict[str, Any]) -> str:
    """How a broken slice is named in a confirmation: ``namespace/pod``."""
    return f"{row['namespace']}/{row['pod_name']}"


#: How a whole-card slice's template is named in a confirmation.
WHOLE_CARD = "whole-card"


def slice_template(row: dict[str, Any]) -> str:
    """How a broken slice's template is named in a confirmation:
    ``commonWord/template`` (``commonWord/whole-card`` for a whole card)."""
    return f"{row['common_word']}/{row['template'] or WHOLE_CARD}"
