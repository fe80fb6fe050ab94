"""End to end against simcluster, with sync running: REST → pass → pod → bind → Running.

Sync runs in a thread (list + watch, as in production), a "beat" thread runs
``schedule_clusters_task`` every half second, and Celery is eager, so the
passes enqueued on commit (submission, approval, sync's hook) run inline.
"""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from apps.inventory.models import Chip, Slice
from apps.scheduling.choices import ProposalState, RequestState
from apps.scheduling.models import PreemptionProposal, Queue, Request
from harness.portal import (
    Running,
    request_state,
    submit_urgent_vir04,
    token_client,
    wait_running,
)
from tests.polling import wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


@pytest.fixture
def sim_options() -> dict:
    # Evicted pods stay terminating for 2 s, long enough to read their annotation.
    return {"pod_shutdown_seconds": 2.0}


# What a CI pipeline posts: 5,000 MB of a 310P in queue "ci", idempotent.
CI_SUBMISSION = {
    "cluster": "sim",
    "namespace": "default",
    "chip_type": "Ascend310P",
    "memory": 5000,
    "priority": "batch-medium",
    "queue": "ci",
    "workload": {"image": "busybox", "command": ["sleep", "600"]},
    "idempotency_key": "pipeline-42",
}


def test_a_ci_request_goes_from_pending_to_running_with_the_expected_template(
    live, sim_core
):
    Queue.objects.create(cluster=live.cluster, name="ci", open_to_all=True)
    ci = token_client("ci-bot", "operator", queues=["ci"])
    with Running(live.cluster):
        submitted = ci.post(
            "/api/requests/",
            CI_SUBMISSION,
            format="json",
        )
        assert submitted.status_code == 201, submitted.json()
        assert submitted.json()["state"] == RequestState.PENDING
        request_id = submitted.json()["id"]

        shown = wait_running(ci, request_id)

    # then it runs vir02 (HAMi's rule for 5000 MB) on the chip Volcano chose
    assert shown["template_booked"] == "vir02"
    assert shown["memory_booked"] == 6144
    assert shown["node"] == "npu-node-310p-01"
    assert shown["chip_uuid"] in set(
        Chip.objects.filter(common_word="Ascend310P").values_list("uuid", flat=True)
    )
    request = Request.objects.get(pk=request_id)
    assert request.created_at <= request.reserved_at <= request.admitted_at
    assert request.admitted_at <= request.running_at
    pod = sim_core.read_namespaced_pod(request.pod_name, "default")
    annotations = pod.metadata.annotations
    # Volcano reads no pin, so the portal sets none; the request shows the
    # chip the cluster wrote, not the one reserved
    assert "hami.io/use-Ascend310P-uuid" not in annotations
    assert annotations["scheduling.volcano.sh/queue-name"] == "ci"
    assert shown["chip_uuid"] in annotations["hami.io/Ascend310P-devices-allocated"]
    assert pod.spec.scheduler_name == "volcano"
    assert pod.spec.priority_class_name == "batch-medium"
    assert pod.metadata.labels["vnpu-portal/request"] == str(request_id)
    # the same idempotency key gives the same request, nothing new
    again = ci.post(
        "/api/requests/",
        CI_SUBMISSION,
        format="json",
    )
    assert again.status_code == 200
    assert again.json()["id"] == request_id


def _filler(name: str, memory: int, uuid: str, priority_class: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": "default",
            "labels": {"app": name},
            "annotations": {"hami.io/use-Ascend310P-uuid": uuid},
        },
        "spec": {
            # HAMi's scheduler honours the pin (Volcano does not): the layout is exact
            "schedulerName": "hami-scheduler",
            "priorityClassName": priority_class,
            "containers": [
                {
                    "name": "c",
                    "image": "busybox",
                    "resources": {
                        "limits": {
                            "huawei.com/Ascend310P": "1",
                            "huawei.com/Ascend310P-memory": str(memory),
                        }
                    },
                }
            ],
        },
    }


VIR = {"vir01": 3072, "vir02": 6144, "vir04": 12288}


def _fill_the_310p_node(live, sim_core, *, victim: bool = True) -> list[str]:
    """Every 310P chip full; the only way to fit a vir04 for priority 100000 is
    to evict ``victim`` (batch-low vir04 on chip 3). Chip 0 also has the guide's
    batch-low vir01, but evicting it frees only 3072 MB. With ``victim=False``
    chip 3's vir04 room is left for the caller to fill."""
    uuids = list(
        Chip.objects.filter(cluster=live.cluster, common_word="Ascend310P")
        .order_by("index")
        .values_list("uuid", flat=True)
    )
    plan = [
        ("keep-0a", "vir04", 0, "inference-high"),
        ("keep-0b", "vir02", 0, "inference-high"),
        *(
            (f"keep-{c}{x}", t, c, "inference-high")
            for c in (1, 2)
            for x, t in (("a", "vir04"), ("b", "vir02"), ("c", "vir01"))
        ),
        *((("victim", "vir04", 3, "batch-low"),) if victim else ()),
        ("keep-3b", "vir02", 3, "inference-high"),
        ("keep-3c", "vir01", 3, "inference-high"),
    ]
    for name, template, chip, priority_class in plan:
        sim_core.create_namespaced_pod(
            "default", _filler(name, VIR[template], uuids[chip], priority_class)
        )
    names = [p[0] for p in plan]
    wait_for(
        lambda: Slice.objects.filter(pod_name__in=names).count() == len(names),
        "sync to show the filler pods bound",
    )
    return uuids


def _pending_proposal(admin: APIClient) -> dict:
    return wait_for(
        lambda: (
            (rows := admin.get("/api/preemptions/?state=pending").json()["results"])
            and rows[0]
        ),
        "a preemption proposal",
    )


