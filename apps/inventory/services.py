"""Writes of the inventory: clusters, device-config versions, chip types, templates.

Every change to chip types or templates is validated as a whole device config
(the rules of ``apps.inventory.hami.validation``) before anything is written, so
the portal's copy is always a config that HAMi, the device plugin and Volcano
accept. Each write records an AuditEvent with before and after.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections.abc import Callable, Sequence
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Max

from apps.audit.services import audit_record
from apps.common.crypto import encrypt
from apps.common.exceptions import ValidationFailed
from apps.inventory.choices import ConnectionKind, DeviceConfigShape, DeviceConfigSource
from apps.inventory.hami.deviceconfig import (
    CHIP_TYPE_KEYS,
    TEMPLATE_KEYS,
    ChipTypeSpec,
    DeviceConfigDocument,
    DeviceConfigError,
    TemplateSpec,
    config_to_raw,
    parse_device_config,
)
from apps.inventory.hami.validation import Issue, ValidationReport, validate_configs
from apps.inventory.kubeconfig import (
    kubeconfig_check,
    kubeconfig_dir,
    kubeconfig_parse,
    path_inside_dir,
)
from apps.inventory.models import (
    ChipType,
    Cluster,
    DeviceConfigPendingWrite,
    DeviceConfigVersion,
    Template,
)
from apps.inventory.selectors import chip_type_specs
from apps.inventory.specs import spec_chip_type_fields, spec_template_fields

CLUSTER_FIELDS = (
    "name",
    "description",
    "connection",
    "kubeconfig_path",
    "kubeconfig_context",
    "api_url",
    "ca_cert",
    "verify_tls",
    "device_config_namespace",
    "device_config_name",
    "scheduler",
)


def cluster_snapshot(cluster: Cluster) -> dict[str, Any]:
    """Audit view of a cluster: everything but the secret, which shows as present or not."""
    data = {field: getattr(cluster, field) for field in CLUSTER_FIELDS}
    data["has_token"] = cluster.has_token
    data["has_kubeconfig"] = cluster.has_kubeconfig
    return data


def _kubeconfig_set(
    cluster: Cluster, kubeconfig: str | None, path_changed: bool
) -> None:
    """Check and store a kubeconfig's content (``""`` removes it) and the path.

    Raises:
        ValidationFailed: Naming ``kubeconfig`` (unsafe or not a kubeconfig),
            ``kubeconfig_path`` (outside KUBECONFIG_DIR) or ``kubeconfig_context``.
    """
    if path_changed and cluster.kubeconfig_path:
        path_inside_dir(cluster.kubeconfig_path, field="kubeconfig_path")
    if kubeconfig is None:
        return
    if kubeconfig:
        config = kubeconfig_parse(kubeconfig)
        kubeconfig_check(
            config,
            field="kubeconfig",
            base_dir=kubeconfig_dir(),
            context=cluster.kubeconfig_context,
        )
    cluster.kubeconfig_encrypted = encrypt(kubeconfig)


@transaction.atomic
def cluster_create(
    *, actor: Any, token: str = "", kubeconfig: str | None = None, **fields: Any
) -> Cluster:
    """Register a cluster. ``token`` and ``kubeconfig`` (content) are stored
    encrypted and never returned; a ``kubeconfig_path`` must be in KUBECONFIG_DIR."""
    cluster = Cluster(**{k: v for k, v in fields.items() if k in CLUSTER_FIELDS})
    if token:
        cluster.token_encrypted = encrypt(token)
    _kubeconfig_set(cluster, kubeconfig, path_changed=True)
    _full_clean(cluster)
    try:
        with transaction.atomic():
            cluster.save()
    except IntegrityError as exc:
        raise ValidationFailed(
            f"cluster {cluster.name!r} already exists",
            detail={"name": [f"a cluster named {cluster.name!r} already exists"]},
        ) from exc
    audit_record(
        actor=actor,
        action="cluster.create",
        target=cluster,
        cluster=cluster,
        after=cluster_snapshot(cluster),
    )
    return cluster


@transaction.atomic
def cluster_update(
    *,
    cluster: Cluster,
    actor: Any,
    token: str | None = None,
    kubeconfig: str | None = None,
    **fields: Any,
) -> Cluster:
    """Change a cluster's settings; ``token=""`` / ``kubeconfig=""`` remove the stored one."""
    before = cluster_snapshot(cluster)
    old_path = cluster.kubeconfig_path
    for key, value in fields.items():
        if key in CLUSTER_FIELDS:
            setattr(cluster, key, value)
    if token is not None:
        cluster.token_encrypted = encrypt(token)
    _kubeconfig_set(
        cluster, kubeconfig, path_changed=cluster.kubeconfig_path != old_path
    )
    _full_clean(cluster)
    cluster.save()
    audit_record(
        actor=actor,
        action="cluster.update",
        target=cluster,
        before=before,
        after=cluster_snapshot(cluster),
    )
    return cluster


