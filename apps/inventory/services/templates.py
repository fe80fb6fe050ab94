"""Chip types and templates: every change validated as a whole device config first."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from django.db import models, transaction
from django.db.models import Max
from django.utils.translation import gettext

from apps.audit.services import audit_record
from apps.common.exceptions import ValidationFailed
from apps.inventory.deviceconfig.specs import (
    chip_type_specs,
    spec_chip_type_fields,
    spec_template_fields,
)
from apps.inventory.hami.deviceconfig import (
    CHIP_TYPE_KEYS,
    TEMPLATE_KEYS,
    ChipTypeSpec,
    TemplateSpec,
    config_to_raw,
)
from apps.inventory.hami.validation import ValidationReport, validate_configs
from apps.inventory.models import (
    ChipType,
    Cluster,
    Template,
)

_Row = TypeVar("_Row", bound=models.Model)


def replace_chip_types(cluster: Cluster, specs: Sequence[ChipTypeSpec]) -> None:
    """Make the cluster's chip types and templates equal ``specs``, in their order.

    A chip type (by commonWord) or template (by name) that survives keeps its
    row and id: an editor open on it, a link to it and the API's ids stay
    valid across an adopt or an import. The others are deleted or created.
    """
    chip_types = ChipType.objects.filter(cluster=cluster)
    existing = {ct.common_word: ct for ct in chip_types}
    chip_types.exclude(common_word__in=[s.common_word for s in specs]).delete()
    for position, spec in enumerate(specs):
        chip_type = _kept_or_created(
            existing.get(spec.common_word),
            {**spec_chip_type_fields(spec), "position": position},
            lambda fields: ChipType.objects.create(cluster=cluster, **fields),
        )
        templates = Template.objects.filter(chip_type=chip_type)
        by_name = {t.name: t for t in templates}
        templates.exclude(name__in=[t.name for t in spec.templates]).delete()
        for index, template in enumerate(spec.templates):
            _kept_or_created(
                by_name.get(template.name),
                {**spec_template_fields(template), "position": index},
                # called at once, inside this iteration
                lambda fields, owner=chip_type: Template.objects.create(
                    chip_type=owner, **fields
                ),
            )


def _kept_or_created(
    row: _Row | None,
    fields: dict[str, object],
    create: Callable[[dict[str, object]], _Row],
) -> _Row:
    """``row`` with ``fields`` saved, or a new row made by ``create``."""
    if row is None:
        return create(fields)
    for name, value in fields.items():
        setattr(row, name, value)
    row.save()
    return row


# --- chip types and templates ---------------------------------------------------

_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")
# YAML keys of the device config -> API field names, for errors shown on a field.
_FIELD_NAMES = {
    "chipName": "chip_name",
    "commonWord": "common_word",
    "resourceName": "resource_name",
    "resourceMemoryName": "resource_memory_name",
    "resourceCoreName": "resource_core_name",
    "memoryAllocatable": "memory_allocatable",
    "memoryCapacity": "memory_capacity",
    "aiCore": "ai_core",
    "aiCPU": "ai_cpu",
    "name": "name",
    "memory": "memory",
    "templates": "templates",
}


def _api_field(issue_field: str) -> str:
    last = issue_field.rsplit(".", 1)[-1]
    last = re.sub(r"\[\d+\]$", "", last)
    return _FIELD_NAMES.get(last, _CAMEL.sub("_", last).lower() or "non_field_errors")


def _validate_proposal(
    cluster: Cluster,
    proposed: list[ChipTypeSpec],
    *,
    focus_chip_type: str | None,
    focus_template: str | None = None,
) -> ValidationReport:
    """Validate the whole proposed config; raise with errors on the edited object's fields."""
    current = chip_type_specs(cluster)
    report = validate_configs(config_to_raw(proposed), previous=config_to_raw(current))
    if report.ok:
        return report
    detail: dict[str, list[str]] = {}
    for issue in report.errors:
        is_focus = issue.chip_type == focus_chip_type and (
            (focus_template is None and issue.template is None)
            or issue.template == focus_template
        )
        key = _api_field(issue.field) if is_focus else "non_field_errors"
        detail.setdefault(key, []).append(issue.message)
    raise ValidationFailed(report.errors[0].message, detail=detail)


def _mutate(
    cluster: Cluster,
    change: Callable[[list[ChipTypeSpec]], list[ChipTypeSpec]],
    *,
    focus_chip_type: str | None,
    focus_template: str | None = None,
) -> tuple[list[ChipTypeSpec], list[ChipTypeSpec], ValidationReport]:
    # Serialise edits of one cluster's config: two editors must not both pass
    # validation against the same "before" and write an invalid combination.
    Cluster.objects.select_for_update().filter(pk=cluster.pk).first()
    before = chip_type_specs(cluster)
    after = change(list(before))
    report = _validate_proposal(
        cluster, after, focus_chip_type=focus_chip_type, focus_template=focus_template
    )
    return before, after, report


