"""Usage and cost over REST when Prometheus is missing, unreachable or slow:
booked figures answer, used ones are null with the reason; bad input is a 400
naming the field; prices are an admin's and audited."""

from __future__ import annotations

import csv
import io
import socket
import threading
from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from apps.audit.models import AuditEvent
from apps.inventory.models import Chip, Slice
from apps.metering.ledger import bookings_refresh
from apps.metering.models import Booking, ChipPrice


@pytest.fixture
def silent_server():
    """A TCP server that accepts and never answers: a hung Prometheus."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    stop.set()
    thread.join()
    for conn in held:
        conn.close()
    listener.close()


def test_without_prometheus_the_booked_figures_answer_and_say_why(
    synced, viewer_client, settings
):
    settings.PROMETHEUS_URL = ""
    answer = viewer_client.get("/api/usage/chips/", {"cluster": synced.id})
    assert answer.status_code == 200
    body = answer.json()
    assert body["metrics"]["configured"] is False
    assert body["metrics"]["available"] is False
    assert "PROMETHEUS_URL" in body["metrics"]["reason"]
    assert len(body["results"]) == Chip.objects.filter(cluster=synced).count() == 12
    booked = [c for c in body["results"] if c["aicore_booked"]]
    assert booked, "the guide's slices book AICores on some chip"
    assert all(
        c["aicore_used_percent"] is None and c["hardware_healthy"] is None
        for c in body["results"]
    )

    slices = viewer_client.get("/api/usage/slices/", {"cluster": synced.id}).json()
    assert len(slices["results"]) == Slice.objects.filter(cluster=synced).count() > 0
    assert all(
        s["aicore_used_percent"] is None and s["flags"] == [] for s in slices["results"]
    )


def test_an_unreachable_prometheus_is_named_and_nothing_fails(
    synced, viewer_client, settings
):
    settings.PROMETHEUS_URL = "http://127.0.0.1:9"  # discard: refused
    body = viewer_client.get("/api/usage/chips/", {"cluster": synced.id}).json()
    assert body["metrics"] == {
        **body["metrics"],
        "configured": True,
        "available": False,
    }
    assert "could not be reached" in body["metrics"]["reason"]


def test_a_slow_prometheus_times_out_into_a_reason(
    synced, viewer_client, settings, silent_server
):
    settings.PROMETHEUS_URL = silent_server
    settings.PROMETHEUS_TIMEOUT_SECONDS = 0.5
    chip = Chip.objects.filter(cluster=synced).first()
    answer = viewer_client.get(f"/api/usage/chips/{chip.id}/history/")
    assert answer.status_code == 200
    body = answer.json()
    assert "did not answer within 0.5 s" in body["metrics"]["reason"]
    # The booked series come from the portal and are there all the same.
    assert {s["name"] for s in body["series"]} == {
        "aicore_booked_percent",
        "memory_booked_mb",
    }


def test_the_report_counts_booked_hours_and_cost_without_prometheus(
    synced, viewer_client, settings
):
    settings.PROMETHEUS_URL = ""
    now = timezone.now()
    opened, closed = bookings_refresh(synced, now=now)
    assert opened == Slice.objects.filter(cluster=synced).count()
    assert closed == 0
    assert bookings_refresh(synced, now=now) == (0, 0)  # idempotent
    # Back-date them two hours so the period has booked time to count.
    Booking.objects.update(started_at=now - timedelta(hours=2))
    ChipPrice.objects.create(
        common_word=Booking.objects.first().common_word, price_per_hour=Decimal("10")
    )
    start = (now - timedelta(hours=3)).isoformat()
    answer = viewer_client.get(
        "/api/usage/report/",
        {
            "cluster": synced.id,
            "start": start,
            "end": now.isoformat(),
            "group_by": "chip_type",
        },
    )
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert body["metrics"]["available"] is False
    totals = body["totals"]
    assert totals["slices"] == opened
    assert totals["slice_hours"] == pytest.approx(2 * opened, rel=1e-3)
    assert totals["used_slice_hours"] is None
    assert totals["idle_slice_hours"] is None
    priced = [r for r in body["rows"] if r["cost"] is not None]
    assert priced
    assert all(Decimal(r["cost"]) > 0 for r in priced)

    csv_answer = viewer_client.get(
        "/api/usage/report/",
        {
            "cluster": synced.id,
            "start": start,
            "end": now.isoformat(),
            "group_by": "chip_type",
            "format": "csv",
        },
    )
    assert csv_answer.status_code == 200
    assert csv_answer["Content-Type"].startswith("text/csv")
    assert "attachment" in csv_answer["Content-Disposition"]
    rows = list(csv.reader(io.StringIO(csv_answer.content.decode())))
    assert rows[0][:3] == ["group", "slices", "slice_hours"]
    assert rows[-1][0] == "total"
    assert int(rows[-1][1]) == opened


def test_a_slice_that_ends_closes_its_booking(synced):
    now = timezone.now()
    bookings_refresh(synced, now=now)
    gone = Slice.objects.filter(cluster=synced).first()
    gone.delete()
    later = now + timedelta(seconds=30)
    assert bookings_refresh(synced, now=later) == (0, 1)
    closed = Booking.objects.get(ended_at__isnull=False)
    assert closed.pod_name == gone.pod_name
    assert closed.ended_at == later


def test_a_slice_whose_key_changes_is_never_booked_twice(synced):
    # Sync learned the pod's uid (or the slice moved chips): a new key for the
    # same pod and container. The new booking starts where the old one ended.
    now = timezone.now()
    slice_ = Slice.objects.filter(cluster=synced).first()
    slice_.started_at = now - timedelta(hours=3)
    slice_.pod_uid = ""
    slice_.save()
    bookings_refresh(synced, now=now - timedelta(hours=1))
    Slice.objects.filter(pk=slice_.pk).update(pod_uid="uid-learned-later")
    bookings_refresh(synced, now=now)
    old, new = Booking.objects.filter(pod_name=slice_.pod_name).order_by("started_at")
    assert old.ended_at == now
    assert new.ended_at is None
    assert new.started_at == now  # not the pod's start, three hours ago


# Committed rows: each thread has its own connection.
@pytest.mark.django_db(transaction=True)
def test_two_refreshes_at_once_open_each_booking_once(synced):
    import threading

    from django.db import connection

    now = timezone.now()
    errors: list[BaseException] = []

    def refresh() -> None:
        try:
            bookings_refresh(synced, now=now)
        except BaseException as error:  # reported below
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=refresh) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert Booking.objects.count() == Slice.objects.filter(cluster=synced).count()


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"cluster": 0}, "cluster"),
        ({}, "start"),
        ({"cluster": "x"}, "cluster"),
        ({"month": "2026-13"}, "month"),
        ({"month": "9999-12"}, "month"),
        ({"month": "0000-01"}, "month"),
        ({"month": "2026-11", "start": "2026-11-01T00:00:00Z"}, "month"),
        ({"start": "2026-11-02T00:00:00Z", "end": "2026-11-01T00:00:00Z"}, "start"),
        ({"start": "2026-11-01T00:00:00Z"}, "end"),
        ({"start": "2026-01-01T00:00:00Z", "end": "2026-11-01T00:00:00Z"}, "start"),
        ({"month": "2026-11", "group_by": "pod"}, "group_by"),
        ({"month": "2026-11", "format": "xml"}, "format"),
    ],
)
def test_bad_report_input_is_a_400_naming_the_field(
    synced, viewer_client, params, field
):
    # With one cluster the parameter may be left out; "cluster": 0 is checked.
    answer = viewer_client.get("/api/usage/report/", params)
    assert answer.status_code == 400, answer.content
    assert field in answer.json()["errors"]


def test_bad_history_input_is_a_400_naming_the_field(synced, viewer_client):
    chip = Chip.objects.filter(cluster=synced).first()
    too_fine = viewer_client.get(
        f"/api/usage/chips/{chip.id}/history/",
        {"start": "2026-11-01T00:00:00Z", "end": "2026-11-08T00:00:00Z", "step": 1},
    )
    assert too_fine.status_code == 400
    assert "step" in too_fine.json()["errors"]
    assert viewer_client.get("/api/usage/chips/999999/history/").status_code == 404
    year_one = viewer_client.get(
        f"/api/usage/chips/{chip.id}/history/", {"end": "0001-01-01T00:10:00Z"}
    )
    assert year_one.status_code == 400
    assert "end" in year_one.json()["errors"]
    assert (
        viewer_client.get(
            "/api/usage/slices/", {"cluster": synced.id, "flag": "x"}
        ).status_code
        == 400
    )
    assert (
        viewer_client.get("/api/usage/chips/", {"cluster": 999999}).status_code == 404
    )


def test_prices_are_set_by_admins_checked_and_audited(
    synced, viewer_client, admin_client_api
):
    word = Chip.objects.filter(cluster=synced).first().common_word
    assert (
        viewer_client.put(
            f"/api/chip-prices/{word}/", {"price_per_hour": "3"}, format="json"
        ).status_code
        == 403
    )
    unknown = admin_client_api.put(
        "/api/chip-prices/NoSuchChip/", {"price_per_hour": "3"}, format="json"
    )
    assert unknown.status_code == 400
    assert "common_word" in unknown.json()["errors"]
    negative = admin_client_api.put(
        f"/api/chip-prices/{word}/", {"price_per_hour": "-1"}, format="json"
    )
    assert negative.status_code == 400
    assert "price_per_hour" in negative.json()["errors"]
    assert ChipPrice.objects.count() == 0  # no partial write

    set_ = admin_client_api.put(
        f"/api/chip-prices/{word}/", {"price_per_hour": "12.5"}, format="json"
    )
    assert set_.status_code == 200
    assert set_.json()["price_per_hour"] == "12.5000"
    assert set_.json()["currency"] == "CNY"
    listed = viewer_client.get("/api/chip-prices/").json()
    assert [p["common_word"] for p in listed] == [word]
    assert AuditEvent.objects.filter(action="chip_price.set").count() == 1
    assert admin_client_api.delete(f"/api/chip-prices/{word}/").status_code == 204
    assert admin_client_api.delete(f"/api/chip-prices/{word}/").status_code == 404
    assert AuditEvent.objects.filter(action="chip_price.delete").count() == 1
