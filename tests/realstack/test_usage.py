"""Bookings and cost on the real kube-apiserver and the real Volcano.

The booking ledger is opened from the slices sync reads off the pods the real
Volcano placed (its own annotation format, its choice of chip), and the cost
of a vir02 on a 310P3 is a quarter of the card's (2 of its 8 AICores). The
real stack has no npu-exporter (its nodes are KWOK's), so the used figures
are empty there and the answer says why; what they use is proven against a
real Prometheus on simcluster (tests/metering/test_usage_prometheus.py).
"""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.utils import timezone

from apps.inventory.models import Slice
from apps.metering.models import Booking, ChipPrice
from apps.metering.services import metering_refresh
from apps.scheduling.models import Request
from harness.portal import Running, ci_request, token_client
from tests.polling import wait_for
from tests.realstack.test_requests import _running_or_explain

pytestmark = [
    pytest.mark.realstack,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]

PRICE = Decimal("36")  # a 310P3 card-hour


def test_a_real_request_is_booked_priced_by_its_share_of_the_card_and_closed(
    kube_stack, real_cluster, cleanup, settings
):
    settings.PROMETHEUS_URL = ""
    settings.PREEMPTION_AUTO_APPROVE_PRIORITY_GAP = None
    ci = token_client("ci-usage", "operator")
    viewer = token_client("usage-viewer", "viewer")
    ChipPrice.objects.create(common_word="Ascend310P", price_per_hour=PRICE)
    with Running(real_cluster):
        submitted = ci.post(
            "/api/requests/", ci_request(idempotency_key="real-usage-1"), format="json"
        )
        assert submitted.status_code == 201, submitted.json()
        request_id = submitted.json()["id"]
        _running_or_explain(kube_stack, ci, request_id, timeout=90)
        pod_name = Request.objects.get(pk=request_id).pod_name
        slice_ = wait_for(
            lambda: Slice.objects.filter(
                cluster=real_cluster, pod_name=pod_name
            ).first(),
            "the request's slice synced",
            timeout=30,
        )

        metering_refresh()
        booking = Booking.objects.get(cluster=real_cluster, pod_name=pod_name)
        # What the real Volcano wrote, as the ledger keeps it.
        assert (booking.template, booking.common_word) == ("vir02", "Ascend310P")
        assert (booking.aicore, booking.chip_aicore) == (2, 8)
        assert booking.node_name == slice_.node_name == "npu-node-310p-01"
        assert booking.ended_at is None

        end = timezone.now()
        report = viewer.get(
            "/api/usage/report/",
            {
                "cluster": real_cluster.id,
                "group_by": "chip_type",
                "start": booking.started_at.isoformat(),
                "end": end.isoformat(),
            },
        )
        assert report.status_code == 200, report.content
        body = report.json()
        (row,) = [r for r in body["rows"] if r["group"] == "Ascend310P"]
        # Every 310P booking in the period, by its share of its card (the
        # scenario's own pods hold 310P slices too).
        start = booking.started_at
        expected = sum(
            (
                (min(b.ended_at or end, end) - max(b.started_at, start)).total_seconds()
                / 3600
            )
            * b.aicore
            / b.chip_aicore
            for b in Booking.objects.filter(
                cluster=real_cluster, common_word="Ascend310P"
            )
            if b.started_at < end and (b.ended_at is None or b.ended_at > start)
        )
        assert row["card_hours"] == pytest.approx(expected, rel=1e-6)
        assert Decimal(row["cost"]) == pytest.approx(
            PRICE * Decimal(repr(expected)), abs=Decimal("0.01")
        )
        assert row["used_slice_hours"] is None  # no npu-exporter on KWOK nodes
        assert "PROMETHEUS_URL" in body["metrics"]["reason"]

        released = ci.delete(f"/api/requests/{request_id}/")
        assert released.status_code in (200, 204), released.content
        wait_for(
            lambda: (
                not Slice.objects.filter(
                    cluster=real_cluster, pod_name=pod_name
                ).exists()
            ),
            "the released slice to leave the ledger",
            timeout=60,
        )
        metering_refresh()
    booking.refresh_from_db()
    assert booking.ended_at is not None
    assert booking.ended_at >= booking.started_at
