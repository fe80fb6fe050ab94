"""Clusters through the API: admins register them; secrets never come back."""

from __future__ import annotations

import json

import pytest

from apps.audit.models import AuditEvent
from apps.common.crypto import decrypt
from apps.inventory.models import Cluster

pytestmark = pytest.mark.django_db

SECRET = "eyJhbGciOi-very-secret-token"


def test_admin_registers_cluster_with_token_never_returned(
    admin_client_api, viewer_client
):
    response = admin_client_api.post(
        "/api/clusters/",
        {
            "name": "prod-east",
            "connection": "token",
            "api_url": "https://10.0.0.1:6443",
            "token": SECRET,
        },
        format="json",
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["has_token"] is True
    assert SECRET not in json.dumps(body)
    cluster = Cluster.objects.get(name="prod-east")
    assert SECRET not in cluster.token_encrypted  # stored encrypted
    assert decrypt(cluster.token_encrypted) == SECRET
    for client in (admin_client_api, viewer_client):
        for url in (
            "/api/clusters/",
            f"/api/clusters/{cluster.pk}/",
            "/api/audit-events/",
        ):
            assert SECRET not in client.get(url).content.decode()
    assert SECRET not in json.dumps(list(AuditEvent.objects.values("before", "after")))


def test_operator_cannot_register_cluster(operator_client):
    response = operator_client.post("/api/clusters/", {"name": "x"}, format="json")
    assert response.status_code == 403
    assert not Cluster.objects.exists()


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"name": "Bad Name!"}, "name"),
        ({"name": "ok", "connection": "carrier-pigeon"}, "connection"),
        ({"name": "ok", "api_url": "not a url"}, "api_url"),
    ],
)
def test_bad_cluster_input_names_the_field(admin_client_api, payload, field):
    response = admin_client_api.post("/api/clusters/", payload, format="json")
    assert response.status_code == 400
    assert field in response.json()["errors"]
    assert not Cluster.objects.exists()


def test_duplicate_name_is_400(admin_client_api, guide_cluster):
    response = admin_client_api.post("/api/clusters/", {"name": "guide"}, format="json")
    assert response.status_code == 400
    assert "name" in response.json()["errors"]


def test_summary_and_chip_usage_shape(viewer_client, guide_cluster):
    summary = viewer_client.get(f"/api/clusters/{guide_cluster.pk}/summary/").json()
    assert summary["cluster"] == "guide"
    assert {t["common_word"] for t in summary["chip_types"]} == {
        "Ascend310P",
        "Ascend910B4",
    }
    usage = viewer_client.get(f"/api/clusters/{guide_cluster.pk}/chip-usage/").json()
    assert "memory_used" in usage["columns"]
    assert usage["rows"] == []
