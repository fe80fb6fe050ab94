"""Isolating a chip and restoring it, over REST, on the simulated ``nodeconfig`` cluster.

The portal writes the chip's UUID into its node's ``filterDevices`` and
deletes that node's device plugin pod; the simulated DaemonSet recreates it
and the new plugin, reading the node config at its start as the real one
does, no longer registers the chip. Sync then proves it from the node's
registration annotation and allocatable. Nothing here tells the portal that
it worked: only the cluster does.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from apps.audit.models import AuditEvent
from apps.inventory.models import Chip, NodeConfigVersion
from simcluster import guide_data

pytestmark = pytest.mark.django_db

NODE_910B = guide_data.NODE_910B
HEALTHY_910B = guide_data.CHIPS_910B[0][0]
WORD = "Ascend910B4"
CM, NS, KEY = "hami-device-node-config", "kube-system", "node-config.yaml"
NODECONFIG = pytest.mark.parametrize(
    "sim_options", [{"scenario": "nodeconfig", "plugin_interval": 0.2}]
)


@pytest.fixture
def node_text(kubectl: Callable[..., str]) -> Callable[[], str]:
    return lambda: json.loads(kubectl("get", "cm", CM, "-n", NS, "-o", "json"))["data"][
        KEY
    ]


@pytest.fixture
def plugin_pod(kubectl: Callable[..., str]) -> Callable[[], str]:
    """The name of the device plugin pod on the 910B node."""

    def name() -> str:
        listed = json.loads(
            kubectl(
                "get",
                "pods",
                "-n",
                NS,
                "-l",
                "app=hami-ascend-device-plugin",
                "--field-selector",
                f"spec.nodeName={NODE_910B}",
                "-o",
                "json",
            )
        )
        live = [
            p for p in listed["items"] if not p["metadata"].get("deletionTimestamp")
        ]
        return live[0]["metadata"]["name"] if live else ""

    return name


def _settled(resync: Callable[[], None], pk: int, isolation: str) -> Callable[[], Any]:
    def check() -> Chip | None:
        resync()
        chip = Chip.objects.select_related("node").get(pk=pk)
        return chip if chip.isolation == isolation else None

    return check


@NODECONFIG
def test_a_chip_is_isolated_and_restored_and_the_cluster_proves_both(
    cluster, operator, operator_client, resync, wait_until, node_text, plugin_pod
) -> None:
    chip = Chip.objects.select_related("node").get(cluster=cluster, uuid=HEALTHY_910B)
    allocatable = chip.node.vnpu_allocatable[WORD]
    pod = plugin_pod()
    assert HEALTHY_910B not in node_text()

    answer = operator_client.post(
        f"/api/chips/{chip.pk}/isolate/",
        {"reason": "ECC errors in dmesg"},
        format="json",
    )
    assert answer.status_code == 202, answer.json()
    body = answer.json()
    assert (body["isolation"], body["state"]) == ("isolating", "isolating")
    # the node config names the chip, in a version of the portal's
    assert HEALTHY_910B in node_text()
    assert NodeConfigVersion.objects.filter(
        cluster=cluster, source="published"
    ).exists()
    # the portal books nothing on it from now on
    assert operator_client.get(f"/api/chips/{chip.pk}/").json()["fits"] == []

    isolated = wait_until(
        _settled(resync, chip.pk, "isolated"), "the isolation proved", timeout=30
    )
    assert isolated.registered is False
    assert isolated.node.vnpu_allocatable[WORD] == allocatable - chip.slots
    assert plugin_pod() not in ("", pod)  # only that node's pod was replaced
    assert "unregistered by the device plugin" in isolated.isolation_seen
    actions = list(
        AuditEvent.objects.filter(object_id=str(chip.pk)).values_list(
            "action", "actor_name"
        )
    )
    assert ("chip.isolate", operator.username) in actions
    assert ("chip.isolated", "sync") in actions
    listed = operator_client.get("/api/chips/", {"cluster": cluster.pk}).json()[
        "results"
    ]
    assert {c["uuid"]: c["state"] for c in listed}[HEALTHY_910B] == "isolated"

    answer = operator_client.post(
        f"/api/chips/{chip.pk}/restore/", {"reason": "card replaced"}, format="json"
    )
    assert answer.status_code == 202, answer.json()
    assert answer.json()["isolation"] == "restoring"
    assert HEALTHY_910B not in node_text()
    back = wait_until(_settled(resync, chip.pk, ""), "the restore proved", timeout=30)
    assert back.registered is True
    assert back.node.vnpu_allocatable[WORD] == allocatable
    assert operator_client.get(f"/api/chips/{chip.pk}/").json()["state"] == "healthy"


@NODECONFIG
def test_bad_asks_are_refused_and_change_nothing(
    cluster, operator_client, viewer_client, node_text
) -> None:
    chip = Chip.objects.get(cluster=cluster, uuid=HEALTHY_910B)
    text = node_text()
    url = f"/api/chips/{chip.pk}/isolate/"
    no_reason = operator_client.post(url, {}, format="json")
    assert no_reason.status_code == 400
    assert "reason" in no_reason.json()["errors"]
    assert viewer_client.post(url, {"reason": "x"}, format="json").status_code == 403
    restore = operator_client.post(
        f"/api/chips/{chip.pk}/restore/", {"reason": "x"}, format="json"
    )
    assert restore.status_code == 409
    assert restore.json()["code"] == "isolation_state"
    assert node_text() == text
    chip.refresh_from_db()
    assert chip.isolation == ""


@NODECONFIG
def test_no_plugin_restart_while_a_device_config_restart_awaits_confirmation(
    cluster, operator_client, resync, hand_edit, live_text, later_second, node_text
) -> None:
    later_second()  # the hand edit comes after the plugin pods started
    hand_edit(live_text() + "\n# edited by hand\n")
    resync()
    chip = Chip.objects.get(cluster=cluster, uuid=HEALTHY_910B)
    text = node_text()
    answer = operator_client.post(
        f"/api/chips/{chip.pk}/isolate/", {"reason": "ECC"}, format="json"
    )
    assert answer.status_code == 409, answer.json()
    assert answer.json()["code"] == "plugin_restart_blocked"
    assert "its restart has not been confirmed" in answer.json()["message"]
    assert node_text() == text
    chip.refresh_from_db()
    assert chip.isolation == ""


def test_a_plugin_that_does_not_read_the_node_config_is_named_with_its_fix(
    cluster, operator_client
) -> None:
    # the guide scenario: device plugin v1.1.0, no --node_config_file
    chip = Chip.objects.filter(cluster=cluster, healthy=True).first()
    answer = operator_client.post(
        f"/api/chips/{chip.pk}/isolate/", {"reason": "ECC"}, format="json"
    )
    assert answer.status_code == 400, answer.json()
    why = answer.json()["errors"]["node"][0]
    assert "v1.1.0" in why
    assert "fix:" in why
    chip.refresh_from_db()
    assert chip.isolation == ""


@NODECONFIG
def test_the_policy_switched_on_isolates_a_chip_sick_past_the_setting(
    cluster, sim, resync, wait_until, settings, node_text
) -> None:
    from datetime import timedelta

    from django.utils import timezone

    from apps.inventory.nodeconfig.policy import isolation_policy_run

    chip = Chip.objects.get(cluster=cluster, uuid=HEALTHY_910B)
    sim.set_chip_health(NODE_910B, chip.index, False)

    def sick() -> Chip | None:
        resync()
        return Chip.objects.filter(pk=chip.pk, healthy=False).first()

    wait_until(sick, "the chip synced unhealthy", timeout=30)
    # as if it had been sick for an hour (health_since is set by sync)
    Chip.objects.filter(pk=chip.pk).update(
        health_since=timezone.now() - timedelta(hours=1)
    )
    settings.ISOLATION_AUTO_ISOLATE = True
    report = isolation_policy_run()
    assert [a.uuid for a in report.acted] == [HEALTHY_910B], report
    assert HEALTHY_910B in node_text()
    row = AuditEvent.objects.get(action="chip.isolate", object_id=str(chip.pk))
    assert row.actor_name == "policy"
    assert row.reason.startswith("ISOLATION_AUTO_ISOLATE: ")
    isolated = wait_until(
        _settled(resync, chip.pk, "isolated"), "the isolation proved", timeout=30
    )
    assert isolated.isolation_by == "policy"


@NODECONFIG
def test_a_mode_switch_is_published_then_applied_by_restarting_that_nodes_plugin(
    cluster, operator_client, resync, wait_until, later_second, plugin_pod
) -> None:
    """Item 6: the what-if names the running slice that blocks the switch
    (drain first); publishing the switch changes nothing on the node until
    the portal restarts that node's plugin pod."""
    url = f"/api/clusters/{cluster.pk}/node-config"
    node = {"name": NODE_910B, "hami_vnpu_core": True}
    sick = next(uid for uid, healthy in guide_data.CHIPS_910B if not healthy)
    draft = {
        "name": NODE_910B,
        "hami-vnpu-core": True,
        "filterDevices": {"uuid": [sick]},
    }
    what_if = operator_client.post(f"{url}/what-if/", {"nodes": [draft]}, format="json")
    assert what_if.status_code == 200, what_if.json()
    assert what_if.json()["drain_first"] == [NODE_910B]

    later_second()  # the publish comes after the plugin pods started
    answer = operator_client.post(
        f"{url}/publish/",
        {"reason": "soft slicing", "expected_version": 1, "nodes": [node],
         "confirm_warnings": True},
        format="json",
    )  # fmt: skip
    assert answer.status_code == 201, answer.json()
    resync()
    assert (
        Chip.objects.filter(node__name=NODE_910B).first().node.hami_vnpu_core is False
    )
    state = operator_client.get(f"{url}/").json()
    entry = next(n for n in state["nodes"] if n["name"] == NODE_910B)
    assert entry["in_effect"]["restart_pending"] is True

    bad = operator_client.post(
        f"{url}/restart/", {"node": "nope", "reason": "x"}, format="json"
    )
    assert bad.status_code == 400
    assert "node" in bad.json()["errors"]
    old = plugin_pod()
    answer = operator_client.post(
        f"{url}/restart/",
        {"node": NODE_910B, "reason": "apply soft slicing"},
        format="json",
    )
    assert answer.status_code == 202, answer.json()
    assert answer.json()["pod"] == old

    def switched() -> bool:
        resync()
        return Chip.objects.filter(node__name=NODE_910B).first().node.hami_vnpu_core

    wait_until(switched, "the node to register hami-core", timeout=30)
    assert AuditEvent.objects.filter(action="node.plugin_restart").count() == 1


