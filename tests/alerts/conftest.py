"""Alerts: an unhealthy chip in the guide's cluster, and Alertmanager's API."""

from __future__ import annotations

import json
import urllib.request
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest


@pytest.fixture
def sick_chip(guide_cluster, fixtures_dir):
    """The guide's nodes synced, one chip its device plugin calls unhealthy."""
    from apps.inventory.models import Chip
    from apps.inventory.sync.writer import ClusterWriter

    nodes = [
        json.loads((fixtures_dir / n).read_text())
        for n in ("node-310p3.json", "node-910b4.json")
    ]
    ClusterWriter(guide_cluster).replace_nodes(nodes)
    Chip.objects.update(healthy=True)
    sick = Chip.objects.select_related("node").filter(common_word="Ascend310P").first()
    assert sick is not None
    Chip.objects.filter(pk=sick.pk).update(healthy=False)
    return sick


def post_alerts(url: str, alerts: list[dict[str, Any]]) -> None:
    """Post alerts into Alertmanager as Prometheus does (``POST /api/v2/alerts``),
    firing from a minute ago for an hour."""
    now = datetime.now(UTC)
    body = [
        {
            "startsAt": (now - timedelta(minutes=1)).isoformat(),
            "endsAt": (now + timedelta(hours=1)).isoformat(),
            **alert,
        }
        for alert in alerts
    ]
    request = urllib.request.Request(  # noqa: S310 - the test's own loopback server
        f"{url}/api/v2/alerts",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as reply:  # noqa: S310
        assert reply.status == 200
