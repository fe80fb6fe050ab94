"""Requests and preemption against the real kube-apiserver and the real Volcano.

A CI request ends Running with the chip and template the real Volcano chose
(which need not be the chip the portal reserved: Volcano ignores the
``hami.io/use-<commonWord>-uuid`` pin), and the portal's ledger agrees with
HAMi's accounting of the cluster. An approved preemption goes through the real
Eviction API, where a PodDisruptionBudget's 429 holds the victim.
"""

from __future__ import annotations

import json

import pytest

from apps.inventory.models import Slice
from apps.scheduling.choices import ProposalState, RequestState
from apps.scheduling.models import PreemptionProposal, Request, Reservation
from harness.portal import (
    Running,
    approve,
    approve_pending,
    ci_request,
    pending_proposal,
    request_state,
    submit_urgent_vir04,
    token_client,
)
from harness.portal import wait_running as running
from kubestack.scenarios import STOPS_ON_SIGTERM_SECONDS, slice_pod, wait_running
from tests.polling import wait_for
from tests.realstack.accounting import chips_by_uuid, portal_usage, usage_by_uuid

pytestmark = [
    pytest.mark.realstack,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]

ASCEND = ("Ascend310P", "Ascend910B4")


def test_a_ci_request_runs_where_the_real_volcano_put_it(
    kube_stack, kube_core, real_cluster, cleanup, settings
):
    """On the 310P node, whose chips are all healthy: on the 910B4 node Volcano
    may pick the sick chip 5 (it does not check chip health), the subject of
    issue 14."""
    settings.PREEMPTION_AUTO_APPROVE_PRIORITY_GAP = None
    ci = token_client("ci-bot", "operator")
    with Running(real_cluster):
        submitted = ci.post(
            "/api/requests/",
            ci_request(idempotency_key="real-stack-1"),
            format="json",
        )
        assert submitted.status_code == 201, submitted.json()
        request_id = submitted.json()["id"]
        shown = _running_or_explain(kube_stack, ci, request_id, timeout=90)

        request = Request.objects.get(pk=request_id)
        pod = kube_core.read_namespaced_pod(request.pod_name, "default")
        allocated = pod.metadata.annotations["hami.io/Ascend310P-devices-allocated"]
        chosen_uuid, _, memory, _ = allocated.split(";")[0].split(",")
        # then the portal reports the chip and template the real Volcano wrote
        assert shown["chip_uuid"] == chosen_uuid
        assert shown["node"] == pod.spec.node_name == "npu-node-310p-01"
        assert (shown["template_booked"], shown["memory_booked"]) == ("vir02", 6144)
        assert int(memory) == 6144
        assert pod.status.phase == "Running"
        assert pod.metadata.annotations["hami.io/bind-phase"] == "success"
        # and its ledger is HAMi's: no reservation left, chip usage as counted
        assert not Reservation.objects.filter(request_id=request_id).exists()
        wait_for(
            lambda: portal_usage(real_cluster) == usage_by_uuid(kube_core, ASCEND),
            "the ledger to equal HAMi's accounting",
            timeout=30,
        )

        # when the pipeline releases it, the pod goes and the room with it
        released = ci.delete(f"/api/requests/{request_id}/")
        assert released.status_code in (200, 204), released.content
        wait_for(
            lambda: (
                not Slice.objects.filter(
                    cluster=real_cluster, pod_name=request.pod_name
                ).exists()
            ),
            "the released slice to leave the ledger",
            timeout=60,
        )
    assert request_state(ci, request_id)["state"] == RequestState.CANCELLED
    assert portal_usage(real_cluster) == usage_by_uuid(kube_core, ASCEND)


