"""The version history of a ConfigMap key the portal publishes, whichever one.

The device config (``hami-scheduler-device``) and the device plugin's node
config (``hami-device-node-config``) keep the same history: every text seen
or written is a numbered version (imported, published, observed, adopted),
and a write about to be made is a pending-write row committed before the PUT,
so a publish killed after it is recognised as the portal's own write. A
:class:`ConfigBook` names one such history (its two models, what its audit
events are called, what to do when a settled rollback lands); the functions
here are its reads and writes, shared by both.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.db.models import Max

from apps.audit.services import audit_record
from apps.inventory.choices import DeviceConfigSource as Source
from apps.inventory.models import Cluster, ConfigVersionBase, PendingWriteBase

#: Sources of the versions the portal owns: the drift baseline ("last seen").
OWNED = (Source.PUBLISHED, Source.ADOPTED)
#: Sources of the versions the ConfigMap held (imports are drafts, never live).
LIVE = (Source.PUBLISHED, Source.ADOPTED, Source.OBSERVED)


@dataclass(frozen=True)
class ConfigBook:
    """One ConfigMap key's history.

    Attributes:
        title: For people: ``device config``, ``node config``.
        action: Prefix of its audit actions (``deviceconfig`` ->
            ``deviceconfig.publish``).
        versions: Its version model.
        pending: Its pending-write model.
        columns: Extra columns of a version, from its text (the device
            config's ``shape``).
        restored: Run when a settled write was a rollback: make the restored
            text the portal's copy again (the device config's chip types).
    """

    title: str
    action: str
    versions: type[ConfigVersionBase]
    pending: type[PendingWriteBase]
    columns: Callable[[str], dict[str, Any]] = field(default=lambda text: {})
    restored: Callable[[Cluster, str], None] | None = None


def sha256(text: str) -> str:
    """The hex digest a version and a pending write carry."""
    return hashlib.sha256(text.encode()).hexdigest()


# --- reads ---------------------------------------------------------------------


def latest(
    versions: type[ConfigVersionBase],
    cluster: Cluster,
    sources: tuple[str, ...] | None = None,
) -> Any:
    """The newest stored version (optionally of the given sources), or None."""
    found = versions.objects.filter(cluster=cluster)  # type: ignore[attr-defined]
    if sources:
        found = found.filter(source__in=sources)
    return found.order_by("-number").first()


# --- writes --------------------------------------------------------------------


def version_store(
    book: ConfigBook,
    *,
    cluster: Cluster,
    text: str,
    source: str,
    actor: Any = None,
    reason: str = "",
    resource_version: str = "",
) -> Any:
    """Store a full text as the cluster's next version number."""
    # Lock the cluster row so two writers cannot take the same version number.
    Cluster.objects.select_for_update().filter(pk=cluster.pk).first()
    manager = book.versions.objects  # type: ignore[attr-defined]
    last = manager.filter(cluster=cluster).aggregate(n=Max("number"))["n"] or 0
    return manager.create(
        cluster=cluster,
        number=last + 1,
        text=text,
        source=source,
        author=actor if getattr(actor, "is_authenticated", False) else None,
        reason=reason,
        sha256=sha256(text),
        resource_version=resource_version,
        **book.columns(text),
    )


def pending_write_record(
    book: ConfigBook,
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
) -> Any:
    """Record, before the PUT, the text a publish is about to write.

    The caller must not be inside a transaction: the row has to be committed
    before the write, or a process killed after the PUT leaves no trace.
    """
    return book.pending.objects.create(  # type: ignore[attr-defined]
        cluster=cluster,
        text=text,
        sha256=sha256(text),
        author=actor if getattr(actor, "is_authenticated", False) else None,
        actor_name=actor_name,
        reason=reason,
        forced=forced,
        rollback_of=rollback_of,
        baseline_number=baseline_number,
        previous_resource_version=previous_resource_version,
    )


def pending_write_claim(pending: PendingWriteBase) -> bool:
    """Take a pending write off the list once its version is stored (or it was refused).

    Returns False when someone else (sync, the next publish) had already
    recorded it, so the caller must not store a second version. Older pending
    writes of the cluster are superseded and go too.
    """
    manager = type(pending).objects  # type: ignore[attr-defined]
    manager.filter(
        cluster_id=pending.cluster_id,  # type: ignore[attr-defined]
        created_at__lt=pending.created_at,
    ).delete()
    deleted, _ = manager.filter(pk=pending.pk).delete()
    return bool(deleted > 0)


def pending_settle(
    book: ConfigBook, *, cluster: Cluster, text: str, resource_version: str
) -> Any:
    """Record a live text the portal wrote but never recorded as its ``published`` version.

    A publish killed between its PUT and its database transaction left a
    pending write whose text is now live: that is the portal's own write, not
    drift, so it gets the version (author, reason, force, rollback) it was
    meant to get. Returns None when no pending write has this text.
    """
    with transaction.atomic():
        pending = (
            book.pending.objects.select_for_update()  # type: ignore[attr-defined]
            .filter(cluster=cluster, sha256=sha256(text))
            .order_by("-created_at")
            .first()
        )
        if pending is None or pending.text != text:
            return None
        if not pending_write_claim(pending):
            return None
        version = version_store(
            book,
            cluster=cluster,
            text=text,
            source=Source.PUBLISHED,
            actor=pending.author,
            reason=pending.reason,
            resource_version=resource_version,
        )
        if pending.rollback_of is not None and book.restored is not None:
            # As the rollback itself would have done.
            book.restored(cluster, text)
        audit_record(
            actor=pending.author,
            actor_name=pending.actor_name,
            action=f"{book.action}.publish",
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


def observed_same(book: ConfigBook, cluster: Cluster, text: str, rv: str) -> bool:
    """Whether ``text`` is already the newest live version (its resourceVersion
    brought up to date); sync then records nothing."""
    newest = latest(book.versions, cluster, LIVE)
    if newest is None or newest.text != text:
        return False
    if rv and newest.resource_version != rv:
        newest.resource_version = rv
        newest.save(update_fields=["resource_version"])
    return True


def observed_store(
    book: ConfigBook, *, cluster: Cluster, text: str, resource_version: str
) -> Any:
    """Store a live text nobody in the portal wrote, as an ``observed`` version (a hand edit)."""
    version = version_store(
        book,
        cluster=cluster,
        text=text,
        source=Source.OBSERVED,
        resource_version=resource_version,
    )
    audit_record(
        actor=None,
        actor_name="sync",
        action=f"{book.action}.observed",
        target=version,
        cluster=cluster,
        after={"version": version.number, "resource_version": resource_version},
    )
    return version
