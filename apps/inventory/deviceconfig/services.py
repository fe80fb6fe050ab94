"""Writes of the device config: its versions (parse, store, import and observe),
and the writes the portal is about to make (pending writes), recorded before
the PUT so a publish killed after it is recognised."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from django.db import transaction
from django.utils.translation import gettext_noop

from apps.audit.services import audit_record
from apps.common.exceptions import ValidationFailed
from apps.inventory.choices import ConnectionKind, DeviceConfigShape, DeviceConfigSource
from apps.inventory.deviceconfig import book
from apps.inventory.deviceconfig.selectors import deviceconfig_baseline
from apps.inventory.deviceconfig.specs import chip_type_specs
from apps.inventory.hami.deviceconfig import (
    DeviceConfigDocument,
    DeviceConfigError,
    parse_device_config,
)
from apps.inventory.hami.messages import N_
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
        field = exc.field or "text"
        raise ValidationFailed(
            N_("%(field)s: %(message)s", field=field, message=exc.described),
            detail={field: [exc.described]},
        ) from exc
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


def _columns(text: str) -> dict[str, Any]:
    try:
        return {"shape": parse_device_config(text).shape.value}
    except DeviceConfigError:
        return {"shape": DeviceConfigShape.UNREADABLE}


def _restored(cluster: Cluster, text: str) -> None:
    replace_chip_types(cluster, parse_device_config(text).chip_types())


#: The device config's history (``apps.inventory.deviceconfig.book``).
DEVICE_CONFIG_BOOK = book.ConfigBook(
    title=gettext_noop("device config"),
    action="deviceconfig",
    versions=DeviceConfigVersion,
    pending=DeviceConfigPendingWrite,
    columns=_columns,
    # A settled rollback makes the restored text the portal's copy again.
    restored=_restored,
)


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
    version: DeviceConfigVersion = book.version_store(
        DEVICE_CONFIG_BOOK,
        cluster=cluster,
        text=text,
        source=source,
        actor=actor,
        reason=reason,
        resource_version=resource_version,
    )
    return version


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
    if book.observed_same(DEVICE_CONFIG_BOOK, cluster, text, resource_version):
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
    observed: DeviceConfigVersion = book.observed_store(
        DEVICE_CONFIG_BOOK,
        cluster=cluster,
        text=text,
        resource_version=resource_version,
    )
    return observed


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


def deviceconfig_pending_write_record(**kwargs: Any) -> DeviceConfigPendingWrite:
    """Record, before the PUT, the text a publish is about to write
    (:func:`apps.inventory.deviceconfig.book.pending_write_record`)."""
    pending: DeviceConfigPendingWrite = book.pending_write_record(
        DEVICE_CONFIG_BOOK, **kwargs
    )
    return pending


deviceconfig_pending_write_claim = book.pending_write_claim


def deviceconfig_pending_settle(
    *, cluster: Cluster, text: str, resource_version: str
) -> DeviceConfigVersion | None:
    """Record a live text the portal wrote but never recorded
    (:func:`apps.inventory.deviceconfig.book.pending_settle`)."""
    version: DeviceConfigVersion | None = book.pending_settle(
        DEVICE_CONFIG_BOOK,
        cluster=cluster,
        text=text,
        resource_version=resource_version,
    )
    return version