def test_a_lock_volcano_leaked_is_released_and_the_request_runs(
    kube_stack, kube_core, real_cluster, cleanup, settings
):
    """Volcano locks a node under the chip type's name while it writes a pod's
    devices and leaves the lock behind when that write fails (seen in
    test_faults: a pod deleted between Volcano's cache and its patch); it then
    binds nothing on the node for five minutes. The portal releases a lock
    older than NODE_LOCK_STALE_SECONDS where its pod waits, and says so."""
    from datetime import UTC, datetime, timedelta

    from apps.audit.models import AuditEvent

    settings.PREEMPTION_AUTO_APPROVE_PRIORITY_GAP = None
    settings.NODE_LOCK_STALE_SECONDS = 5
    node = "npu-node-310p-01"
    leaked = (datetime.now(UTC) - timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    kube_core.patch_node(node, {"metadata": {"annotations": {"Ascend310P": leaked}}})
    ci = token_client("ci-bot", "operator")
    with Running(real_cluster):
        submitted = ci.post(
            "/api/requests/",
            ci_request(idempotency_key="leaked-lock"),
            format="json",
        )
        assert submitted.status_code == 201, submitted.json()
        request_id = submitted.json()["id"]
        # the lock holds the pod while it is there: Volcano refuses the node
        wait_for(
            lambda: Request.objects.get(pk=request_id).state == RequestState.ADMITTED,
            "the pod to be created",
            timeout=30,
        )
        shown = _running_or_explain(kube_stack, ci, request_id, timeout=60)
    assert shown["node"] == node
    annotations = kube_core.read_node(node).metadata.annotations
    assert "Ascend310P" not in annotations
    release = AuditEvent.objects.get(action="node.lock_release", cluster=real_cluster)
    assert release.after == {
        "node": node,
        "locks": {"Ascend310P": leaked.replace("Z", "+00:00")},
    }
    assert "left behind by a failed allocation" in release.reason


def test_a_pod_that_fails_before_it_runs_is_replaced_and_the_request_runs(
    kube_stack, kube_core, real_cluster, cleanup, settings
):
    """The node fails the pod's container at creation (StartError, exit 128,
    never started: what a vNPU that cannot be made gives). The portal deletes
    that pod, keeps the failure on the request, and a new pod runs."""
    from datetime import UTC, datetime

    from simcluster.controllers.allocate import start_error_status

    settings.PREEMPTION_AUTO_APPROVE_PRIORITY_GAP = None
    ci = token_client("ci-bot", "operator")
    with Running(real_cluster):
        submitted = ci.post(
            "/api/requests/",
            ci_request(idempotency_key="real-stack-retry"),
            format="json",
        )
        assert submitted.status_code == 201, submitted.json()
        request_id = submitted.json()["id"]
        _running_or_explain(kube_stack, ci, request_id, timeout=90)
        first = Request.objects.get(pk=request_id).pod_name
        pod = json.loads(kube_stack.kubectl("get", "pod", first, "-o", "json").stdout)
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        ip = pod["status"].get("podIP") or "10.244.0.99"
        status = start_error_status(pod, "the chip is busy", now, ip)
        kube_core.patch_namespaced_pod_status(first, "default", {"status": status})

        def replaced() -> dict | None:
            shown = request_state(ci, request_id)
            retried = shown["attempts"] == 1 and shown["state"] == "running"
            return shown if retried else None

        shown = wait_for(
            replaced, "the request to run again with a new pod", timeout=90
        )
        (failure,) = shown["pod_failures"]
        assert failure["pod"] == first
        assert "StartError" in failure["reason"]
        assert shown["pod_name"] == f"{first}-1"
        assert not kube_core.list_namespaced_pod(
            "default", field_selector=f"metadata.name={first}"
        ).items
        assert ci.delete(f"/api/requests/{request_id}/").status_code in (200, 204)


def _running_or_explain(kube_stack, client, request_id: int, timeout: float) -> dict:
    """The request once it runs; on a timeout, fail with what the portal and the
    cluster say about it (its state and reason, its pod, the recent events)."""
    try:
        return running(client, request_id, timeout=timeout)
    except AssertionError as error:
        shown = request_state(client, request_id)
        pods = kube_stack.kubectl(
            "get", "pods", "-A", "-o", "wide", "--show-labels", check=False
        ).stdout
        events = kube_stack.kubectl(
            "get", "events", "-A", "--sort-by=.lastTimestamp", check=False
        ).stdout
        raise AssertionError(
            f"{error}\nrequest: {json.dumps(shown, indent=1)}\npods:\n{pods}"
            f"\nevents:\n{events[-4000:]}"
        ) from None


def _fill_310p(kube_stack, cleanup) -> list[str]:
    """One batch-low vir04 on each 310P chip: no second vir04 fits anywhere."""
    names = [f"filler-{i}" for i in range(4)]
    pods = [
        slice_pod(
            name,
            "Ascend310P",
            12288,
            "batch-low",
            grace_seconds=STOPS_ON_SIGTERM_SECONDS,
        )
        for name in names
    ]
    for pod in pods:
        pod["metadata"]["labels"]["role"] = "filler"
    cleanup.extend(("default", name) for name in names)
    kube_stack.create_objects(pods)
    wait_running(kube_stack, [("default", name) for name in names], timeout=90)
    return names


@pytest.fixture
def filler_pdb(kube_stack):
    """A PodDisruptionBudget that allows no filler to be disrupted."""
    pdb = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "fillers", "namespace": "default"},
        "spec": {"maxUnavailable": 0, "selector": {"matchLabels": {"role": "filler"}}},
    }
    kube_stack.kubectl("create", "-f", "-", stdin=json.dumps(pdb))
    yield "fillers"
    kube_stack.kubectl(
        "delete", "pdb", "-n", "default", "fillers", "--ignore-not-found", check=False
    )


