"""A request's namespace must exist in the cluster: 400 at submit time, held by the pass.

The pipeline example (then in the README, now docs/pipelines.md) once waited
four minutes and then failed for good with ``namespaces "ci" not found``
(issue 15): the portal now asks the
cluster at submission, and every pass lists the namespaces before it books
room, so a namespace deleted later holds the request instead of failing it.
"""

from __future__ import annotations

import pytest

from apps.scheduling.choices import ProposalState, RequestState
from apps.scheduling.kube import KubeError
from apps.scheduling.models import PreemptionProposal, Request, Reservation
from tests.scheduling.helpers import run_pass

pytestmark = pytest.mark.django_db

BODY = {
    "namespace": "ci",
    "chip_type": "Ascend310P",
    "memory": 5000,
    "priority": "batch-medium",
    "workload": {"image": "busybox", "command": ["sleep", "60"]},
}


def _post(client, world, **changes):
    body = {"cluster": world.cluster.name, **BODY, **changes}
    return client.post("/api/requests/", body, format="json")


def test_a_namespace_the_cluster_lacks_is_a_400_naming_namespace(
    world, operator_client, fake_ops
):
    fake_ops.namespace_names = {"default", "kube-system"}
    response = _post(operator_client, world, idempotency_key="job-1")
    assert response.status_code == 400, response.json()
    errors = response.json()["errors"]
    assert list(errors) == ["namespace"]
    assert 'namespace "ci" does not exist' in errors["namespace"][0]
    assert ("namespace_exists", "", "ci") in fake_ops.calls
    assert not Request.objects.exists()

    fake_ops.namespace_names.add("ci")
    response = _post(operator_client, world, idempotency_key="job-1")
    assert response.status_code == 201, response.json()
    assert response.json()["reason"] == "waiting for the next allocation pass"


def test_an_unreachable_cluster_accepts_and_says_the_namespace_is_unchecked(
    world, operator_client, fake_ops
):
    fake_ops.errors["namespace_exists"] = KubeError(
        None, "connection refused", transient=True
    )
    response = _post(operator_client, world)
    assert response.status_code == 201, response.json()
    assert "not checked" in response.json()["reason"]
    assert "connection refused" in response.json()["reason"]


def test_a_retried_submission_does_not_ask_the_cluster_again(
    world, operator_client, fake_ops
):
    assert _post(operator_client, world, idempotency_key="k").status_code == 201
    asked = [c for c in fake_ops.calls if c[0] == "namespace_exists"]
    fake_ops.namespace_names = set()  # deleted since: the retry still gets its request
    again = _post(operator_client, world, idempotency_key="k")
    assert again.status_code == 200, again.json()
    assert [c for c in fake_ops.calls if c[0] == "namespace_exists"] == asked


def test_a_namespace_deleted_after_submission_holds_the_request_before_booking(
    world, operator, fake_ops
):
    world.chips("Ascend310P", 1)
    request = world.request(operator)
    fake_ops.namespace_names = {"default"}  # "ci" deleted after submission
    for _ in range(2):  # it stays held pass after pass, never failed
        report = run_pass(world.cluster)
        request.refresh_from_db()
        assert request.state == RequestState.PENDING
        assert request.reason == 'namespace "ci" does not exist in the cluster'
        assert request.pk in report.allocation.waiting
        assert not Reservation.objects.exists()
        assert not any(c[0] == "create_pod" for c in fake_ops.calls)
    assert sum(1 for c in fake_ops.calls if c[0] == "namespaces") == 2

    fake_ops.namespace_names.add("ci")  # created: the next pass admits it
    run_pass(world.cluster)
    request.refresh_from_db()
    assert request.state == RequestState.ADMITTED
    assert ("create_pod", "ci", request.pod_name) in fake_ops.calls


def test_a_held_request_leaves_room_to_the_others(world, operator, fake_ops):
    world.chips("Ascend310P", 1)
    world.queue("default", namespaces=("ci", "gone"))
    fake_ops.namespace_names = {"ci", "gone"}
    held = world.request(operator, namespace="gone", priority="inference-high")
    fake_ops.namespace_names = {"ci"}
    other = world.request(operator)
    run_pass(world.cluster)
    held.refresh_from_db()
    other.refresh_from_db()
    assert held.state == RequestState.PENDING
    assert "does not exist" in held.reason
    assert other.state == RequestState.ADMITTED


def test_a_pending_proposal_of_a_held_request_is_superseded(world, operator, fake_ops):
    from apps.scheduling.allocation import hold_for_namespace

    world.chips("Ascend310P", 1)
    request = world.request(operator)
    proposal = PreemptionProposal.objects.create(
        request=request,
        cluster=world.cluster,
        chip_uuid="x",
        node="n1",
        memory=6144,
        victims=[],
        max_victim_priority=0,
        lost_seconds=0,
    )
    assert hold_for_namespace([request]) == [request.pk]
    proposal.refresh_from_db()
    assert proposal.state == ProposalState.SUPERSEDED
    assert "does not exist" in proposal.reason


def test_an_unlistable_cluster_leaves_every_request_in_the_allocation(
    world, operator, fake_ops
):
    world.chips("Ascend310P", 1)
    request = world.request(operator)
    fake_ops.errors["namespaces"] = KubeError(503, "unavailable", transient=True)
    run_pass(world.cluster)
    request.refresh_from_db()
    assert request.state == RequestState.ADMITTED


def test_a_pass_with_nothing_pending_lists_no_namespaces(world, fake_ops):
    world.chips("Ascend310P", 1)
    run_pass(world.cluster)
    assert not any(c[0] == "namespaces" for c in fake_ops.calls)


def test_a_namespace_the_cluster_has_is_not_asked_again_for_a_while(
    world, operator_client, fake_ops, monkeypatch
):
    from apps.scheduling import namespaces_seen

    def asked() -> int:
        return sum(1 for c in fake_ops.calls if c[0] == "namespace_exists")

    clock = [1000.0]
    monkeypatch.setattr(namespaces_seen.time, "monotonic", lambda: clock[0])
    assert _post(operator_client, world, idempotency_key="a").status_code == 201
    assert _post(operator_client, world, idempotency_key="b").status_code == 201
    assert asked() == 1  # the second submission took the answer just given
    clock[0] += namespaces_seen.SEEN_SECONDS + 1
    assert _post(operator_client, world, idempotency_key="c").status_code == 201
    assert asked() == 2  # remembered only for a while


def test_a_namespace_the_cluster_lacks_is_asked_every_time(
    world, operator_client, fake_ops
):
    fake_ops.namespace_names = {"default"}
    for key in ("a", "b"):
        assert _post(operator_client, world, idempotency_key=key).status_code == 400
    assert sum(1 for c in fake_ops.calls if c[0] == "namespace_exists") == 2
    # created by the pipeline: the next submission is served at once
    fake_ops.namespace_names.add("ci")
    assert _post(operator_client, world, idempotency_key="c").status_code == 201