@transaction.atomic
def cluster_delete(*, cluster: Cluster, actor: Any) -> None:
    """Forget a cluster and everything synced from it (the cluster itself is untouched)."""
    before = cluster_snapshot(cluster)
    audit_record(
        actor=actor,
        action="cluster.delete",
        target=cluster,
        cluster=None,
        before=before,
    )
    cluster.delete()


def _full_clean(instance: Any) -> None:
    from django.core.exceptions import ValidationError

    try:
        instance.full_clean(validate_unique=False)
    except ValidationError as exc:
        raise ValidationFailed(
            "invalid input",
            detail={
                field: [str(m) for m in messages]
                for field, messages in exc.message_dict.items()
            },
        ) from exc


# --- device-config versions -------------------------------------------------


def deviceconfig_parse(text: str) -> tuple[DeviceConfigDocument, ValidationReport]:
    """Parse and validate a device-config.yaml text; ValidationFailed names the field."""
    try:
        document = parse_device_config(text)
    except DeviceConfigError as exc:
        field = getattr(exc, "field", "") or "text"
        raise ValidationFailed(f"{field}: {exc}", detail={field: [str(exc)]}) from exc
    report = validate_configs(document.raw_configs)
    if not report.ok:
        raise ValidationFailed(
            report.errors[0].message,
            detail=issues_by_field(report.errors),
        )
    return document, report


def issues_by_field(issues: Sequence[Issue]) -> dict[str, list[str]]:
    """Group validation issues by their field path."""
    grouped: dict[str, list[str]] = {}
    for issue in issues:
        grouped.setdefault(issue.field or "non_field_errors", []).append(issue.message)
    return grouped


def deviceconfig_version_store(
    *,
    cluster: Cluster,
    text: str,
    source: DeviceConfigSource,
    actor: Any = None,
    reason: str = "",
    resource_version: str = "",
) -> DeviceConfigVersion:
    """Store a full text as the cluster's next version number."""
    try:
        shape = parse_device_config(text).shape.value
    except DeviceConfigError:
        shape = DeviceConfigShape.UNREADABLE
    # Lock the cluster row so two writers cannot take the same version number.
    Cluster.objects.select_for_update().filter(pk=cluster.pk).first()
    last = (
        DeviceConfigVersion.objects.filter(cluster=cluster).aggregate(n=Max("number"))[
            "n"
        ]
        or 0
    )
    return DeviceConfigVersion.objects.create(
        cluster=cluster,
        number=last + 1,
        text=text,
        shape=shape,
        source=source,
        author=actor if getattr(actor, "is_authenticated", False) else None,
        reason=reason,
        sha256=hashlib.sha256(text.encode()).hexdigest(),
        resource_version=resource_version,
    )


@transaction.atomic
def deviceconfig_import(
    *,
    cluster_name: str,
    text: str,
    actor: Any = None,
    source: DeviceConfigSource = DeviceConfigSource.IMPORTED,
    reason: str = "",
    resource_version: str = "",
    actor_name: str = "",
) -> DeviceConfigVersion:
    """Make ``text`` the portal's device config of ``cluster_name``.

    Creates the cluster record if missing, stores the text as a version, and
    replaces the cluster's chip types and templates with those of the text.
    Invalid configs are refused (ValidationFailed) and nothing is written.
    """
    document, _ = deviceconfig_parse(text)
    cluster = Cluster.objects.filter(name=cluster_name).first()
    if cluster is None:
        cluster = cluster_create(
            actor=actor, name=cluster_name, connection=ConnectionKind.NONE
        )
    before = [dataclasses.asdict(s) for s in chip_type_specs(cluster)]
    version = deviceconfig_version_store(
        cluster=cluster,
        text=text,
        source=source,
        actor=actor,
        reason=reason,
        resource_version=resource_version,
    )
    _replace_chip_types(cluster, document.chip_types())
    audit_record(
        actor=actor,
        action=f"deviceconfig.{source}",
        target=version,
        cluster=cluster,
        before={"chip_types": before},
        after={
            "chip_types": [dataclasses.asdict(s) for s in chip_type_specs(cluster)],
            "version": version.number,
        },
        reason=reason,
        actor_name=actor_name,
    )
    return version


