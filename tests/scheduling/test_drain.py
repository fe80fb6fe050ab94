"""Draining a chip over REST, against simcluster with sync and beat running.

The cluster sends its pods to HAMi's scheduler, which honours the portal's
chip pin, so "placed again, never on the drained chip" is the portal's own
doing and can be asserted exactly. Foreign pods are pinned the same way.
Evictions go through simcluster's Eviction API, which honours
PodDisruptionBudgets as the real one does (tests/simcluster/test_api_python.py
``test_eviction_honours_pod_disruption_budget``; the real API server is the
judge in tests/realstack/test_drain.py).
"""

from __future__ import annotations

import pytest

from apps.inventory.choices import SchedulerSetting
from apps.inventory.models import Chip, Node, Slice
from apps.scheduling.choices import DrainState, RequestState
from apps.scheduling.models import Queue
from harness.portal import Running, request_state
from tests.polling import wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

CW = "Ascend310P"


@pytest.fixture
def hami_live(live):
    """The ``live`` cluster, its pods sent to HAMi's scheduler (which honours pins)."""
    live.cluster.scheduler = SchedulerSetting.HAMI
    live.cluster.save(update_fields=["scheduler"])
    Queue.objects.get_or_create(
        cluster=live.cluster, name="default", defaults={"open_to_all": True}
    )
    return live


