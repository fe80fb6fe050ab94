"""Restart state after a publish: pending, restart (confirmed), in effect."""

from __future__ import annotations

import json

import pytest

from apps.audit.models import AuditEvent
from apps.inventory.models import Template
from tests.guide import POD_310P

pytestmark = pytest.mark.django_db

COMPONENTS = {"volcano-scheduler", "hami-scheduler", "hami-ascend-device-plugin"}


def _states(client, url) -> dict[str, str]:
    answer = client.get(url("restarts"))
    assert answer.status_code == 200, answer.json()
    return {c["component"]: c["restart_state"] for c in answer.json()["components"]}


@pytest.fixture
def published(cluster, operator_client, url, later_second):
    """A publish made in a later second than the pods' start (stamps are whole seconds)."""
    later_second()
    template = Template.objects.get(chip_type__cluster=cluster, name="vir01")
    operator_client.patch(f"/api/templates/{template.pk}/", {"memory": 4096})
    answer = operator_client.post(
        url("publish"), {"reason": "restart me", "confirm_breaking": [POD_310P]}
    )
    assert answer.status_code == 201, answer.json()
    return answer.json()


def test_before_any_publish_everything_is_in_effect(cluster, viewer_client, url):
    answer = viewer_client.get(url("restarts")).json()
    assert answer["config_version"] is None
    assert _states(viewer_client, url) == dict.fromkeys(COMPONENTS, "in_effect")


def test_restart_pending_then_in_effect_after_rollout_restart(
    published, kubectl, operator_client, viewer_client, url, wait_until
):
    # given a publish: every component still runs pods started before it
    assert _states(viewer_client, url) == dict.fromkeys(COMPONENTS, "restart_pending")
    body = viewer_client.get(url("restarts")).json()
    assert body["config_version"] == published["number"]
    assert all(p["stale"] for c in body["components"] for p in c["pods"])
    # when the portal restarts the HAMi scheduler (confirmed)
    answer = operator_client.post(url("restarts/hami-scheduler"), {"confirm": True})
    assert answer.status_code == 202, answer.json()
    assert answer.json()["restart_state"] in ("rolling", "restart_pending", "in_effect")
    deployment = json.loads(
        kubectl("get", "deploy", "hami-scheduler", "-n", "kube-system", "-o", "json")
    )
    annotations = deployment["spec"]["template"]["metadata"]["annotations"]
    assert "kubectl.kubernetes.io/restartedAt" in annotations
    # then it is in effect once its new pods are Ready; the others are still pending
    wait_until(lambda: _states(viewer_client, url)["hami-scheduler"] == "in_effect")
    states = _states(viewer_client, url)
    assert states["volcano-scheduler"] == "restart_pending"
    assert states["hami-ascend-device-plugin"] == "restart_pending"
    # and a kubectl rollout restart of the device plugin counts the same
    kubectl("rollout", "restart", "ds/hami-ascend-device-plugin", "-n", "kube-system")
    wait_until(
        lambda: _states(viewer_client, url)["hami-ascend-device-plugin"] == "in_effect"
    )
    event = AuditEvent.objects.get(action="component.restart")
    assert event.after["component"] == "hami-scheduler"


def test_restart_needs_confirm_operator_and_a_known_component(
    published, operator_client, viewer_client, url
):
    missing = operator_client.post(url("restarts/hami-scheduler"), {})
    assert missing.status_code == 400
    assert "confirm" in missing.json()["errors"]
    false = operator_client.post(url("restarts/hami-scheduler"), {"confirm": False})
    assert false.status_code == 400
    assert "confirm" in false.json()["errors"]
    viewer = viewer_client.post(url("restarts/hami-scheduler"), {"confirm": True})
    assert viewer.status_code == 403
    unknown = operator_client.post(url("restarts/nginx"), {"confirm": True})
    assert unknown.status_code == 404
    assert not AuditEvent.objects.filter(action="component.restart").exists()
    assert _states(viewer_client, url)["hami-scheduler"] == "restart_pending"


def test_a_deleted_workload_is_missing(cluster, kubectl, viewer_client, url):
    kubectl("delete", "deploy", "volcano-scheduler", "-n", "volcano-system")
    assert _states(viewer_client, url)["volcano-scheduler"] == "missing"
