"""The report's arithmetic: booked hours from the ledger, card shares, cost."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from apps.metering.report import Measured, build_report, overlap_hours

T0 = datetime(2026, 11, 1, tzinfo=UTC)
HOUR = timedelta(hours=1)


@dataclass
class B:
    namespace: str
    queue: str
    common_word: str
    node_name: str
    chip_index: int
    pod_name: str
    started_at: datetime
    ended_at: datetime | None
    aicore: int
    chip_aicore: int = 8

    @property
    def card_share(self) -> float:
        return self.aicore / self.chip_aicore


def booking(
    pod: str,
    aicore: int,
    *,
    ns: str = "team-a",
    queue: str = "q1",
    chip: int = 0,
    word: str = "310P3",
    since: datetime = T0,
    until: datetime | None = None,
) -> B:
    return B(ns, queue, word, "node-1", chip, pod, since, until, aicore)


def test_overlap_clips_to_the_period_and_an_open_booking_runs_to_its_end():
    assert overlap_hours(T0, T0 + 10 * HOUR, T0 - HOUR, T0 + 2 * HOUR) == 2
    assert overlap_hours(T0, T0 + 10 * HOUR, T0 + 8 * HOUR, None) == 2
    assert overlap_hours(T0, T0 + HOUR, T0 + 2 * HOUR, None) == 0
    assert overlap_hours(T0, T0 + HOUR, T0 - 2 * HOUR, T0 - HOUR) == 0


def test_a_fully_booked_card_costs_exactly_the_card():
    # vir04 + vir02 + vir02 fill a 310P3's 8 AICores for 10 hours.
    slices = [
        booking("a", 4),
        booking("b", 2, ns="team-b"),
        booking("c", 2, ns="team-b"),
    ]
    report = build_report(
        slices,
        start=T0,
        end=T0 + 10 * HOUR,
        group_by="namespace",
        prices={"310P3": Decimal("12.00")},
        measured=None,
    )
    by = {r.group: r for r in report.rows}
    assert by["team-a"].cost == Decimal("60.00")  # half the card
    assert by["team-b"].cost == Decimal("60.00")
    assert report.totals.cost == Decimal("120.00")  # 10 card-hours x 12
    assert report.totals.card_hours == pytest.approx(10)
    assert report.totals.slice_hours == pytest.approx(30)
    assert report.totals.used_slice_hours is None  # unknown, never 0
    assert report.unpriced == []


def test_a_vir01_pays_an_eighth_of_the_card_never_the_whole():
    report = build_report(
        [booking("a", 1)],
        start=T0,
        end=T0 + 8 * HOUR,
        group_by="chip_type",
        prices={"310P3": Decimal("8")},
        measured=None,
    )
    assert report.rows[0].card_hours == pytest.approx(1)
    assert report.rows[0].cost == Decimal("8.00")


def test_used_and_idle_hours_are_shared_by_booked_hours_within_a_key():
    # Two containers of one pod on one chip are one key in Prometheus' answer.
    first = booking("p", 2, since=T0, until=T0 + 3 * HOUR, queue="q1")
    second = booking("p", 2, since=T0 + 2 * HOUR, until=T0 + 3 * HOUR, queue="q2")
    key = ("node-1", 0, "team-a", "p")
    report = build_report(
        [first, second],
        start=T0,
        end=T0 + 4 * HOUR,
        group_by="queue",
        prices={},
        measured={key: Measured(seen=3.0, used=2.0, idle=1.0)},
    )
    by = {r.group: r for r in report.rows}
    assert by["q1"].used_slice_hours == pytest.approx(1.5)
    assert by["q2"].used_slice_hours == pytest.approx(0.5)
    assert report.totals.idle_slice_hours == pytest.approx(1.0)
    assert by["q1"].measured_slice_hours == pytest.approx(2.25)
    assert report.totals.cost is None
    assert report.unpriced == ["310P3"]


def test_bookings_outside_the_period_are_left_out():
    report = build_report(
        [booking("old", 4, since=T0 - 5 * HOUR, until=T0 - HOUR), booking("now", 4)],
        start=T0,
        end=T0 + HOUR,
        group_by="namespace",
        prices={"310P3": Decimal("1")},
        measured={},
    )
    assert report.totals.slices == 1
    # Measured, and none used: 0, not None.
    assert report.totals.used_slice_hours == 0


def test_an_unknown_grouping_is_refused():
    with pytest.raises(ValueError, match="group_by"):
        build_report(
            [booking("a", 1)],
            start=T0,
            end=T0 + HOUR,
            group_by="pod",
            prices={},
            measured=None,
        )
