"""Writes of the metering app: chip-type prices and the periodic refresh."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from apps.audit.services import audit_record
from apps.common.exceptions import NotFound, ValidationFailed
from apps.inventory.models import ChipType, Cluster
from apps.metering.gauges import gauges_refresh
from apps.metering.ledger import bookings_refresh
from apps.metering.models import ChipPrice
from apps.metering.prometheus import MetricsUnavailable
from apps.metering.rollup import days_roll
from apps.metering.selectors import connect


def chip_price_set(
    *, common_word: str, price_per_hour: Decimal, actor: Any
) -> ChipPrice:
    """Set one chip type's hourly price (a card's, whatever its slices)."""
    if not ChipType.objects.filter(common_word=common_word).exists():
        raise ValidationFailed(
            gettext("no chip type %(chip_type)r") % {"chip_type": common_word},
            detail={"common_word": [gettext("unknown chip type")]},
        )
    with transaction.atomic():
        before = ChipPrice.objects.filter(common_word=common_word).first()
        price, _ = ChipPrice.objects.update_or_create(
            common_word=common_word,
            defaults={"price_per_hour": price_per_hour, "updated_by": actor},
        )
        audit_record(
            actor=actor,
            action="chip_price.set",
            target=price,
            before={"price_per_hour": str(before.price_per_hour)} if before else None,
            after={"price_per_hour": str(price.price_per_hour)},
        )
    return price


def chip_price_delete(*, common_word: str, actor: Any) -> None:
    with transaction.atomic():
        price = ChipPrice.objects.filter(common_word=common_word).first()
        if price is None:
            raise NotFound(
                gettext("no price for chip type %(chip_type)r")
                % {"chip_type": common_word}
            )
        audit_record(
            actor=actor,
            action="chip_price.delete",
            target=price,
            before={"price_per_hour": str(price.price_per_hour)},
        )
        price.delete()


def metering_refresh() -> dict[str, int]:
    """Bring every cluster's bookings up to date, then the derived gauges."""
    now = timezone.now()
    totals = {"opened": 0, "closed": 0, "days_rolled": 0}
    for cluster in Cluster.objects.all():
        opened, closed = bookings_refresh(cluster, now=now)
        totals["opened"] += opened
        totals["closed"] += closed
        totals["days_rolled"] += _roll_days(cluster, now)
    gauges_refresh(now=now)
    return totals


def _roll_days(cluster: Cluster, now: datetime) -> int:
    """Store finished days' usage; without Prometheus, later (nothing lost
    while its retention keeps the days)."""
    try:
        prom, vocabulary = connect(cluster)
        return days_roll(cluster, prom, vocabulary, now=now)
    except MetricsUnavailable:
        return 0
