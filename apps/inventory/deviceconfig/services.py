"""Writes of the device config: its versions (parse, store, import and observe),
and the writes the portal is about to make (pending writes), recorded before
the PUT so a publish killed after it is recognised."""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Sequence
from typing import Any

from django.db import transaction
from django.db.models import Max

from apps.audit.services import audit_record
from apps.common.exceptions import ValidationFailed
from apps.inventory.choices import ConnectionKind, DeviceConfigShape, DeviceConfigSource
from apps.inventory.deviceconfig.selectors import (
    deviceconfig_baseline,
    deviceconfig_last_live,
)
from apps.inventory.deviceconfig.specs import chip_type_specs
from apps.inventory.hami.deviceconfig import (
    DeviceConfigDocument,
    DeviceConfigError,
    parse_device_config,
)
from apps.inventory.hami.validation import Issue, ValidationReport, validate_configs
from apps.inventory.models import (
    Cluster,
    DeviceConfigPendingWrite,
    DeviceConfigVersion,
)
from apps.inventory.services.clusters import cluster_create
from apps.inventory.services.templates import replace_chip_types

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
    replace_chip_types(cluster, document.chip_types())
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
        replace_chip_types(cluster, parse_device_config(text).chip_types())
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
