"""/api/alerts/ without a live Alertmanager: the portal's own evaluation, who
may silence, bad input, and an Alertmanager that does not answer."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from apps.accounts.services import user_ensure
from apps.audit.models import AuditEvent
from harness.processes import free_port

pytestmark = pytest.mark.django_db
URL = "/api/alerts/"
SILENCES = "/api/alerts/silences/"
GOOD = {
    "labels": {"alertname": "VnpuChipUnhealthy", "cluster": "guide"},
    "duration": "2h",
    "comment": "swapping the card",
}


@pytest.fixture
def nowhere(settings):
    """An Alertmanager address nothing listens on."""
    settings.ALERTMANAGER_URL = f"http://127.0.0.1:{free_port()}"
    settings.ALERTMANAGER_TIMEOUT_SECONDS = 2


def test_without_alertmanager_the_portal_evaluates_the_alerts(
    settings, sick_chip, viewer_client
):
    # given no Alertmanager, and a chip its device plugin calls unhealthy
    settings.ALERTMANAGER_URL = ""
    # when a viewer reads the alerts
    answer = viewer_client.get(URL)
    # then the portal says it evaluated them itself and nothing is sent
    assert answer.status_code == 200
    body = answer.json()
    assert body["source"] == "portal"
    assert body["notifications_configured"] is False
    assert body["error"] is None
    assert {"VnpuBindTimeouts", "VnpuNodeLockReleased"} == set(body["not_evaluated"])
    # and the sick chip's alert names it, true now, with its page and runbook
    (chip,) = [a for a in body["alerts"] if a["name"] == "VnpuChipUnhealthy"]
    assert chip["state"] == "firing"
    assert chip["severity"] == "critical"
    assert chip["starts_at"] is None
    assert chip["labels"] == {
        "alertname": "VnpuChipUnhealthy",
        "severity": "critical",
        "cluster": "guide",
        "node": sick_chip.node.name,
        "chip": sick_chip.uuid,
        "chip_type": "Ascend310P",
    }
    assert chip["portal_path"] == f"/chips?cluster=guide&chip={sick_chip.uuid}"
    assert chip["runbook"] == "docs/alerts.md#vnpuchipunhealthy"
    assert sick_chip.uuid in chip["summary"]
    assert chip["silenced_by"] == []


def test_without_alertmanager_nothing_can_be_silenced(settings, admin_client_api):
    settings.ALERTMANAGER_URL = ""
    answer = admin_client_api.post(SILENCES, GOOD, format="json")
    assert answer.status_code == 409
    assert answer.json()["code"] == "notifications_not_configured"
    assert not AuditEvent.objects.filter(action="alert.silence").exists()


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"duration": "4m"}, "duration"),
        ({"duration": "31d"}, "duration"),
        ({"duration": "2 hours"}, "duration"),
        ({"comment": ""}, "comment"),
        ({"comment": None}, "comment"),
        ({"labels": {"alertname": "VnpuChipUnhealthy", "foo": "x"}}, "labels.foo"),
        ({"labels": {"alertname": "NotOurs"}}, "labels.alertname"),
        ({"labels": {"cluster": "guide"}}, "labels.alertname"),
        ({"labels": "VnpuChipUnhealthy"}, "labels"),
    ],
)
def test_bad_input_is_a_400_naming_the_field(nowhere, admin_client_api, change, field):
    body = {**GOOD, **change}
    if change.get("comment") is None and "comment" in change:
        del body["comment"]
    answer = admin_client_api.post(SILENCES, body, format="json")
    assert answer.status_code == 400, answer.json()
    assert answer.json()["code"] == "invalid"
    assert field in answer.json()["errors"]
    assert not AuditEvent.objects.filter(action="alert.silence").exists()


@pytest.mark.parametrize("role", ["viewer", "ci", "operator"])
def test_only_admins_silence(nowhere, role):
    client = APIClient()
    client.force_authenticate(user=user_ensure(username=f"u-{role}", role=role))
    assert client.get(URL).status_code == 200
    answer = client.post(SILENCES, GOOD, format="json")
    assert answer.status_code == 403
    assert answer.json()["code"] == "permission_denied"


def test_an_alertmanager_that_is_down_empties_the_list_and_fails_a_silence(
    nowhere, admin_client_api
):
    # when Alertmanager does not answer, the list says why it is empty
    answer = admin_client_api.get(URL)
    assert answer.status_code == 200
    body = answer.json()
    assert body["source"] == "alertmanager"
    assert body["notifications_configured"] is True
    assert body["alerts"] == []
    assert body["error"]["code"] == "alertmanager_unavailable"
    assert "could not be reached" in body["error"]["message"]
    # and a silence is refused with a code, nothing audited
    answer = admin_client_api.post(SILENCES, GOOD, format="json")
    assert answer.status_code == 503
    assert answer.json()["code"] == "alertmanager_unavailable"
    assert not AuditEvent.objects.filter(action="alert.silence").exists()


def test_a_reader_of_chinese_gets_the_summaries_in_chinese(
    settings, sick_chip, viewer_client
):
    # given the portal evaluating its alerts, and a chip reported unhealthy
    settings.ALERTMANAGER_URL = ""
    # when a viewer whose browser asks for Chinese reads the alerts
    answer = viewer_client.get(URL, HTTP_ACCEPT_LANGUAGE="zh-CN")
    # then the summary is in Chinese, the name, labels and state as always
    assert answer.status_code == 200
    (chip,) = [a for a in answer.json()["alerts"] if a["name"] == "VnpuChipUnhealthy"]
    assert chip["state"] == "firing"
    assert chip["summary"] == (
        f"集群 guide 节点 {sick_chip.node.name} 上的芯片 {sick_chip.uuid}"
        "（Ascend310P）被报告为不健康"
    )
