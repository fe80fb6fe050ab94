"""/api/alerts/ against a real Alertmanager (the ``alertmanager`` fixture):
the portal's alerts read from it, and an admin's silence created in it and
audited. Alerts are posted into it as Prometheus would."""

from __future__ import annotations

import pytest

from apps.audit.models import AuditEvent
from tests.alerts.conftest import post_alerts
from tests.polling import wait_for

pytestmark = pytest.mark.django_db

CHIP = {
    "alertname": "VnpuChipUnhealthy",
    "severity": "critical",
    "cluster": "guide",
    "node": "n1",
    "chip": "uuid-1",
    "chip_type": "Ascend310P",
}


@pytest.fixture
def firing(alertmanager, settings, guide_cluster):
    """The portal pointed at Alertmanager, which holds the sick chip's alert
    from two web replicas, a sync alert, and an alert that is not the portal's."""
    settings.ALERTMANAGER_URL = alertmanager.url
    annotations = {
        "summary": "Chip uuid-1 (Ascend310P) on node n1 of cluster guide is reported unhealthy",
        "portal_url": "https://vnpu.example.com/chips?cluster=guide&chip=uuid-1",
        "runbook": "docs/alerts.md#vnpuchipunhealthy",
    }
    post_alerts(
        alertmanager.url,
        [
            {"labels": {**CHIP, "instance": "web-0:8000"}, "annotations": annotations},
            {"labels": {**CHIP, "instance": "web-1:8000"}, "annotations": annotations},
            {
                "labels": {
                    "alertname": "VnpuSyncDown",
                    "severity": "critical",
                    "cluster": "guide",
                    "state": "stale",
                },
                "annotations": {"summary": "Sync of cluster guide is stale"},
            },
            {"labels": {"alertname": "NodeDiskFull", "severity": "critical"}},
        ],
    )
    wait_for(lambda: len(alertmanager.alerts()) == 4, "the alerts in Alertmanager")
    return alertmanager


def test_the_portal_s_alerts_are_read_from_alertmanager(firing, viewer_client):
    body = viewer_client.get("/api/alerts/").json()
    assert body["source"] == "alertmanager"
    assert body["notifications_configured"] is True
    assert body["error"] is None
    assert body["not_evaluated"] == []
    # the other team's alert is left out, the two replicas are one alert
    assert [a["name"] for a in body["alerts"]] == ["VnpuChipUnhealthy", "VnpuSyncDown"]
    chip = body["alerts"][0]
    assert chip["labels"] == CHIP
    assert chip["state"] == "firing"
    assert chip["starts_at"] is not None
    assert chip["summary"].startswith("Chip uuid-1 (Ascend310P)")
    assert chip["portal_path"] == "/chips?cluster=guide&chip=uuid-1"


def test_an_admin_silences_an_alert_in_alertmanager(
    firing, admin_client_api, guide_cluster
):
    # when an admin silences the sick chip's alert for two hours
    answer = admin_client_api.post(
        "/api/alerts/silences/",
        {"labels": CHIP, "duration": "2h", "comment": "card swap at 14:00"},
        format="json",
    )
    assert answer.status_code == 201, answer.json()
    silence = answer.json()
    # then Alertmanager holds it, made by the admin, matching those labels exactly
    (held,) = firing.silences()
    assert held["id"] == silence["id"]
    assert held["createdBy"] == "ada"
    assert held["comment"] == "card swap at 14:00"
    assert held["status"]["state"] == "active"
    assert {
        (m["name"], m["value"], m["isRegex"], m["isEqual"]) for m in held["matchers"]
    } == {(name, value, False, True) for name, value in CHIP.items()}
    # and the audit log says who silenced what, why, and until when
    event = AuditEvent.objects.get(action="alert.silence")
    assert (event.actor_name, event.object_type, event.object_id) == (
        "ada",
        "silence",
        silence["id"],
    )
    assert event.reason == "card swap at 14:00"
    assert event.cluster == guide_cluster
    assert event.after["labels"] == CHIP
    assert event.after["ends_at"] == silence["ends_at"].replace("Z", "+00:00")
    # and the list shows the alert silenced, by whom, the other one still firing
    states = {
        a["name"]: a for a in admin_client_api.get("/api/alerts/").json()["alerts"]
    }
    chip = states["VnpuChipUnhealthy"]
    assert chip["state"] == "silenced"
    assert [(s["id"], s["created_by"], s["comment"]) for s in chip["silenced_by"]] == [
        (silence["id"], "ada", "card swap at 14:00")
    ]
    assert states["VnpuSyncDown"]["state"] == "firing"


def test_a_stopped_alertmanager_empties_the_list_and_refuses_a_silence(
    firing, admin_client_api
):
    # given Alertmanager was answering, when it stops
    assert admin_client_api.get("/api/alerts/").json()["alerts"]
    firing.stop()
    # then the list is empty with the reason, and a silence is a 503
    body = admin_client_api.get("/api/alerts/").json()
    assert body["alerts"] == []
    assert body["error"]["code"] == "alertmanager_unavailable"
    answer = admin_client_api.post(
        "/api/alerts/silences/",
        {"labels": CHIP, "duration": "1h", "comment": "x"},
        format="json",
    )
    assert answer.status_code == 503
    assert answer.json()["code"] == "alertmanager_unavailable"
    assert not AuditEvent.objects.filter(action="alert.silence").exists()


def test_a_silence_whose_audit_event_cannot_be_written_is_expired_again(
    firing, monkeypatch, guide_cluster
):
    # given the audit log cannot be written (the database failed mid-way)
    from datetime import timedelta

    from django.db import DatabaseError

    from apps.accounts.services import user_ensure
    from apps.alerts import services

    def refused(**_: object) -> None:
        raise DatabaseError("the database went away")

    monkeypatch.setattr(services, "audit_record", refused)
    admin = user_ensure(username="grace", role="admin")
    # when an admin silences the chip's alert
    with pytest.raises(DatabaseError):
        services.silence_create(
            actor=admin, labels=CHIP, duration=timedelta(hours=1), comment="swap"
        )
    # then Alertmanager holds the silence expired: none without its audit event
    (held,) = firing.silences()
    assert held["createdBy"] == "grace"
    assert held["status"]["state"] == "expired"
    assert not AuditEvent.objects.filter(action="alert.silence").exists()