@NODECONFIG
def test_a_chip_already_in_the_filter_is_isolated_by_the_restart_alone(
    cluster, operator_client, resync, wait_until, node_text
) -> None:
    """The editor published the filter but nobody restarted the plugin: the
    isolation's publish has nothing to change, which is no error; the restart
    applies it and sync proves it."""
    chip = Chip.objects.get(cluster=cluster, uuid=HEALTHY_910B)
    sick = next(uid for uid, healthy in guide_data.CHIPS_910B if not healthy)
    published = operator_client.post(
        f"/api/clusters/{cluster.pk}/node-config/publish/",
        {"reason": "by hand", "expected_version": 1, "confirm_warnings": True,
         "nodes": [{"name": NODE_910B, "filter_uuids": [sick, HEALTHY_910B]}]},
        format="json",
    )  # fmt: skip
    assert published.status_code == 201, published.json()
    versions = NodeConfigVersion.objects.filter(cluster=cluster).count()

    answer = operator_client.post(
        f"/api/chips/{chip.pk}/isolate/", {"reason": "ECC"}, format="json"
    )
    assert answer.status_code == 202, answer.json()
    assert "unchanged" in answer.json()["isolation_seen"]
    assert NodeConfigVersion.objects.filter(cluster=cluster).count() == versions
    wait_until(
        _settled(resync, chip.pk, "isolated"), "the isolation proved", timeout=30
    )
    assert AuditEvent.objects.filter(action="chip.isolate").count() == 1


@NODECONFIG
def test_an_edit_in_the_files_spelling_is_refused_naming_the_keys(
    cluster, operator_client, node_text
) -> None:
    text = node_text()
    answer = operator_client.post(
        f"/api/clusters/{cluster.pk}/node-config/publish/",
        {"reason": "mode", "expected_version": 1,
         "nodes": [{"name": NODE_910B, "hami-vnpu-core": True}]},
        format="json",
    )  # fmt: skip
    assert answer.status_code == 400, answer.json()
    assert any("hami-vnpu-core" in key for key in answer.json()["errors"])
    assert node_text() == text