def test_an_approved_preemption_waits_on_a_disruption_budget_then_evicts(
    kube_stack, kube_core, real_cluster, cleanup, settings, filler_pdb
):
    settings.PREEMPTION_AUTO_APPROVE_PRIORITY_GAP = None
    settings.PREEMPTION_EVICTION_RETRY_SECONDS = 1
    operator, admin = (
        token_client("urgent-bot", "operator"),
        token_client("boss", "admin"),
    )
    with Running(real_cluster) as running_portal:
        fillers = _fill_310p(kube_stack, cleanup)
        running_portal.wait_mirrored(("default", name) for name in fillers)
        # the disruption controller has counted the fillers: no disruption allowed
        wait_for(
            lambda: (
                kube_stack.kubectl(
                    "get",
                    "pdb",
                    filler_pdb,
                    "-o",
                    "jsonpath={.status.currentHealthy}/{.status.disruptionsAllowed}",
                ).stdout
                == "4/0"
            ),
            "the PodDisruptionBudget's status",
            timeout=60,
        )
        request_id = submit_urgent_vir04(operator, "real")
        proposal = approve_pending(admin, request_id)
        victims = [v["pod"] for v in proposal["victims"]]
        assert len(victims) == 1
        assert victims[0] in fillers

        # then the real Eviction API answers 429 and the victim keeps running
        def blocked() -> bool:
            row = PreemptionProposal.objects.get(pk=proposal["id"])
            return row.state == ProposalState.EVICTING and any(
                "disruption budget" in (v.get("blocked") or "") for v in row.victims
            )

        wait_for(blocked, "the eviction to be blocked by the budget", timeout=60)
        victim = kube_core.read_namespaced_pod(victims[0], "default")
        assert victim.metadata.deletion_timestamp is None
        assert victim.metadata.annotations["vnpu-portal/preempted-by"] == str(
            request_id
        )

        # when the budget goes, the retry evicts the victim through the API
        kube_stack.kubectl("delete", "pdb", "-n", "default", filler_pdb)

        def evicted() -> bool:
            pod = kube_core.list_namespaced_pod(
                "default", field_selector=f"metadata.name={victims[0]}"
            ).items
            return not pod or pod[0].metadata.deletion_timestamp is not None

        wait_for(evicted, "the victim to be evicted", timeout=60)

        # and a request cancelled meanwhile gives its held node back
        node = proposal["node"]
        assert _node_holds(kube_core, node) == ["vnpu-portal/held"]
        assert operator.delete(f"/api/requests/{request_id}/").status_code in (
            200,
            204,
        )
        wait_for(
            lambda: not _node_holds(kube_core, node),
            "the cancelled request's node hold to be lifted",
            timeout=30,
        )
    events = kube_core.list_namespaced_event(
        "default", field_selector=f"involvedObject.name={victims[0]},reason=Preempted"
    ).items
    assert len(events) == 1
    assert f"request {request_id}" in events[0].message


def test_after_approval_the_request_runs_on_the_freed_room_without_a_failed_pod(
    kube_stack, kube_core, real_cluster, cleanup, settings
):
    settings.PREEMPTION_AUTO_APPROVE_PRIORITY_GAP = None
    operator, admin = (
        token_client("urgent-bot", "operator"),
        token_client("boss", "admin"),
    )
    with Running(real_cluster) as running_portal:
        fillers = _fill_310p(kube_stack, cleanup)
        running_portal.wait_mirrored(("default", name) for name in fillers)
        request_id = submit_urgent_vir04(operator, "real")
        proposal = approve_pending(admin, request_id)
        victim = proposal["victims"][0]["pod"]
        assert victim in fillers
        failed_before = kube_stack.device_plugin.failures
        shown = _running_or_explain(kube_stack, operator, request_id, timeout=90)
        # no pod of the request failed because the victim still held its vNPU
        assert kube_stack.device_plugin.failures == failed_before
        assert shown["chip_uuid"] == proposal["chip_uuid"]


