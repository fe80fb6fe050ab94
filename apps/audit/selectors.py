"""Reads of the audit log, scoped like the objects they are about.

The audit log sits below every app that records to it, so it cannot know how
each app limits who sees its objects (a token limited to queues sees only those
queues' requests). The app that owns such objects says so instead: in its
``AppConfig.ready`` it registers, for each scoped model, which of its objects a
caller's token may see (``audit_scope_register``). Events about a registered
model are then shown only when their object is among those; events about
anything else are not scoped.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db import models
from django.db.models import CharField, Count, Q, QuerySet
from django.db.models.functions import Cast

from apps.audit.models import AuditEvent

#: For one model: the objects the token may see, or None when it sees them all.
Scope = Callable[[Any], QuerySet[Any] | None]

#: Registered scopes, by ``AuditEvent.object_type`` (the model's name).
_SCOPES: dict[str, Scope] = {}


def audit_scope_register(model: type[models.Model], visible: Scope) -> None:
    """Limit the events about ``model``'s objects to those ``visible(token)`` returns.

    Args:
        model: The model whose events are scoped (its ``_meta.model_name`` is
            the events' ``object_type``).
        visible: Given the caller's token (or None), a queryset of the objects
            it may see, or None when it may see every one. The same selector
            the model's own list uses, so the log shows no more than the list.
    """
    _SCOPES[str(model._meta.model_name)] = visible


def audit_event_queryset(*, token: Any = None) -> QuerySet[AuditEvent]:
    """The audit events the caller may read.

    An event about an object of a scoped model is shown when the model's
    registered scope lets the token see the object; events about anything else
    are not scoped. Events of objects that no longer exist are hidden from a
    token that is scoped for their model: what scoped them cannot be known.
    """
    events = AuditEvent.objects.all()
    scoped = {
        object_type: objects
        for object_type, visible in _SCOPES.items()
        if (objects := visible(token)) is not None
    }
    if not scoped:
        return events
    allowed = ~Q(object_type__in=list(scoped))
    for object_type, objects in scoped.items():
        # object_id is text (it names rows of any model); the ids compared as text.
        keys = objects.annotate(object_key=Cast("pk", CharField())).values("object_key")
        allowed |= Q(object_type=object_type, object_id__in=keys)
    return events.filter(allowed)


def audit_action_counts(actions: list[str]) -> dict[tuple[int, str], int]:
    """How many events of each action each cluster has, ``{(cluster id, action): n}``.

    For counters of things the system did (the log is never pruned, so the
    counts only grow); events without a cluster are left out.
    """
    rows = (
        AuditEvent.objects.filter(action__in=actions, cluster__isnull=False)
        .order_by()
        .values_list("cluster_id", "action")
        .annotate(n=Count("id"))
    )
    return {(cluster_id, action): n for cluster_id, action, n in rows}
