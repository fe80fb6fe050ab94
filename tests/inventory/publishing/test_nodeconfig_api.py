"""REST: GET /api/clusters/{id}/node-config/health/ and POST .../node-config/what-if/.

On the simulated cluster synced over HTTP, as a viewer (both only read).
"""

from __future__ import annotations

import json

import pytest

from simcluster import guide_data

pytestmark = pytest.mark.django_db
NODECONFIG = pytest.mark.parametrize("sim_options", [{"scenario": "nodeconfig"}])


def test_health_as_a_viewer_says_the_guide_plugin_reads_no_node_config(
    cluster, viewer_client
):
    answer = viewer_client.get(f"/api/clusters/{cluster.pk}/node-config/health/")
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert body["readable"] is False
    assert body["check_status"] == "fail"
    version = next(c for c in body["checks"] if c["id"] == "plugin_version")
    assert version["message"].startswith("device plugin v1.1.0 reads no node config")
    assert "--node_config_file" in body["kubectl"]
    assert {n["name"] for n in body["nodes"]} >= {guide_data.NODE_910B}


@NODECONFIG
def test_what_if_of_a_mode_switch_under_a_running_pod(cluster, viewer_client):
    # the guide's 910B4 pod runs on npu-node-910b-01: switching it to hami-core
    # (keeping the filter of its sick chip that the live node config has)
    sick = next(uid for uid, healthy in guide_data.CHIPS_910B if not healthy)
    draft = {
        "nodes": [
            {
                "name": guide_data.NODE_910B,
                "hami-vnpu-core": True,
                "filterDevices": {"uuid": [sick]},
            },
            {"name": "npu-node-310p-01", "hami-vnpu-core": False},
        ]
    }
    answer = viewer_client.post(
        f"/api/clusters/{cluster.pk}/node-config/what-if/", draft, format="json"
    )
    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert body["readable"] is True
    assert body["drain_first"] == [guide_data.NODE_910B]
    node = next(n for n in body["nodes"] if n["name"] == guide_data.NODE_910B)
    assert node["changes"] == ["mode template -> hami-core"]
    assert [s["pod"] for s in node["stranded_slices"]] == ["npu-pod-910b"]
    # the same draft as a file gives the same answer
    text = viewer_client.post(
        f"/api/clusters/{cluster.pk}/node-config/what-if/",
        {"text": json.dumps(draft)},
        format="json",
    )
    assert text.status_code == 200, text.content
    assert text.json()["nodes"] == body["nodes"]


@NODECONFIG
def test_what_if_names_the_field_of_bad_input(cluster, viewer_client):
    url = f"/api/clusters/{cluster.pk}/node-config/what-if/"
    wrong_type = viewer_client.post(
        url,
        {"nodes": [{"name": guide_data.NODE_910B, "vDeviceCount": "8"}]},
        format="json",
    )
    assert wrong_type.status_code == 400
    assert "nodes[0].vDeviceCount" in wrong_type.json()["errors"]
    not_yaml = viewer_client.post(url, {"text": "nodes: [\n"}, format="json")
    assert not_yaml.status_code == 400
    assert "text" in not_yaml.json()["errors"]
    neither = viewer_client.post(url, {}, format="json")
    assert neither.status_code == 400
    assert "exactly one of text" in neither.json()["errors"]["text"][0]
    typo = viewer_client.post(
        url, {"text": "nodes:\n- name: x\n  filterDevice: {}\n"}, format="json"
    )
    assert typo.status_code == 400
    assert "did you mean filterDevices?" in typo.json()["errors"]["text"][0]