def test_four_approved_preemptions_on_two_nodes_all_run_and_leave_no_hold(
    kube_stack, kube_core, real_cluster, cleanup, settings
):
    """Each approval holds its node; with one taint per request each pod
    tolerated only its own and all of them stayed Pending (issue 37). Now a
    node carries one hold that every held request's pod tolerates, lifted
    when the last of them is bound: two approvals on each node, back to back."""
    settings.PREEMPTION_AUTO_APPROVE_PRIORITY_GAP = None
    operator, admin = (
        token_client("urgent-bot", "operator"),
        token_client("boss", "admin"),
    )
    fillers = _fill_310p(kube_stack, cleanup)
    # every empty 910B4 chip (the sick one too: Volcano checks no health) gets
    # a low-priority whole card
    used = usage_by_uuid(kube_core, ("Ascend910B4",))
    empty = [
        u
        for u in chips_by_uuid(kube_core, ("Ascend910B4",))
        if not used.get(u, {}).get("memory_used")
    ]
    cards = [f"card-{i}" for i in range(len(empty))]
    cleanup.extend(("default", name) for name in cards)
    kube_stack.create_objects(
        [
            slice_pod(
                name,
                "Ascend910B4",
                32768,
                "batch-low",
                grace_seconds=STOPS_ON_SIGTERM_SECONDS,
            )
            for name in cards
        ]
    )
    wait_running(kube_stack, [("default", name) for name in cards], timeout=90)
    with Running(real_cluster) as running_portal:
        running_portal.wait_mirrored(("default", name) for name in fillers + cards)
        requests = [submit_urgent_vir04(operator, "real") for _ in range(2)]
        for i in range(2):
            submitted = operator.post(
                "/api/requests/",
                {
                    "cluster": "real",
                    "namespace": "default",
                    "chip_type": "Ascend910B4",
                    "whole_card": True,
                    "priority": "inference-high",
                    "idempotency_key": f"urgent-card-{i}",
                    "workload": {"image": "busybox"},
                },
                format="json",
            )
            assert submitted.status_code == 201, submitted.json()
            requests.append(submitted.json()["id"])
        proposals = [pending_proposal(admin, request_id) for request_id in requests]
        assert sorted(p["node"] for p in proposals) == [
            "npu-node-310p-01",
            "npu-node-310p-01",
            "npu-node-910b-01",
            "npu-node-910b-01",
        ]
        victims = [v["pod"] for p in proposals for v in p["victims"]]
        assert len(set(victims)) == len(victims) == 4  # one each, none twice
        assert set(victims) <= {*fillers, *cards}
        for proposal in proposals:  # approved back to back
            approve(admin, proposal)
        shown = [
            _running_or_explain(kube_stack, operator, request_id, timeout=120)
            for request_id in requests
        ]
        # every request runs on room it was promised (Volcano picks which of
        # its node's freed chips), and neither node is held any more
        assert {r["chip_uuid"] for r in shown} == {p["chip_uuid"] for p in proposals}
        for node in ("npu-node-310p-01", "npu-node-910b-01"):
            wait_for(
                lambda node=node: not _node_holds(kube_core, node),
                f"the hold on {node} to be lifted",
                timeout=30,
            )
        rows = PreemptionProposal.objects.filter(pk__in=[p["id"] for p in proposals])
        assert {row.state for row in rows} == {ProposalState.DONE}
        # The record of a hold is cleared just after its taint is lifted
        # (holds.py: never a taint without a record), so it may trail the
        # taint the wait above saw go.
        wait_for(
            lambda: not [row.pk for row in rows.all() if row.held_node],
            "the proposals' hold records to be cleared",
            timeout=30,
        )


def _node_holds(kube_core, node: str) -> list[str]:
    taints = kube_core.read_node(node).spec.taints or []
    return [t.key for t in taints if t.key.startswith("vnpu-portal/")]


