"""The real Alertmanager of harness/alertmanager.py routes to the test's receiver."""

from __future__ import annotations

import json
import urllib.request
from typing import Any


def _post_alert(
    url: str, labels: dict[str, str], *, ends_at: str | None = None
) -> None:
    alert: dict[str, Any] = {"labels": labels, "annotations": {"summary": "x"}}
    if ends_at:
        alert["endsAt"] = ends_at
    request = urllib.request.Request(  # noqa: S310 - loopback
        f"{url}/api/v2/alerts",
        data=json.dumps([alert]).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as reply:  # noqa: S310 - loopback
        assert reply.status == 200


def test_an_alert_reaches_the_webhook_firing_then_resolved(alertmanager: Any) -> None:
    labels = {"alertname": "VnpuHarnessCheck", "cluster": "demo", "severity": "info"}
    _post_alert(alertmanager.url, labels)

    firing = alertmanager.receiver.wait_for(
        lambda n: n.status == "firing", "the firing notification", timeout=30
    )
    assert firing.alerts[0]["labels"]["alertname"] == "VnpuHarnessCheck"
    assert [a["labels"]["cluster"] for a in alertmanager.alerts()] == ["demo"]

    _post_alert(alertmanager.url, labels, ends_at="2000-01-01T00:00:00Z")
    resolved = alertmanager.receiver.wait_for(
        lambda n: n.status == "resolved", "the resolved notification", timeout=30
    )
    assert resolved.received_at >= firing.received_at
    assert alertmanager.silences() == []