@transaction.atomic
def deviceconfig_observe(
    *, cluster: Cluster, text: str, resource_version: str
) -> DeviceConfigVersion | None:
    """Record the device config seen in the cluster.

    The first one a cluster shows is adopted: it becomes the drift baseline
    and, unless a file was imported first (a draft the operator is about to
    publish), the portal's chip types and templates, when valid. Later ones
    are stored as ``observed`` versions when their text differs from the
    newest version seen live (imports are drafts, never live). Returns the
    new version, or None when nothing changed.
    """
    from apps.inventory.selectors import deviceconfig_baseline, deviceconfig_last_live

    latest = deviceconfig_last_live(cluster)
    if latest is not None and latest.text == text:
        if resource_version and latest.resource_version != resource_version:
            latest.resource_version = resource_version
            latest.save(update_fields=["resource_version"])
        return None
    settled = deviceconfig_pending_settle(
        cluster=cluster, text=text, resource_version=resource_version
    )
    if settled is not None:
        return settled  # the portal's own write, whose publish died after the PUT
    if deviceconfig_baseline(cluster) is None:
        adopted = _first_live_adopt(
            cluster=cluster, text=text, resource_version=resource_version
        )
        if adopted is not None:
            return adopted
    version = deviceconfig_version_store(
        cluster=cluster,
        text=text,
        source=DeviceConfigSource.OBSERVED,
        resource_version=resource_version,
    )
    audit_record(
        actor=None,
        actor_name="sync",
        action="deviceconfig.observed",
        target=version,
        cluster=cluster,
        after={"version": version.number, "resource_version": resource_version},
    )
    return version


def _first_live_adopt(
    *, cluster: Cluster, text: str, resource_version: str
) -> DeviceConfigVersion | None:
    """Adopt the first valid live config seen; None when it is invalid."""
    reason = "first sync: adopted the cluster's device config"
    has_draft = DeviceConfigVersion.objects.filter(cluster=cluster).exists()
    if not has_draft:
        try:
            return deviceconfig_import(
                cluster_name=cluster.name,
                text=text,
                source=DeviceConfigSource.ADOPTED,
                reason=reason,
                resource_version=resource_version,
                actor_name="sync",
            )
        except ValidationFailed:
            return None  # an invalid live config is still recorded, but not adopted
    # An imported draft is waiting to be published: the live text becomes the
    # baseline, the draft stays the portal's chip types.
    try:
        deviceconfig_parse(text)
    except ValidationFailed:
        return None
    version = deviceconfig_version_store(
        cluster=cluster,
        text=text,
        source=DeviceConfigSource.ADOPTED,
        reason=reason + " (the imported draft is kept)",
        resource_version=resource_version,
    )
    audit_record(
        actor=None,
        actor_name="sync",
        action="deviceconfig.adopted",
        target=version,
        cluster=cluster,
        after={"version": version.number, "resource_version": resource_version},
        reason=version.reason,
    )
    return version


# --- writes the portal is about to make ----------------------------------------------


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def deviceconfig_pending_write_record(
    *,
    cluster: Cluster,
    text: str,
    actor: Any,
    actor_name: str,
    reason: str,
    forced: bool,
    rollback_of: int | None,
    baseline_number: int,
    previous_resource_version: str,
) -> DeviceConfigPendingWrite:
    """Record, before the PUT, the text a publish is about to write.

    The caller must not be inside a transaction: the row has to be committed
    before the write, or a process killed after the PUT leaves no trace.
    """
    return DeviceConfigPendingWrite.objects.create(
        cluster=cluster,
        text=text,
        sha256=_sha256(text),
        author=actor if getattr(actor, "is_authenticated", False) else None,
        actor_name=actor_name,
        reason=reason,
        forced=forced,
        rollback_of=rollback_of,
        baseline_number=baseline_number,
        previous_resource_version=previous_resource_version,
    )


def deviceconfig_pending_write_claim(pending: DeviceConfigPendingWrite) -> bool:
    """Take a pending write off the list once its version is stored (or it was refused).

    Returns False when someone else (sync, the next publish) had already
    recorded it, so the caller must not store a second version. Older pending
    writes of the cluster are superseded and go too.
    """
    DeviceConfigPendingWrite.objects.filter(
        cluster_id=pending.cluster_id, created_at__lt=pending.created_at
    ).delete()
    deleted, _ = DeviceConfigPendingWrite.objects.filter(pk=pending.pk).delete()
    return deleted > 0