def test_a_victims_replacement_waits_while_the_request_takes_the_freed_room(
    kube_stack, kube_core, real_cluster, cleanup, settings
):
    """The fillers are a Deployment: evicted, a victim is replaced at once,
    and on Volcano the replacement (pending first, and in the same queue)
    would be bound into the room being freed. The node is held for the
    request until its pod is bound: the replacement waits, no pod fails."""
    settings.PREEMPTION_AUTO_APPROVE_PRIORITY_GAP = None
    operator, admin = (
        token_client("urgent-bot", "operator"),
        token_client("boss", "admin"),
    )
    template = slice_pod(
        "filler",
        "Ascend310P",
        12288,
        "batch-low",
        grace_seconds=STOPS_ON_SIGTERM_SECONDS,
    )
    template["spec"]["restartPolicy"] = "Always"
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "fillers", "namespace": "default"},
        "spec": {
            "replicas": 4,  # one vir04 on each 310P chip: no second one fits
            "selector": {"matchLabels": {"app": "filler"}},
            "template": {"metadata": template["metadata"], "spec": template["spec"]},
        },
    }
    kube_stack.kubectl("create", "-f", "-", stdin=json.dumps(deployment))
    try:
        with Running(real_cluster) as running_portal:
            first = wait_for(
                lambda: (
                    pods
                    if len(
                        pods := {
                            p.metadata.name
                            for p in kube_core.list_namespaced_pod(
                                "default", label_selector="app=filler"
                            ).items
                            if p.status.phase == "Running"
                        }
                    )
                    == 4
                    else None
                ),
                "the four fillers to run",
                timeout=90,
            )
            running_portal.wait_mirrored(("default", name) for name in first)
            failed_before = kube_stack.device_plugin.failures
            request_id = submit_urgent_vir04(operator, "real")
            proposal = approve_pending(admin, request_id)
            (victim,) = [v["pod"] for v in proposal["victims"]]
            assert victim in first
            shown = _running_or_explain(kube_stack, operator, request_id, timeout=90)
            # then the request runs on the freed chip, and nothing failed
            assert shown["chip_uuid"] == proposal["chip_uuid"]
            assert kube_stack.device_plugin.failures == failed_before
            # the replacement exists and waits: the room went to the request
            replacements = [
                p
                for p in kube_core.list_namespaced_pod(
                    "default", label_selector="app=filler"
                ).items
                if p.metadata.name not in first
            ]
            assert len(replacements) == 1
            assert not replacements[0].spec.node_name
            # and the node is given back once the request's pod is bound
            wait_for(
                lambda: not _node_holds(kube_core, proposal["node"]),
                "the node hold to be lifted",
                timeout=30,
            )

            # its record says so just after the taint goes (holds.py)
            def says_it_runs() -> PreemptionProposal | None:
                row = PreemptionProposal.objects.get(pk=proposal["id"])
                return row if "runs on the freed room" in row.progress else None

            row = wait_for(
                says_it_runs,
                "the proposal to say the request runs on the freed room",
                timeout=30,
            )
            assert row.state == ProposalState.DONE
    finally:
        kube_stack.kubectl(
            "delete", "deployment", "fillers", "-n", "default", "--wait=false"
        )
        kube_stack.force_delete_pods("default", "app=filler")


def test_a_namespace_the_real_cluster_lacks_is_refused_then_held_never_failed(
    real_cluster, monkeypatch
):
    """Issue 15: the pipeline example (docs/pipelines.md) once failed for good with ``namespaces
    "ci" not found``. On the real API server: a 400 naming ``namespace`` at
    submission; a request that got past it (the namespace deleted since) is
    held by the pass, with the reason, before any room is booked."""
    from apps.scheduling.passes import scheduling_pass
    from apps.scheduling.services.queues import queue_create

    missing = "vnpu-no-such-namespace"
    queue_create(
        actor=None,
        cluster=real_cluster,
        name="nowhere",
        allowed_namespaces=[missing],
        access={"open_to_all": True},
    )
    ci = token_client("ci-missing-ns", "ci", queues=["nowhere"])
    body = {
        "cluster": "real",
        "namespace": missing,
        "queue": "nowhere",
        "chip_type": "Ascend310P",
        "memory": 5000,
        "priority": "batch-medium",
        "workload": {"image": "busybox", "command": ["sleep", "60"]},
    }
    refused = ci.post("/api/requests/", body, format="json")
    assert refused.status_code == 400, refused.json()
    assert list(refused.json()["errors"]) == ["namespace"]
    assert "does not exist" in refused.json()["errors"]["namespace"][0]
    assert not Request.objects.exists()

    # As if the namespace had existed at submission and been deleted since.
    monkeypatch.setattr(
        "apps.scheduling.services.requests._namespace_check",
        lambda cluster, namespace: "x",
    )
    monkeypatch.setattr(
        "apps.scheduling.services.followups.pass_after_commit", lambda pk: None
    )
    accepted = ci.post("/api/requests/", body, format="json")
    assert accepted.status_code == 201, accepted.json()
    report = scheduling_pass(real_cluster.pk)
    assert report is not None
    request = Request.objects.get(pk=accepted.json()["id"])
    assert request.state == RequestState.PENDING
    assert request.reason == f'namespace "{missing}" does not exist in the cluster'
    assert not Reservation.objects.filter(request=request).exists()
