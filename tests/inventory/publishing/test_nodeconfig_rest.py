"""The device plugin's node config over REST, on the simulated ``nodeconfig`` cluster.

Sync mirrors ``hami-device-node-config`` (both absences), publishes are
guarded (expected version, strict validation, drift) and recorded, a hand
edit is drift until adopted, rollback and diff work on the history, and the
version in effect on a node moves only when that node's plugin pod restarts.
Everything goes through the API and kubectl, as an operator would.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from kubernetes import client

from apps.audit.models import AuditEvent
from apps.inventory.models import NodeConfigPendingWrite, NodeConfigVersion
from simcluster import guide_data
from simcluster.scenarios import DUO_NODE

pytestmark = pytest.mark.django_db

CM, NS, KEY = "hami-device-node-config", "kube-system", "node-config.yaml"
NODE_910B, NODE_310P = guide_data.NODE_910B, guide_data.NODE_310P
HEALTHY_910B = guide_data.CHIPS_910B[0][0]
DS_LABEL = "app=hami-ascend-device-plugin"


@pytest.fixture
def sim_options() -> dict[str, Any]:
    return {"scenario": "nodeconfig", "plugin_interval": 0.2}


@pytest.fixture
def node_cm(kubectl: Callable[..., str]) -> Callable[[], dict[str, Any] | None]:
    def read() -> dict[str, Any] | None:
        listed = json.loads(kubectl("get", "cm", "-n", NS, "-o", "json"))
        return next((c for c in listed["items"] if c["metadata"]["name"] == CM), None)

    return read


@pytest.fixture
def node_text(node_cm) -> Callable[[], str | None]:
    def read() -> str | None:
        cm = node_cm()
        return None if cm is None else cm["data"][KEY]

    return read


def _state(client_api, cluster) -> dict[str, Any]:
    answer = client_api.get(f"/api/clusters/{cluster.pk}/node-config/")
    assert answer.status_code == 200, answer.json()
    return answer.json()


def _node(state: dict[str, Any], name: str) -> dict[str, Any]:
    return next(n for n in state["nodes"] if n["name"] == name)


def _publish(client_api, cluster, **body: Any):
    return client_api.post(
        f"/api/clusters/{cluster.pk}/node-config/publish/", body, format="json"
    )


def _numbers(cluster) -> list[tuple[int, str]]:
    return list(
        NodeConfigVersion.objects.filter(cluster=cluster)
        .order_by("number")
        .values_list("number", "source")
    )


def test_sync_mirrors_it_per_node_and_both_absences(
    cluster, operator_client, kubectl, resync
):
    # given the scenario's node config, adopted by the first sync
    state = _state(operator_client, cluster)
    assert state["configmap"]["state"] == "present"
    assert _numbers(cluster) == [(1, "adopted")]
    assert state["baseline_version"] == 1
    # then each node shows its entry: the 910B4 node ignores its sick chip by
    # UUID, the Duo node card 1 by index, the 310P node has no entry at all
    sick = next(u for u, healthy in guide_data.CHIPS_910B if not healthy)
    node_910b = _node(state, NODE_910B)
    assert node_910b["has_entry"]
    assert node_910b["filter_uuids"] == [sick]
    assert node_910b["hami_vnpu_core"] is False
    assert _node(state, DUO_NODE)["filter_indexes"] == [1]
    no_entry = _node(state, NODE_310P)
    assert no_entry["known"]
    assert not no_entry["has_entry"]
    assert no_entry["filter_uuids"] == []
    assert state["drift"]["in_sync"]

    # when the ConfigMap is deleted and sync sees it
    kubectl("delete", "cm", CM, "-n", NS)
    resync()

    # then the absence of the whole ConfigMap is recorded, apart from a node's
    state = _state(operator_client, cluster)
    assert state["configmap"]["state"] == "absent"
    assert state["text"] is None
    assert all(not n["has_entry"] for n in state["nodes"])
    assert state["drift"]["in_sync"] is False
    assert "deleted" in state["drift"]["why"]


def test_publish_writes_records_and_audits_and_a_stale_one_is_409(
    cluster, operator_client, node_cm, node_text
):
    before = node_text()
    edit = {"name": NODE_910B, "filter_uuids": None}
    # when an operator ignores one more chip, without confirming the warnings
    body = {
        "reason": "chip 0 keeps failing",
        "expected_version": 1,
        "nodes": [{**edit, "filter_uuids": None, "hami_vnpu_core": None}],
    }
    body["nodes"][0]["filter_uuids"] = [
        next(u for u, healthy in guide_data.CHIPS_910B if not healthy),
        HEALTHY_910B,
    ]
    refused = _publish(operator_client, cluster, **body)
    # then the old problems of the live file (a card index on the Duo node,
    # a filtered chip the portal no longer sees) are warnings to confirm
    assert refused.status_code == 400, refused.json()
    assert refused.json()["code"] == "unconfirmed_warnings"
    assert node_text() == before

    answer = _publish(operator_client, cluster, **body, confirm_warnings=True)
    assert answer.status_code == 201, answer.json()
    result = answer.json()
    assert result["number"] == 2
    assert result["source"] == "published"
    assert result["author"] == "otto"
    live = node_cm()
    assert HEALTHY_910B in live["data"][KEY]
    assert result["resource_version"] == live["metadata"]["resourceVersion"]
    version = NodeConfigVersion.objects.get(cluster=cluster, number=2)
    assert version.reason == "chip 0 keeps failing"
    assert version.text == live["data"][KEY]
    assert len(version.sha256) == 64
    event = AuditEvent.objects.get(action="nodeconfig.publish")
    assert event.actor.username == "otto"
    assert event.reason == "chip 0 keeps failing"
    assert event.after["version"] == 2
    assert HEALTHY_910B in event.after["diff"]
    assert not NodeConfigPendingWrite.objects.exists()

    # when someone publishes from the page they loaded before that publish
    stale = _publish(
        operator_client,
        cluster,
        reason="late",
        expected_version=1,
        text=before,
        confirm_warnings=True,
    )
    # then it is refused and nothing is written
    assert stale.status_code == 409, stale.json()
    assert stale.json()["code"] == "stale_version"
    assert stale.json()["detail"]["current_version"] == 2
    assert node_text() == live["data"][KEY]
    assert _numbers(cluster) == [(1, "adopted"), (2, "published")]


def test_a_bad_draft_is_400_naming_the_path_and_nothing_is_written(
    cluster, operator_client, node_text
):
    before = node_text()
    draft = (
        f"nodes:\n- name: {NODE_310P}\n  hami-vnpu-core: false\n"
        f"  filterDevice:\n    uuid: [{HEALTHY_910B}]\n"
    )
    checked = operator_client.post(
        f"/api/clusters/{cluster.pk}/node-config/validate/",
        {"text": draft},
        format="json",
    )
    assert checked.status_code == 200
    assert not checked.json()["valid"]
    assert [e["field"] for e in checked.json()["errors"]] == ["nodes[0].filterDevice"]
    answer = _publish(
        operator_client,
        cluster,
        reason="typo",
        expected_version=1,
        text=draft,
        confirm_warnings=True,
    )
    assert answer.status_code == 400
    assert "nodes[0].filterDevice" in answer.json()["errors"]
    assert (
        "did you mean filterDevices"
        in answer.json()["errors"]["nodes[0].filterDevice"][0]
    )
    # a chip of another node, by per-node edit: the path names it too
    wrong = _publish(
        operator_client,
        cluster,
        reason="wrong node",
        expected_version=1,
        nodes=[{"name": NODE_310P, "filter_uuids": [HEALTHY_910B]}],
        confirm_warnings=True,
    )
    assert wrong.status_code == 400
    (path,) = [k for k in wrong.json()["errors"] if "uuid" in k]
    assert path.endswith(".filterDevices.uuid[0]")
    assert f"it is a chip of {NODE_910B}" in wrong.json()["errors"][path][0]
    # and an input that is not an edit at all is a 400 on its field
    shape = _publish(
        operator_client,
        cluster,
        reason="x",
        expected_version=1,
        nodes=[{"name": NODE_310P, "v_device_count": "eight"}],
    )
    assert shape.status_code == 400
    assert "v_device_count" in json.dumps(shape.json()["errors"])
    assert node_text() == before
    assert _numbers(cluster) == [(1, "adopted")]


def test_hand_edit_is_drift_then_adopt_rollback_and_diff(
    cluster, operator_client, admin_client_api, kubectl, node_text, resync
):
    original = node_text()
    hand = original + f"  - name: {NODE_310P}\n    hami-vnpu-core: false\n"
    # when someone edits the ConfigMap by hand and sync sees it
    kubectl(
        "patch", "cm", CM, "-n", NS, "--type", "merge",
        "-p", json.dumps({"data": {KEY: hand}}),
    )  # fmt: skip
    resync()
    # then it is a new observed version, and drift
    assert _numbers(cluster) == [(1, "adopted"), (2, "observed")]
    state = _state(operator_client, cluster)
    assert state["drift"]["in_sync"] is False
    assert f"+  - name: {NODE_310P}" in state["drift"]["diff"]
    # and a publish over it is refused with the three-way picture
    refused = _publish(
        operator_client, cluster, reason="over it", expected_version=1,
        text=original.replace("index: [1]", "index: [1, 2]"), confirm_warnings=True,
    )  # fmt: skip
    assert refused.status_code == 409
    assert refused.json()["code"] == "drift"
    assert refused.json()["detail"]["live"] == hand
    assert node_text() == hand

    # when an admin adopts it
    adopted = admin_client_api.post(
        f"/api/clusters/{cluster.pk}/node-config/adopt/",
        {"reason": "ops set the 310P node's mode"},
        format="json",
    )
    assert adopted.status_code == 201, adopted.json()
    assert adopted.json()["number"] == 3
    assert adopted.json()["source"] == "adopted"
    assert _state(operator_client, cluster)["drift"]["in_sync"]
    assert AuditEvent.objects.filter(
        action="nodeconfig.adopted", reason="ops set the 310P node's mode"
    ).exists()

    # then rolling back to v1 writes v1's text again as a new version
    back = operator_client.post(
        f"/api/clusters/{cluster.pk}/node-config/rollback/",
        {"version": 1, "reason": "back to the scenario's", "confirm_warnings": True},
        format="json",
    )
    assert back.status_code == 201, back.json()
    assert back.json()["number"] == 4
    assert back.json()["rollback_of"] == 1
    assert node_text() == original
    # and the history diffs
    diff = operator_client.get(
        f"/api/clusters/{cluster.pk}/node-config/diff/?from=1&to=3"
    ).json()
    assert f"+  - name: {NODE_310P}" in diff["diff"]
    versions = operator_client.get(
        f"/api/clusters/{cluster.pk}/node-config/versions/"
    ).json()
    assert [v["number"] for v in versions["results"]] == [4, 3, 2, 1]
    resync()  # the live side of a draft's diff is sync's mirror
    draft = operator_client.post(
        f"/api/clusters/{cluster.pk}/node-config/diff/",
        {"from_version": None, "text": hand},
        format="json",
    ).json()
    assert draft["to"] == "draft"
    assert f"+  - name: {NODE_310P}" in draft["diff"]


def _plugin_pod(core: client.CoreV1Api, node: str) -> client.V1Pod | None:
    pods = core.list_namespaced_pod(
        NS, label_selector=DS_LABEL, field_selector=f"spec.nodeName={node}"
    ).items
    running = [
        p
        for p in pods
        if p.status.phase == "Running" and p.metadata.deletion_timestamp is None
    ]
    return running[0] if running else None


def test_the_version_in_effect_moves_only_when_the_nodes_plugin_restarts(
    cluster, sim, tmp_path, operator_client, later_second, wait_until
):
    core = client.CoreV1Api(sim.kubernetes_client(tmp_path / "kc"))
    state = _state(operator_client, cluster)
    assert state["plugin_pods"] == "live"
    assert _node(state, NODE_910B)["in_effect"]["version"] == 1
    # given a publish changing the 910B4 node's entry, after its pods started
    later_second()
    answer = _publish(
        operator_client, cluster, reason="slots", expected_version=1,
        nodes=[{"name": NODE_910B, "v_device_count": 2}], confirm_warnings=True,
    )  # fmt: skip
    assert answer.status_code == 201, answer.json()
    # then that node still runs v1 until its plugin restarts; others need nothing
    state = _state(operator_client, cluster)
    moved = _node(state, NODE_910B)["in_effect"]
    assert (moved["version"], moved["published_version"]) == (1, 2)
    assert moved["restart_pending"] is True
    kept = _node(state, NODE_310P)["in_effect"]
    assert kept["restart_pending"] is False

    # when the plugin pod on that node is deleted (the DaemonSet recreates it)
    old = _plugin_pod(core, NODE_910B)
    core.delete_namespaced_pod(old.metadata.name, NS)
    wait_until(
        lambda: (
            (p := _plugin_pod(core, NODE_910B)) is not None
            and p.metadata.uid != old.metadata.uid
        ),
        "a new plugin pod on the 910B4 node",
    )

    # then it runs v2, and nothing else moved
    state = _state(operator_client, cluster)
    now = _node(state, NODE_910B)["in_effect"]
    assert (now["version"], now["restart_pending"]) == (2, False)
    assert now["plugin_pod"] != old.metadata.name
    assert _node(state, DUO_NODE)["in_effect"]["version"] == 1
