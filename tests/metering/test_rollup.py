"""Whole past days come from the daily rollup, the rest from Prometheus."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from apps.metering.models import Booking, RolledDay, UsageDay
from apps.metering.rollup import _segments

D = timedelta(days=1)


def at(day: int, hour: int = 0) -> datetime:
    return datetime(2026, 11, day, hour, tzinfo=UTC)


def test_stored_whole_days_are_read_and_the_rest_asked_in_joined_spans():
    days, spans = _segments(at(1), at(4, 12), {date(2026, 11, 1), date(2026, 11, 3)})
    assert days == [date(2026, 11, 1), date(2026, 11, 3)]
    assert spans == [(at(2), at(3)), (at(4), at(4, 12))]


def test_a_partial_first_day_is_asked_even_when_stored():
    days, spans = _segments(at(1, 6), at(3), {date(2026, 11, 1)})
    assert days == []
    assert spans == [(at(1, 6), at(3))]  # joined: the 1st from 06:00, and the 2nd


def test_nothing_stored_is_one_span():
    assert _segments(at(1), at(8), set()) == ([], [(at(1), at(8))])


def test_without_prometheus_the_stored_days_still_give_used_and_idle(
    synced, viewer_client, settings
):
    settings.PROMETHEUS_URL = ""
    booking = Booking.objects.create(
        cluster=synced,
        key="k",
        namespace="team-a",
        pod_name="p",
        queue="q",
        node_name="n1",
        chip_index=0,
        common_word="Ascend310P",
        aicore=4,
        chip_aicore=8,
        memory=12288,
        started_at=at(1),
        ended_at=at(3),
    )
    for day in (1, 2):
        RolledDay.objects.create(cluster=synced, day=date(2026, 11, day))
        UsageDay.objects.create(
            cluster=synced,
            day=date(2026, 11, day),
            node_name="n1",
            chip_index=0,
            namespace="team-a",
            pod_name="p",
            seen_hours=24,
            used_hours=12,
            idle_hours=6,
        )
    body = viewer_client.get(
        "/api/usage/report/", {"cluster": synced.id, "month": "2026-11"}
    ).json()
    (row,) = [r for r in body["rows"] if r["group"] == booking.namespace]
    assert row["slice_hours"] == pytest.approx(48)
    assert row["measured_slice_hours"] == pytest.approx(48)
    assert row["used_slice_hours"] == pytest.approx(24)
    assert row["idle_slice_hours"] == pytest.approx(12)
    # The rest of the month could not be measured, and the answer says why.
    assert body["metrics"]["available"] is False
    assert "PROMETHEUS_URL" in body["metrics"]["reason"]