def _foreign(name: str, uuid: str, labels: dict | None = None) -> dict:
    """A pod the portal did not make: a vir01 pinned to chip ``uuid``."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "default",
            "labels": {"app": name, **(labels or {})},
            "annotations": {f"hami.io/use-{CW}-uuid": uuid},
        },
        "spec": {
            "schedulerName": "hami-scheduler",
            "priorityClassName": "batch-low",
            "containers": [
                {
                    "name": "c",
                    "image": "busybox",
                    "resources": {
                        "limits": {
                            f"huawei.com/{CW}": "1",
                            f"huawei.com/{CW}-memory": "3072",
                        }
                    },
                }
            ],
        },
    }


def _place_foreign(sim_core, name: str, uuid: str, labels: dict | None = None) -> None:
    sim_core.create_namespaced_pod("default", _foreign(name, uuid, labels))
    wait_for(
        lambda: Slice.objects.filter(pod_name=name, chip_uuid=uuid).exists(),
        f"sync to show {name} on chip {uuid}",
    )


def _submit(client) -> int:
    answer = client.post(
        "/api/requests/",
        {
            "cluster": "sim",
            "namespace": "default",
            "chip_type": CW,
            "template": "vir02",
            "priority": "batch-medium",
            "workload": {"image": "busybox", "command": ["sleep", "600"]},
            "idempotency_key": "drain-me",
        },
        format="json",
    )
    assert answer.status_code == 201, answer.json()
    return answer.json()["id"]


def _chip(client, chip_id: int) -> dict:
    answer = client.get(f"/api/chips/{chip_id}/")
    assert answer.status_code == 200
    return answer.json()


def _pod_alive(sim_core, name: str) -> bool:
    pods = sim_core.list_namespaced_pod(
        "default", field_selector=f"metadata.name={name}"
    ).items
    return bool(pods) and pods[0].metadata.deletion_timestamp is None


def _audit(client, action: str) -> list[dict]:
    return client.get(f"/api/audit-events/?action={action}").json()["results"]


def test_a_chip_drain_requeues_the_portal_request_and_evicts_foreign_pods_once_approved(
    hami_live, sim_core, operator_client, admin_client_api
):
    with Running(hami_live.cluster) as running:
        request_id = _submit(operator_client)
        first = wait_for(
            lambda: (
                (s := request_state(operator_client, request_id))["state"]
                == RequestState.RUNNING
                and s
            ),
            "the request to run",
        )
        uuid, old_pod = first["chip_uuid"], first["pod_name"]
        chip = Chip.objects.get(cluster=hami_live.cluster, uuid=uuid)
        _place_foreign(sim_core, "foreign", uuid)

        # the plan names both pods: the portal's (its request and queue) and the foreign one
        plan = operator_client.get(f"/api/chips/{chip.pk}/drain/")
        assert plan.status_code == 200, plan.json()
        pods = {p["pod"]: p for p in plan.json()["pods"]}
        on_chip = set(
            Slice.objects.filter(chip_uuid=uuid).values_list("pod_name", flat=True)
        )
        assert {old_pod, "foreign"} <= on_chip
        assert set(pods) == on_chip
        assert pods[old_pod]["foreign"] is False
        assert pods[old_pod]["request"] == request_id
        assert pods[old_pod]["request_queue"] == "default"
        assert "re" in pods[old_pod]["outcome"]
        assert "Pending" in pods[old_pod]["outcome"]
        assert all(pods[name]["foreign"] for name in on_chip - {old_pod})
        assert pods["foreign"]["request"] is None
        assert "approves" in pods["foreign"]["outcome"]
        assert plan.json()["needs_approval"] is True

        # a drain needs a reason
        missing = operator_client.post(
            f"/api/chips/{chip.pk}/drain/", {}, format="json"
        )
        assert missing.status_code == 400
        assert "reason" in missing.json()["errors"]
        assert Chip.objects.get(pk=chip.pk).cordoned is False

        created = operator_client.post(
            f"/api/chips/{chip.pk}/drain/", {"reason": "HBM errors"}, format="json"
        )
        assert created.status_code == 201, created.json()
        drain = created.json()
        assert drain["state"] == DrainState.PENDING
        assert drain["requested_by"] == "otto"

        # the portal's request is re-queued and runs again, on another chip
        again = wait_for(
            lambda: (
                (s := request_state(operator_client, request_id))["state"]
                == RequestState.RUNNING
                and s["pod_name"] != old_pod
                and s
            ),
            "the request to run again with a new pod",
        )
        assert again["chip_uuid"] != uuid
        assert again["attempts"] == 1
        assert again["pod_failures"] == []

        # the foreign pod is still there: nothing evicts it before an admin approves
        running.wait_passes(3)
        assert _pod_alive(sim_core, "foreign")
        annotations = sim_core.read_namespaced_pod(
            "foreign", "default"
        ).metadata.annotations
        assert "vnpu-portal/drain" not in annotations
        shown = _chip(operator_client, chip.pk)
        assert (shown["state"], shown["cordoned"], shown["drain"]) == (
            "draining",
            True,
            drain["id"],
        )

        # an operator may not decide; an admin approves, and the foreign pod goes
        refused = operator_client.post(
            f"/api/drains/{drain['id']}/approve/", {"reason": "x"}, format="json"
        )
        assert refused.status_code == 403
        approved = admin_client_api.post(
            f"/api/drains/{drain['id']}/approve/",
            {"reason": "repair window"},
            format="json",
        )
        assert approved.status_code == 200, approved.json()
        wait_for(lambda: not _pod_alive(sim_core, "foreign"), "the foreign pod to go")
        events = sim_core.list_namespaced_event(
            "default", field_selector="involvedObject.name=foreign,reason=Drained"
        ).items
        assert len(events) == 1
        assert "HBM errors" in events[0].message
        wait_for(
            lambda: _chip(operator_client, chip.pk)["state"] == "drained",
            "the chip to be drained",
        )
        # the drain says so at the next reconciliation (the chip's state is sync's)
        wait_for(
            lambda: (
                admin_client_api.get(f"/api/drains/{drain['id']}/").json()["state"]
                == DrainState.DRAINED
            ),
            "the drain to be drained",
        )

        # while the drain lasts, nothing of the portal's lands there
        running.wait_passes(2)
        assert not Slice.objects.filter(chip_uuid=uuid).exists()
        assert request_state(operator_client, request_id)["chip_uuid"] != uuid

        # a second drain of the chip is refused, naming the open one
        second = operator_client.post(
            f"/api/chips/{chip.pk}/drain/", {"reason": "again"}, format="json"
        )
        assert second.status_code == 409
        assert second.json()["code"] == "drain_exists"
        assert second.json()["detail"]["drain"] == drain["id"]

    # every act is audited, naming who and why
    create = _audit(admin_client_api, "drain.create")
    assert [(e["actor_name"], e["reason"]) for e in create] == [("otto", "HBM errors")]
    evictions = {e["after"]["pod"]: e for e in _audit(admin_client_api, "drain.evict")}
    assert evictions[f"default/{old_pod}"]["actor_name"] == "otto"
    assert evictions[f"default/{old_pod}"]["after"]["requeued"] is True
    assert evictions["default/foreign"]["actor_name"] == "ada"
    assert "repair window" in evictions["default/foreign"]["reason"]
    approval = _audit(admin_client_api, "drain.approve")
    assert [(e["actor_name"], e["reason"]) for e in approval] == [
        ("ada", "repair window")
    ]


def test_a_disruption_budget_keeps_its_pod_waiting_until_it_allows_one(
    hami_live, sim_core, admin_client_api, settings
):
    from kubernetes import client

    settings.PREEMPTION_EVICTION_RETRY_SECONDS = 1
    policy = client.PolicyV1Api(sim_core.api_client)
    chip = Chip.objects.filter(cluster=hami_live.cluster, common_word=CW).order_by(
        "index"
    )[3]
    with Running(hami_live.cluster) as running:
        _place_foreign(sim_core, "guarded", chip.uuid, {"tier": "guarded"})
        policy.create_namespaced_pod_disruption_budget(
            "default",
            {
                "metadata": {"name": "keep-guarded"},
                "spec": {
                    "maxUnavailable": 0,
                    "selector": {"matchLabels": {"tier": "guarded"}},
                },
            },
        )

        def counted() -> bool:
            status = policy.read_namespaced_pod_disruption_budget(
                "keep-guarded", "default"
            ).status
            return status is not None and status.current_healthy == 1

        wait_for(counted, "the budget's status to count the pod")
        plan = admin_client_api.get(f"/api/chips/{chip.pk}/drain/").json()
        [pod] = plan["pods"]
        assert pod["pdbs"] == [{"name": "keep-guarded", "disruptions_allowed": 0}]
        assert "keep-guarded" in pod["outcome"]

        drain = admin_client_api.post(
            f"/api/chips/{chip.pk}/drain/", {"reason": "swap the card"}, format="json"
        ).json()
        approved = admin_client_api.post(
            f"/api/drains/{drain['id']}/approve/", {"reason": "ok"}, format="json"
        )
        assert approved.status_code == 200

        def blocked() -> dict | None:
            shown = admin_client_api.get(f"/api/drains/{drain['id']}/").json()
            return shown if shown["victims"][0].get("blocked") else None

        shown = wait_for(blocked, "the eviction to be refused by the budget")
        assert shown["state"] == DrainState.EVICTING
        assert "PodDisruptionBudget" in shown["progress"]
        running.wait_passes(3)
        assert _pod_alive(sim_core, "guarded")
        assert _chip(admin_client_api, chip.pk)["state"] == "draining"

        # the budget goes: the next retry evicts it
        policy.delete_namespaced_pod_disruption_budget("keep-guarded", "default")
        wait_for(lambda: not _pod_alive(sim_core, "guarded"), "the pod to be evicted")
        wait_for(
            lambda: _chip(admin_client_api, chip.pk)["state"] == "drained",
            "the chip to be drained",
        )


def test_an_empty_chip_is_only_cordoned_and_an_uncordon_puts_it_back(
    hami_live, operator_client
):
    chip = Chip.objects.filter(cluster=hami_live.cluster, common_word=CW).order_by(
        "index"
    )[2]
    assert not Slice.objects.filter(chip_uuid=chip.uuid).exists()
    plan = operator_client.get(f"/api/chips/{chip.pk}/drain/").json()
    assert plan["pods"] == []
    assert plan["drain"] is None

    created = operator_client.post(
        f"/api/chips/{chip.pk}/drain/", {"reason": "firmware update"}, format="json"
    )
    assert created.status_code == 201
    assert created.json()["state"] == DrainState.DRAINED
    shown = _chip(operator_client, chip.pk)
    assert (shown["state"], shown["cordoned"]) == ("drained", True)

    assert (
        operator_client.post(f"/api/chips/{chip.pk}/uncordon/", {}, format="json")
    ).status_code == 400
    back = operator_client.post(
        f"/api/chips/{chip.pk}/uncordon/", {"reason": "updated"}, format="json"
    )
    assert back.status_code == 200, back.json()
    assert [(c["state"], c["cordoned"], c["drain"]) for c in back.json()] == [
        ("healthy", False, None)
    ]
    drain = operator_client.get(f"/api/drains/{created.json()['id']}/").json()
    assert drain["state"] == DrainState.UNCORDONED
    again = operator_client.post(
        f"/api/chips/{chip.pk}/uncordon/", {"reason": "twice"}, format="json"
    )
    assert again.status_code == 409
    assert again.json()["code"] == "not_cordoned"
    [uncordon] = _audit(operator_client, "chip.uncordon")
    assert (uncordon["actor_name"], uncordon["reason"]) == ("otto", "updated")


def test_a_node_plan_lists_the_slices_of_every_chip_of_the_node(
    hami_live, operator_client
):
    node = Node.objects.get(cluster=hami_live.cluster, name="npu-node-310p-01")
    plan = operator_client.get(f"/api/nodes/{node.pk}/drain/")
    assert plan.status_code == 200, plan.json()
    body = plan.json()
    assert body["scope"] == "node"
    assert len(body["chips"]) == Chip.objects.filter(node=node).count()
    on_node = {
        s.pod_name
        for s in Slice.objects.filter(cluster=hami_live.cluster, node_name=node.name)
    }
    assert on_node
    assert {p["pod"] for p in body["pods"]} == on_node
    assert all(p["foreign"] for p in body["pods"])