def _decide(admin: APIClient, proposal: dict, decision: str, reason: str) -> None:
    response = admin.post(
        f"/api/preemptions/{proposal['id']}/{decision}/",
        {"reason": reason},
        format="json",
    )
    assert response.status_code == 200, response.json()


def _running_pods(sim_core) -> set[str]:
    return {
        p.metadata.name
        for p in sim_core.list_namespaced_pod("default").items
        if not p.metadata.deletion_timestamp
    }


def test_approved_preemption_evicts_the_named_victim_and_the_request_runs(
    live, sim_core
):
    operator = token_client("urgent-bot", "operator")
    admin = token_client("boss", "admin")
    with Running(live.cluster):
        uuids = _fill_the_310p_node(live, sim_core)
        request_id = submit_urgent_vir04(operator, "sim")

        # then a proposal names the right victim on the right chip
        proposal = _pending_proposal(admin)
        assert proposal["request"] == request_id
        assert [(v["namespace"], v["pod"]) for v in proposal["victims"]] == [
            ("default", "victim")
        ]
        assert proposal["chip_uuid"] == uuids[3]
        assert proposal["max_victim_priority"] == 100
        assert request_state(operator, request_id)["state"] == RequestState.PENDING

        # when an admin approves it
        _decide(admin, proposal, "approve", "release blocker")

        # then the victim was told why, then evicted (it is terminating now)
        victim = sim_core.read_namespaced_pod("victim", "default")
        assert victim.metadata.annotations["vnpu-portal/preempted-by"] == str(
            request_id
        )
        assert victim.metadata.deletion_timestamp is not None
        events = sim_core.list_namespaced_event(
            "default", field_selector="involvedObject.name=victim,reason=Preempted"
        ).items
        assert len(events) == 1
        assert f"request {request_id}" in events[0].message
        assert "release blocker" in events[0].message

        # and the request runs on the freed chip, once the victim is gone
        shown = wait_running(operator, request_id)
    assert shown["chip_uuid"] == uuids[3]
    assert shown["template_booked"] == "vir04"
    assert PreemptionProposal.objects.get(pk=proposal["id"]).state == ProposalState.DONE
    running = _running_pods(sim_core)
    assert "victim" not in running
    assert {"keep-0a", "keep-3b", "keep-3c", "npu-pod-310p"} <= running


def test_a_victims_replacement_does_not_take_the_freed_room(live, sim, sim_core):
    """The victim belongs to a Deployment pinned to the same chip: evicted, it
    is recreated at once and wants the very room being freed. The request's
    pod already waits there with its higher priority, so it gets the chip and
    the replacement stays Pending (no preemption loop)."""
    from kubernetes import client

    operator = token_client("urgent-bot", "operator")
    admin = token_client("boss", "admin")
    apps = client.AppsV1Api(sim_core.api_client)
    with Running(live.cluster) as running:
        uuids = _fill_the_310p_node(live, sim_core, victim=False)
        template = _filler("victim", VIR["vir04"], uuids[3], "batch-low")
        apps.create_namespaced_deployment(
            "default",
            {
                "metadata": {"name": "victim"},
                "spec": {
                    "replicas": 1,
                    "selector": {"matchLabels": {"app": "victim"}},
                    "template": {
                        "metadata": {
                            "labels": {"app": "victim"},
                            "annotations": template["metadata"]["annotations"],
                        },
                        "spec": template["spec"],
                    },
                },
            },
        )
        first = wait_for(
            lambda: next(
                (
                    s.pod_name
                    for s in Slice.objects.filter(pod_name__startswith="victim-")
                ),
                None,
            ),
            "the Deployment's pod to be bound and synced",
        )
        request_id = submit_urgent_vir04(operator, "sim")
        proposal = _pending_proposal(admin)
        assert [v["pod"] for v in proposal["victims"]] == [first]

        _decide(admin, proposal, "approve", "release blocker")
        shown = wait_running(operator, request_id)
        assert shown["chip_uuid"] == uuids[3]

        def replacement() -> client.V1Pod | None:
            pods = sim_core.list_namespaced_pod("default", label_selector="app=victim")
            return next(
                (
                    p
                    for p in pods.items
                    if p.metadata.name != first and not p.metadata.deletion_timestamp
                ),
                None,
            )

        recreated = wait_for(replacement, "the Deployment to recreate its pod")
        running.wait_passes(3)  # and the binder's, in the same time
        recreated = sim_core.read_namespaced_pod(recreated.metadata.name, "default")
        assert recreated.status.phase == "Pending"
        assert not recreated.spec.node_name
        # one proposal, carried out; none against the request or the replacement
        assert [p.state for p in PreemptionProposal.objects.all()] == [
            ProposalState.DONE
        ]
        assert request_state(operator, request_id)["state"] == RequestState.RUNNING


def test_rejected_preemption_keeps_everyone_running(live, sim_core):
    operator = token_client("urgent-bot", "operator")
    admin = token_client("boss", "admin")
    with Running(live.cluster) as running:
        _fill_the_310p_node(live, sim_core)
        before = _running_pods(sim_core)
        request_id = submit_urgent_vir04(operator, "sim")
        proposal = _pending_proposal(admin)

        _decide(admin, proposal, "reject", "the victim is a demo")
        running.wait_passes(4)

    assert _running_pods(sim_core) == before
    assert "vnpu-portal/preempted-by" not in (
        sim_core.read_namespaced_pod("victim", "default").metadata.annotations or {}
    )
    shown = request_state(operator, request_id)
    assert shown["state"] == RequestState.PENDING
    assert "rejected" in shown["reason"]
    assert [p.state for p in PreemptionProposal.objects.all()] == [
        ProposalState.REJECTED
    ]