def chip_type_create(
    *, cluster: Cluster, actor: Any, data: dict[str, Any]
) -> tuple[ChipType, ValidationReport]:
    """Add a chip type (without templates unless ``data['templates']`` lists them)."""
    with transaction.atomic():
        spec = _chip_type_spec_from(data)
        _, _, report = _mutate(
            cluster, lambda specs: [*specs, spec], focus_chip_type=spec.common_word
        )
        position = (
            ChipType.objects.filter(cluster=cluster).aggregate(p=Max("position"))["p"]
            or 0
        ) + 1
        chip_type = ChipType.objects.create(
            cluster=cluster, position=position, **spec_chip_type_fields(spec)
        )
        for i, template in enumerate(spec.templates):
            Template.objects.create(
                chip_type=chip_type, position=i, **spec_template_fields(template)
            )
        audit_record(
            actor=actor,
            action="chiptype.create",
            target=chip_type,
            after=dataclasses.asdict(spec),
        )
    return chip_type, report


def chip_type_update(
    *, chip_type: ChipType, actor: Any, data: dict[str, Any]
) -> tuple[ChipType, ValidationReport]:
    """Change a chip type's fields (templates are edited through their own calls)."""
    with transaction.atomic():
        cluster = chip_type.cluster
        old_cw = chip_type.common_word
        current = next(s for s in chip_type_specs(cluster) if s.common_word == old_cw)
        fields = {**spec_chip_type_fields(current), **data}
        spec = _chip_type_spec_from(
            {**fields, "templates": [dataclasses.asdict(t) for t in current.templates]}
        )
        _, _, report = _mutate(
            cluster,
            lambda specs: [spec if s.common_word == old_cw else s for s in specs],
            focus_chip_type=spec.common_word,
        )
        for key, value in spec_chip_type_fields(spec).items():
            setattr(chip_type, key, value)
        chip_type.save()
        audit_record(
            actor=actor,
            action="chiptype.update",
            target=chip_type,
            before=dataclasses.asdict(current),
            after=dataclasses.asdict(spec),
        )
    return chip_type, report


def chip_type_delete(*, chip_type: ChipType, actor: Any) -> ValidationReport:
    """Remove a chip type and its templates."""
    with transaction.atomic():
        cluster = chip_type.cluster
        cw = chip_type.common_word
        before, _, report = _mutate(
            cluster,
            lambda specs: [s for s in specs if s.common_word != cw],
            focus_chip_type=cw,
        )
        removed = next(s for s in before if s.common_word == cw)
        audit_record(
            actor=actor,
            action="chiptype.delete",
            target=chip_type,
            before=dataclasses.asdict(removed),
        )
        chip_type.delete()
    return report


def _replace_template(
    specs: list[ChipTypeSpec],
    common_word: str,
    old_name: str | None,
    new: TemplateSpec | None,
) -> list[ChipTypeSpec]:
    result = []
    for spec in specs:
        if spec.common_word == common_word:
            templates = (
                [t for t in spec.templates if t.name != old_name]
                if old_name
                else list(spec.templates)
            )
            if new is not None:
                position = next(
                    (i for i, t in enumerate(spec.templates) if t.name == old_name),
                    len(templates),
                )
                templates.insert(min(position, len(templates)), new)
            spec = dataclasses.replace(spec, templates=tuple(templates))
        result.append(spec)
    return result


def template_create(
    *, chip_type: ChipType, actor: Any, data: dict[str, Any]
) -> tuple[Template, ValidationReport]:
    """Add a template to a chip type."""
    with transaction.atomic():
        spec = _template_spec_from(data)
        cw = chip_type.common_word
        _, _, report = _mutate(
            chip_type.cluster,
            lambda specs: _replace_template(specs, cw, None, spec),
            focus_chip_type=cw,
            focus_template=spec.name,
        )
        position = (chip_type.templates.aggregate(p=Max("position"))["p"] or 0) + 1
        template = Template.objects.create(
            chip_type=chip_type, position=position, **spec_template_fields(spec)
        )
        audit_record(
            actor=actor,
            action="template.create",
            target=template,
            after=dataclasses.asdict(spec),
        )
    return template, report


