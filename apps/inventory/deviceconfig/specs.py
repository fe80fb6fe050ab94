"""Conversions between inventory rows and the pure HAMi format dataclasses."""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import Prefetch

from apps.inventory.hami.deviceconfig import ChipTypeSpec, TemplateSpec
from apps.inventory.models import ChipType, Cluster, Template


def template_to_spec(template: Template) -> TemplateSpec:
    """The TemplateSpec of a Template row."""
    return TemplateSpec(
        name=template.name,
        memory=template.memory,
        ai_core=template.ai_core,
        ai_cpu=template.ai_cpu,
        extra=dict(template.extra or {}),
    )


def chip_type_to_spec(
    chip_type: ChipType, templates: Iterable[Template]
) -> ChipTypeSpec:
    """The ChipTypeSpec of a ChipType row and its templates (in file order)."""
    ordered = sorted(templates, key=lambda t: (t.position, t.memory, t.name))
    return ChipTypeSpec(
        common_word=chip_type.common_word,
        chip_name=chip_type.chip_name,
        resource_name=chip_type.resource_name,
        resource_memory_name=chip_type.resource_memory_name,
        resource_core_name=chip_type.resource_core_name or None,
        memory_allocatable=chip_type.memory_allocatable,
        memory_capacity=chip_type.memory_capacity,
        ai_core=chip_type.ai_core,
        ai_cpu=chip_type.ai_cpu,
        templates=tuple(template_to_spec(t) for t in ordered),
        extra=dict(chip_type.extra or {}),
    )


def spec_chip_type_fields(spec: ChipTypeSpec) -> dict[str, object]:
    """Model field values of a ChipTypeSpec (without cluster and position)."""
    return {
        "common_word": spec.common_word,
        "chip_name": spec.chip_name,
        "resource_name": spec.resource_name,
        "resource_memory_name": spec.resource_memory_name,
        "resource_core_name": spec.resource_core_name or "",
        "memory_allocatable": spec.memory_allocatable,
        "memory_capacity": spec.memory_capacity,
        "ai_core": spec.ai_core,
        "ai_cpu": spec.ai_cpu,
        "extra": dict(spec.extra),
    }


def spec_template_fields(spec: TemplateSpec) -> dict[str, object]:
    """Model field values of a TemplateSpec (without chip type and position)."""
    return {
        "name": spec.name,
        "memory": spec.memory,
        "ai_core": spec.ai_core,
        "ai_cpu": spec.ai_cpu,
        "extra": dict(spec.extra),
    }


def chip_type_specs(cluster: Cluster) -> list[ChipTypeSpec]:
    """The portal's current chip types and templates of ``cluster``, in file order."""
    chip_types = (
        ChipType.objects.filter(cluster=cluster)
        .order_by("position", "common_word")
        .prefetch_related(
            Prefetch(
                "templates", queryset=Template.objects.order_by("position", "memory")
            )
        )
    )
    return [chip_type_to_spec(ct, ct.templates.all()) for ct in chip_types]
