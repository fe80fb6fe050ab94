"""Reads of the audit log, scoped like the requests they are about."""

from __future__ import annotations

from typing import Any

from django.db.models import CharField, Q, QuerySet
from django.db.models.functions import Cast

from apps.audit.models import AuditEvent
from apps.scheduling.models import PreemptionProposal, Request
from apps.scheduling.selectors import (
    proposal_queryset,
    request_queryset,
    token_queues,
)


def audit_event_queryset(*, token: Any = None) -> QuerySet[AuditEvent]:
    """The audit events the caller may read.

    A token limited to queues sees the events about requests (and their
    preemption proposals) only when ``request_queryset`` / ``proposal_queryset``
    (the same selectors as ``/api/requests/`` and ``/api/preemptions/``) show
    it the object; events about anything else are not queue-bound. Events of
    requests that no longer exist are hidden from such a token: their queue
    cannot be known.
    """
    events = AuditEvent.objects.all()
    if token_queues(token) is None:
        return events
    # object_id is text (it names rows of any model); the ids compared as text.
    request_ids = (
        request_queryset(token=token)
        .annotate(object_key=Cast("pk", CharField()))
        .values("object_key")
    )
    proposal_ids = (
        proposal_queryset(token=token)
        .annotate(object_key=Cast("pk", CharField()))
        .values("object_key")
    )
    request_type = Request._meta.model_name
    proposal_type = PreemptionProposal._meta.model_name
    return events.filter(
        ~Q(object_type__in=[request_type, proposal_type])
        | Q(object_type=request_type, object_id__in=request_ids)
        | Q(object_type=proposal_type, object_id__in=proposal_ids)
    )
