"""Writes of the node config's history: validate a text strictly, store its
versions (import, observe by sync), on the device config's machinery
(``apps.inventory.deviceconfig.book``)."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from django.db import transaction
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from apps.audit.services import audit_record
from apps.common.exceptions import ValidationFailed
from apps.common.translated import translated
from apps.inventory.choices import ConnectionKind
from apps.inventory.choices import DeviceConfigSource as Source
from apps.inventory.deviceconfig import book
from apps.inventory.deviceconfig.services import issues_by_field
from apps.inventory.errors import UnconfirmedWarnings
from apps.inventory.hami.messages import N_
from apps.inventory.hami.nodeconfig import NodeConfigError, NodeConfigRead
from apps.inventory.hami.validation import Issue
from apps.inventory.models import Cluster, NodeConfigPendingWrite, NodeConfigVersion
from apps.inventory.nodeconfig.selectors import nodeconfig_check, nodeconfig_mirror
from apps.inventory.services.clusters import cluster_create

#: The node config's history.
NODE_CONFIG_BOOK = book.ConfigBook(
    title=gettext_noop("node config"),
    action="nodeconfig",
    versions=NodeConfigVersion,
    pending=NodeConfigPendingWrite,
)


def nodeconfig_issues(
    text: str,
    cluster: Cluster | None,
    *,
    field: str = "text",
    tolerated: Collection[str] = (),
) -> tuple[NodeConfigRead | None, list[Issue], list[Issue]]:
    """Every problem of a node config: its format, and against ``cluster``'s
    nodes, chips, plugin version and templates when given.

    Args:
        text: The ``node-config.yaml`` text.
        cluster: The cluster it is for (None: the format only).
        field: Where a text that is not YAML at all is reported.
        tolerated: Errors (their messages) the live text has already: they
            become warnings, so an edit is not refused for a problem it did
            not make (another node's, or a chip filtered out long ago).

    Returns:
        The structural read (None: not YAML), the errors and the warnings,
        each with its path (``nodes[2].filterDevices.uuid[0]``).
    """
    try:
        read, report = nodeconfig_check(text, cluster)
    except NodeConfigError as exc:
        said = (
            N_("%(problem)s (line %(line)d)", problem=exc.message, line=exc.line)
            if exc.line
            else exc.message
        )
        return None, [Issue(field=field, message=said)], []
    errors: list[Issue] = []
    warnings = list(read.report.warnings + report.warnings)
    for issue in read.report.errors + report.errors:
        if issue.message in tolerated:
            warnings.append(
                Issue(
                    field=issue.field,
                    message=N_(
                        "already live, not changed here: %(problem)s",
                        problem=issue.message,
                    ),
                    severity="warning",
                )
            )
        else:
            errors.append(issue)
    return read, errors, warnings


def nodeconfig_validate(
    text: str,
    cluster: Cluster | None,
    *,
    field: str = "text",
    tolerated: Collection[str] = (),
) -> tuple[NodeConfigRead, tuple[Issue, ...]]:
    """:func:`nodeconfig_issues`, refusing any error (``tolerated`` as there).

    Returns:
        The structural read and every warning.

    Raises:
        ValidationFailed: The errors, each under its path.
    """
    read, errors, warnings = nodeconfig_issues(
        text, cluster, field=field, tolerated=tolerated
    )
    if errors or read is None:
        raise ValidationFailed(
            N_(
                "%(field)s: %(message)s",
                field=errors[0].field,
                message=errors[0].message,
            ),
            detail=issues_by_field(errors),
        )
    return read, tuple(warnings)


def live_errors(text: str | None, cluster: Cluster) -> frozenset[str]:
    """The messages of the errors a live text has (none when there is no text)."""
    if text is None:
        return frozenset()
    _read, errors, _warnings = nodeconfig_issues(text, cluster)
    return frozenset(issue.message for issue in errors)


def warnings_confirmed(warnings: tuple[Issue, ...], confirmed: bool) -> None:
    """Refuse warnings the caller has not confirmed (``confirm_warnings``)."""
    if warnings and not confirmed:
        said = [
            translated(N_("%(field)s: %(message)s", field=w.field, message=w.message))
            for w in warnings
        ]
        raise UnconfirmedWarnings(
            _("confirm_warnings: %(count)d warning(s): %(first)s")
            % {"count": len(said), "first": said[0]},
            detail={
                "confirm_warnings": [
                    *said,
                    _("send confirm_warnings: true to publish anyway"),
                ]
            },
        )


@transaction.atomic
def nodeconfig_import(
    *,
    cluster_name: str,
    text: str,
    actor: Any = None,
    source: Source = Source.IMPORTED,
    reason: str = "",
    resource_version: str = "",
    actor_name: str = "",
    strict: bool = True,
) -> tuple[NodeConfigVersion, tuple[Issue, ...]]:
    """Record ``text`` as a version of ``cluster_name``'s node config, writing nothing to the cluster.

    As ``deviceconfig import``: the cluster record is created when missing,
    and an invalid text is refused (ValidationFailed by path) with nothing
    stored (errors the live text has already are only warnings). An
    ``imported`` version is a draft: publish it with
    ``rollback`` to its number, or publish the file. An ``adopted`` one (the
    live text) becomes the drift baseline; it is not checked (``strict``
    False): it is what the cluster holds.

    Returns:
        The version and the warnings of its text.
    """
    cluster = Cluster.objects.filter(name=cluster_name).first()
    warnings: tuple[Issue, ...] = ()
    if strict:
        # The live text's own problems are the cluster's, not the draft's.
        live = nodeconfig_mirror(cluster).text if cluster is not None else None
        _read, warnings = nodeconfig_validate(
            text, cluster, tolerated=live_errors(live, cluster) if cluster else ()
        )
    if cluster is None:
        cluster = cluster_create(
            actor=actor, name=cluster_name, connection=ConnectionKind.NONE
        )
    version: NodeConfigVersion = book.version_store(
        NODE_CONFIG_BOOK,
        cluster=cluster,
        text=text,
        source=source,
        actor=actor,
        reason=reason,
        resource_version=resource_version,
    )
    audit_record(
        actor=actor,
        actor_name=actor_name,
        action=f"nodeconfig.{source}",
        target=version,
        cluster=cluster,
        after={"version": version.number, "resource_version": resource_version},
        reason=reason,
    )
    return version, warnings


@transaction.atomic
def nodeconfig_observe(
    *, cluster: Cluster, text: str, resource_version: str
) -> NodeConfigVersion | None:
    """Record the node config sync sees in the cluster.

    The portal's own write (a pending write whose publish died after the
    PUT) is settled as its ``published`` version. The first text a cluster
    shows, when the portal owns none, is adopted as it is, valid or not:
    it is what the plugin pods read, and the baseline a publish replaces.
    Any other new text is a hand edit: an ``observed`` version (drift until
    adopted or published over). Returns the new version, or None when the
    text is the newest live one already.
    """
    if book.observed_same(NODE_CONFIG_BOOK, cluster, text, resource_version):
        return None
    settled: NodeConfigVersion | None = book.pending_settle(
        NODE_CONFIG_BOOK, cluster=cluster, text=text, resource_version=resource_version
    )
    if settled is not None:
        return settled
    if book.latest(NodeConfigVersion, cluster, book.LIVE) is None:
        reason = "first sync: adopted the cluster's node config"
        version: NodeConfigVersion = book.version_store(
            NODE_CONFIG_BOOK,
            cluster=cluster,
            text=text,
            source=Source.ADOPTED,
            reason=reason,
            resource_version=resource_version,
        )
        audit_record(
            actor=None,
            actor_name="sync",
            action="nodeconfig.adopted",
            target=version,
            cluster=cluster,
            after={"version": version.number, "resource_version": resource_version},
            reason=reason,
        )
        return version
    observed: NodeConfigVersion = book.observed_store(
        NODE_CONFIG_BOOK,
        cluster=cluster,
        text=text,
        resource_version=resource_version,
    )
    return observed
