"""Writes of the metering app: chip-type prices and the periodic refresh."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.db import transaction
from django.utils import timezone

from apps.audit.services import audit_record
from apps.common.exceptions import NotFound, ValidationFailed
from apps.inventory.models import ChipType, Cluster
from apps.metering.ledger import bookings_refresh
from apps.metering.models import ChipPrice


def chip_price_set(
    *, common_word: str, price_per_hour: Decimal, actor: Any
) -> ChipPrice:
    """Set one chip type's hourly price (a card's, whatever its slices)."""
    if not ChipType.objects.filter(common_word=common_word).exists():
        raise ValidationFailed(
            f"no chip type {common_word!r}",
            detail={"common_word": ["unknown chip type"]},
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
            raise NotFound(f"no price for chip type {common_word!r}")
        audit_record(
            actor=actor,
            action="chip_price.delete",
            target=price,
            before={"price_per_hour": str(price.price_per_hour)},
        )
        price.delete()


def metering_refresh() -> dict[str, int]:
    """Bring every cluster's bookings up to date, then the derived gauges."""
    from apps.metering.gauges import gauges_refresh

    now = timezone.now()
    opened = closed = 0
    for cluster in Cluster.objects.all():
        o, c = bookings_refresh(cluster, now=now)
        opened, closed = opened + o, closed + c
    gauges_refresh(now=now)
    return {"opened": opened, "closed": closed}