@transaction.atomic
def deviceconfig_pending_settle(
    *, cluster: Cluster, text: str, resource_version: str
) -> DeviceConfigVersion | None:
    """Record a live text the portal wrote but never recorded as its ``published`` version.

    A publish killed between its PUT and its database transaction left a
    pending write whose text is now live: that is the portal's own write, not
    drift, so it gets the version (author, reason, force, rollback) it was
    meant to get. Returns None when no pending write has this text.
    """
    pending = (
        DeviceConfigPendingWrite.objects.select_for_update()
        .filter(cluster=cluster, sha256=_sha256(text))
        .order_by("-created_at")
        .first()
    )
    if pending is None or pending.text != text:
        return None
    if not deviceconfig_pending_write_claim(pending):
        return None
    version = deviceconfig_version_store(
        cluster=cluster,
        text=text,
        source=DeviceConfigSource.PUBLISHED,
        actor=pending.author,
        reason=pending.reason,
        resource_version=resource_version,
    )
    if pending.rollback_of is not None:
        # As the rollback itself would have done: the restored text is the
        # portal's copy again.
        _replace_chip_types(cluster, parse_device_config(text).chip_types())
    audit_record(
        actor=pending.author,
        actor_name=pending.actor_name,
        action="deviceconfig.publish",
        target=version,
        cluster=cluster,
        before={
            "version": pending.baseline_number,
            "resource_version": pending.previous_resource_version,
        },
        after={
            "version": version.number,
            "resource_version": resource_version,
            "forced": pending.forced,
            "rollback_of": pending.rollback_of,
            "recovered": True,
        },
        reason=pending.reason,
    )
    return version


def _replace_chip_types(cluster: Cluster, specs: Sequence[ChipTypeSpec]) -> None:
    ChipType.objects.filter(cluster=cluster).delete()
    for position, spec in enumerate(specs):
        chip_type = ChipType.objects.create(
            cluster=cluster, position=position, **spec_chip_type_fields(spec)
        )
        Template.objects.bulk_create(
            Template(chip_type=chip_type, position=i, **spec_template_fields(t))
            for i, t in enumerate(spec.templates)
        )


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
            f"{missing[0]}: required",
            detail={key: ["this field is required"] for key in missing},
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


def usage_samples_record() -> int:
    """Record one UsageSample per cluster and chip type now; prune past retention."""
    from datetime import timedelta

    from django.conf import settings
    from django.utils import timezone

    from apps.inventory.models import UsageSample
    from apps.inventory.selectors import cluster_summary, fragmentation

    now = timezone.now()
    samples = []
    for cluster in Cluster.objects.all():
        stranded = {f.common_word: f.stranded_memory for f in fragmentation(cluster)}
        for totals in cluster_summary(cluster)["chip_types"]:
            samples.append(
                UsageSample(
                    cluster=cluster,
                    common_word=totals["common_word"],
                    at=now,
                    chips=totals["chips"],
                    slices=totals["slices"],
                    memory_total=totals["memory_total"],
                    memory_used=totals["memory_used"],
                    slots_total=totals["slots_total"],
                    slots_used=totals["slots_used"],
                    aicore_total=totals["aicore_total"],
                    aicore_used=totals["aicore_used"],
                    aicpu_total=totals["aicpu_total"],
                    aicpu_used=totals["aicpu_used"],
                    stranded_memory=stranded.get(totals["common_word"], 0),
                )
            )
    UsageSample.objects.bulk_create(samples)
    UsageSample.objects.filter(
        at__lt=now - timedelta(days=settings.USAGE_SAMPLE_RETENTION_DAYS)
    ).delete()
    # Chip history is kept as long as the usage samples.
    from apps.inventory.models import ChipEvent

    ChipEvent.objects.filter(
        at__lt=now - timedelta(days=settings.USAGE_SAMPLE_RETENTION_DAYS)
    ).delete()
    return len(samples)


def chip_types_replace(*, cluster: Cluster, specs: Sequence[ChipTypeSpec]) -> None:
    """Make ``specs`` the cluster's chip types and templates, as they are.

    For callers that already validated ``specs`` and audit the change
    themselves (publishing a rollback sets the portal's copy to that version).
    """
    _replace_chip_types(cluster, specs)
