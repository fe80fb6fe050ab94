"""Slice-hours and cost over a period, grouped: pure arithmetic on bookings.

Booked hours come from the ledger (a booking's overlap with the period); used
and idle hours from Prometheus (per slice key, see ``queries.period_sums``).
A slice's cost is its card-hours (booked hours times the part of the card its
AICores are) times its chip type's hourly price, so a vir01 on a 310P3 pays an
eighth of the card and the slices of a fully booked card sum to the card.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import ROUND_HALF_UP, Decimal
from typing import Protocol

from apps.metering.queries import SliceKey

GROUPINGS = ("namespace", "queue", "chip_type")
CENTS = Decimal("0.01")


class Booked(Protocol):
    """What the report reads of a booking (``models.Booking`` has it)."""

    namespace: str
    queue: str
    common_word: str
    node_name: str
    chip_index: int
    pod_name: str
    started_at: datetime
    ended_at: datetime | None

    @property
    def card_share(self) -> float: ...


@dataclass(frozen=True)
class Measured:
    """Slice-hours Prometheus saw (samples present), used (times AICore use)
    and idle (at or under the idle threshold); None: not measured."""

    seen: float | None = None
    used: float | None = None
    idle: float | None = None


NOTHING_SEEN = Measured(0.0, 0.0, 0.0)


@dataclass
class Row:
    """One group's totals."""

    group: str
    slices: int = 0
    slice_hours: float = 0.0
    card_hours: float = 0.0
    measured_slice_hours: float | None = None
    used_slice_hours: float | None = None
    idle_slice_hours: float | None = None
    cost: Decimal | None = None

    def add_measured(self, measured: Measured) -> None:
        """Add slice-hours Prometheus measured; None (not asked) adds nothing."""
        if measured.seen is not None:
            self.measured_slice_hours = (
                self.measured_slice_hours or 0.0
            ) + measured.seen
        if measured.used is not None:
            self.used_slice_hours = (self.used_slice_hours or 0.0) + measured.used
        if measured.idle is not None:
            self.idle_slice_hours = (self.idle_slice_hours or 0.0) + measured.idle


@dataclass
class Report:
    rows: list[Row]
    totals: Row
    unpriced: list[str]


def overlap_hours(
    start: datetime, end: datetime, since: datetime, until: datetime | None
) -> float:
    """Hours of [since, until) inside [start, end); an open booking runs to ``end``."""
    lo = max(start, since)
    hi = min(end, until) if until is not None else end
    return max(0.0, (hi - lo).total_seconds() / 3600)


def group_of(booking: Booked, group_by: str) -> str:
    if group_by == "namespace":
        return booking.namespace
    if group_by == "queue":
        return booking.queue
    if group_by == "chip_type":
        return booking.common_word
    raise ValueError(f"group_by must be one of {', '.join(GROUPINGS)}")


def booking_key(booking: Booked) -> SliceKey:
    return booking.node_name, booking.chip_index, booking.namespace, booking.pod_name


def build_report(
    bookings: Iterable[Booked],
    *,
    start: datetime,
    end: datetime,
    group_by: str,
    prices: Mapping[str, Decimal],
    measured: Mapping[SliceKey, Measured] | None,
) -> Report:
    """Group the bookings that overlap [start, end).

    ``measured`` is slice-hours per slice key from Prometheus, or None when
    it could not be asked (the columns are then None, never 0). A key's hours
    are shared among its bookings by their booked hours, so the figures of a
    pod's containers on one chip add up to what Prometheus measured.
    """
    held: list[tuple[Booked, float]] = []
    booked_per_key: dict[SliceKey, float] = defaultdict(float)
    for booking in bookings:
        hours = overlap_hours(start, end, booking.started_at, booking.ended_at)
        if hours <= 0:
            continue
        held.append((booking, hours))
        booked_per_key[booking_key(booking)] += hours

    rows: dict[str, Row] = {}
    card_hours_by_type: dict[str, float] = defaultdict(float)
    for booking, hours in held:
        row = rows.setdefault(
            group_of(booking, group_by), Row(group_of(booking, group_by))
        )
        row.slices += 1
        row.slice_hours += hours
        card_hours = hours * booking.card_share
        row.card_hours += card_hours
        key = booking_key(booking)
        if measured is not None:
            found = measured.get(key, NOTHING_SEEN)
            share = hours / booked_per_key[key]
            row.add_measured(
                Measured(
                    seen=(found.seen or 0.0) * share,
                    used=(found.used or 0.0) * share,
                    idle=(found.idle or 0.0) * share,
                )
            )
        price = prices.get(booking.common_word)
        if price is not None:
            row.cost = (row.cost or Decimal(0)) + price * Decimal(repr(card_hours))
        card_hours_by_type[booking.common_word] += card_hours

    ordered = sorted(rows.values(), key=lambda r: (-r.card_hours, r.group))
    totals = Row("total")
    for row in ordered:
        totals.slices += row.slices
        totals.slice_hours += row.slice_hours
        totals.card_hours += row.card_hours
        totals.add_measured(
            Measured(
                row.measured_slice_hours, row.used_slice_hours, row.idle_slice_hours
            )
        )
        if row.cost is not None:
            totals.cost = (totals.cost or Decimal(0)) + row.cost
        # Round each row for display; the total sums unrounded costs.
        row.cost = (
            row.cost.quantize(CENTS, ROUND_HALF_UP) if row.cost is not None else None
        )
    if totals.cost is not None:
        totals.cost = totals.cost.quantize(CENTS, ROUND_HALF_UP)
    if measured is not None and totals.used_slice_hours is None:
        # Measured, and nothing was seen: zero, not unknown.
        totals.add_measured(Measured(0.0, 0.0, 0.0))
    unpriced = sorted(t for t in card_hours_by_type if t not in prices)
    return Report(rows=ordered, totals=totals, unpriced=unpriced)
