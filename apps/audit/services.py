"""Writing audit events. Every service that changes state calls ``audit_record``."""

from __future__ import annotations

from typing import Any

from django.db import models

from apps.audit.models import AuditEvent
from apps.common.redaction import payload_redacted


def audit_record(
    *,
    actor: Any,
    action: str,
    target: models.Model | None = None,
    cluster: Any = None,
    before: Any = None,
    after: Any = None,
    reason: str = "",
    actor_name: str = "",
) -> AuditEvent:
    """Record that ``actor`` did ``action`` to ``target``.

    Args:
        actor: the user (or None for the system; then pass ``actor_name``).
        action: dotted verb, e.g. ``template.update``.
        target: the changed row, if any.
        cluster: the cluster it belongs to; taken from ``target.cluster`` when omitted.
        before: JSON-able state before the change (None for a create).
        after: JSON-able state after the change (None for a delete).
            Both are stored with request bodies' env values redacted: the
            audit log never holds a secret.
        reason: why, as the actor gave it.
        actor_name: a name for a system actor.
    """
    user = actor if getattr(actor, "is_authenticated", False) else None
    if cluster is None and target is not None:
        cluster = getattr(target, "cluster", None)
    return AuditEvent.objects.create(
        cluster=cluster,
        actor=user,
        actor_name=actor_name or (user.get_username() if user else "system"),
        action=action,
        object_type=target._meta.model_name if target is not None else "",
        object_id=str(target.pk)
        if target is not None and target.pk is not None
        else "",
        object_repr=str(target)[:200] if target is not None else "",
        before=payload_redacted(before),
        after=payload_redacted(after),
        reason=reason,
    )
