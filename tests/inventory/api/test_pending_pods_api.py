"""Pending pods: one pod's scheduling reason can be looked up by its name."""

from __future__ import annotations

import pytest

from apps.inventory.models import PendingPod

pytestmark = pytest.mark.django_db


def test_pending_pods_filter_by_pod_name(viewer_client, guide_cluster):
    """A request's detail page asks for the reason of its own pod only."""
    for name in ("ci-1-abc", "ci-2-def"):
        PendingPod.objects.create(
            cluster=guide_cluster,
            namespace="ci",
            name=name,
            common_word="Ascend310P",
            reason=f"0/2 nodes are available for {name}",
        )
    response = viewer_client.get(
        "/api/pending-pods/",
        {"cluster": guide_cluster.pk, "namespace": "ci", "name": "ci-2-def"},
    )
    assert response.status_code == 200
    rows = response.json()["results"]
    assert [row["name"] for row in rows] == ["ci-2-def"]
    assert rows[0]["reason"] == "0/2 nodes are available for ci-2-def"