def template_update(
    *, template: Template, actor: Any, data: dict[str, Any]
) -> tuple[Template, ValidationReport]:
    """Change a template (name, memory, AICore, AICPU)."""
    with transaction.atomic():
        chip_type = template.chip_type
        cw = chip_type.common_word
        before = TemplateSpec(
            name=template.name,
            memory=template.memory,
            ai_core=template.ai_core,
            ai_cpu=template.ai_cpu,
            extra=dict(template.extra or {}),
        )
        spec = _template_spec_from({**dataclasses.asdict(before), **data})
        _, _, report = _mutate(
            chip_type.cluster,
            lambda specs: _replace_template(specs, cw, before.name, spec),
            focus_chip_type=cw,
            focus_template=spec.name,
        )
        for key, value in spec_template_fields(spec).items():
            setattr(template, key, value)
        template.save()
        audit_record(
            actor=actor,
            action="template.update",
            target=template,
            before=dataclasses.asdict(before),
            after=dataclasses.asdict(spec),
        )
    return template, report


def template_delete(*, template: Template, actor: Any) -> ValidationReport:
    """Remove a template from its chip type."""
    with transaction.atomic():
        chip_type = template.chip_type
        cw, name = chip_type.common_word, template.name
        before = {
            "name": name,
            "memory": template.memory,
            "ai_core": template.ai_core,
            "ai_cpu": template.ai_cpu,
        }
        _, _, report = _mutate(
            chip_type.cluster,
            lambda specs: _replace_template(specs, cw, name, None),
            focus_chip_type=cw,
            focus_template=name,
        )
        audit_record(
            actor=actor, action="template.delete", target=template, before=before
        )
        template.delete()
    return report


def _optional_int(data: dict[str, Any], key: str) -> int | None:
    value = data.get(key)
    if value is None:
        return None
    return _int(data, key)


def _int(data: dict[str, Any], key: str) -> int:
    value = data.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationFailed(
            f"{key}: an integer is required", detail={key: ["an integer is required"]}
        )
    return value


def _extra(data: dict[str, Any], managed: tuple[str, ...], path: str) -> dict[str, Any]:
    """The ``extra`` keys of a chip type or template: an object without the keys
    the portal manages itself (those have their own fields)."""
    extra = data.get("extra") or {}
    if not isinstance(extra, dict):
        raise ValidationFailed(
            f"{path}: must be an object", detail={path: ["must be an object"]}
        )
    clash = sorted(set(extra) & set(managed))
    if clash:
        message = f"must not hold keys with their own fields: {', '.join(clash)}"
        raise ValidationFailed(f"{path}: {message}", detail={path: [message]})
    return dict(extra)


def _template_spec_from(data: dict[str, Any], path: str = "extra") -> TemplateSpec:
    name = data.get("name")
    if not isinstance(name, str) or not name:
        raise ValidationFailed(
            "name: required", detail={"name": ["a template name is required"]}
        )
    memory = _int(data, "memory")
    return TemplateSpec(
        name=name,
        memory=memory,
        ai_core=_optional_int(data, "ai_core"),
        ai_cpu=_optional_int(data, "ai_cpu"),
        extra=_extra(data, TEMPLATE_KEYS, path),
    )


def _chip_type_spec_from(data: dict[str, Any]) -> ChipTypeSpec:
    missing = [
        key
        for key in ("common_word", "chip_name", "resource_name", "resource_memory_name")
        if not isinstance(data.get(key), str) or not data.get(key)
    ]
    if missing:
        raise ValidationFailed(
            gettext("%(field)s: required") % {"field": missing[0]},
            detail={key: [gettext("this field is required")] for key in missing},
        )
    allocatable = _int(data, "memory_allocatable")
    capacity = _int(data, "memory_capacity")
    return ChipTypeSpec(
        common_word=data["common_word"],
        chip_name=data["chip_name"],
        resource_name=data["resource_name"],
        resource_memory_name=data["resource_memory_name"],
        resource_core_name=data.get("resource_core_name") or None,
        memory_allocatable=allocatable,
        memory_capacity=capacity,
        ai_core=_optional_int(data, "ai_core"),
        ai_cpu=_optional_int(data, "ai_cpu"),
        templates=tuple(
            _template_spec_from(t, f"templates[{i}].extra")
            for i, t in enumerate(data.get("templates") or ())
        ),
        extra=_extra(data, CHIP_TYPE_KEYS, "extra"),
    )


def chip_types_replace(*, cluster: Cluster, specs: Sequence[ChipTypeSpec]) -> None:
    """Make ``specs`` the cluster's chip types and templates, as they are.

    For callers that already validated ``specs`` and audit the change
    themselves (publishing a rollback sets the portal's copy to that version).
    """
    replace_chip_types(cluster, specs)
