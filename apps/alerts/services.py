"""Silencing the portal's alerts in Alertmanager (admins only, audited)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from apps.alerts.alertmanager import alertmanager
from apps.alerts.errors import AlertmanagerRefused, AlertmanagerUnavailable
from apps.audit.services import audit_record
from apps.inventory.models import Cluster

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Silence:
    """A silence the portal created."""

    id: str
    labels: dict[str, str]
    starts_at: datetime
    ends_at: datetime
    created_by: str
    comment: str


def silence_create(
    *, actor: Any, labels: Mapping[str, str], duration: timedelta, comment: str
) -> Silence:
    """Silence the alerts whose labels equal ``labels`` for ``duration``.

    The silence is created in Alertmanager first (``createdBy`` is the user),
    then the audit event ``alert.silence`` is recorded with its id: no
    database transaction waits on Alertmanager. When Alertmanager refuses or
    is away, nothing is recorded and the error (NotificationsNotConfigured,
    AlertmanagerUnavailable, AlertmanagerRefused) reaches the caller; when
    the record cannot be written, the silence is expired again, so there is
    no silence without its audit event.

    Args:
        actor: the admin silencing.
        labels: label -> value, each an equality matcher (``alertname`` among
            them; checked by the API's serializer).
        duration: how long from now.
        comment: why, as the admin gave it (Alertmanager requires one).
    """
    client = alertmanager()
    starts_at = timezone.now()
    ends_at = starts_at + duration
    created_by = actor.get_username()
    matchers = [
        {"name": name, "value": value, "isRegex": False, "isEqual": True}
        for name, value in sorted(labels.items())
    ]
    silence_id = client.silence_create(
        matchers=matchers,
        starts_at=starts_at,
        ends_at=ends_at,
        created_by=created_by,
        comment=comment,
    )
    try:
        with transaction.atomic():
            event = audit_record(
                actor=actor,
                action="alert.silence",
                cluster=Cluster.objects.filter(name=labels.get("cluster", "")).first(),
                after={
                    "labels": dict(labels),
                    "starts_at": starts_at.isoformat(),
                    "ends_at": ends_at.isoformat(),
                },
                reason=comment,
            )
            event.object_type = "silence"
            event.object_id = silence_id
            event.object_repr = f"{labels.get('alertname', '')} {silence_id}"[:200]
            event.save(update_fields=["object_type", "object_id", "object_repr"])
    except Exception:
        try:
            client.silence_expire(silence_id)
        except (AlertmanagerUnavailable, AlertmanagerRefused):
            log.exception("silence %s kept without its audit event", silence_id)
        raise
    return Silence(
        id=silence_id,
        labels=dict(labels),
        starts_at=starts_at,
        ends_at=ends_at,
        created_by=created_by,
        comment=comment,
    )
