"""A pod that fails before it runs: the request gets a new pod, up to a limit."""

from __future__ import annotations

import pytest

from apps.audit.models import AuditEvent
from apps.inventory.models import Slice
from apps.scheduling.choices import RequestState
from apps.scheduling.pods import never_ran
from tests.scheduling.helpers import run_pass

pytestmark = pytest.mark.django_db

REFUSED = {
    "phase": "Failed",
    "reason": "UnexpectedAdmissionError",
    "message": "Allocate failed due to no such device",
}
START_ERROR = {
    "phase": "Failed",
    "containerStatuses": [
        {
            "name": "main",
            "state": {
                "terminated": {
                    "exitCode": 128,
                    "reason": "StartError",
                    "message": "the vNPU cannot be created",
                    "startedAt": "1970-01-01T00:00:00Z",
                    "finishedAt": "2026-12-06T10:00:00Z",
                }
            },
        }
    ],
}


def _fail_current_pod(fake_ops, request, status):
    request.refresh_from_db()
    pod = fake_ops.pods[(request.namespace, request.pod_name)]
    pod["spec"]["nodeName"] = request.node or "n1"
    pod["status"] = dict(status)
    return request.pod_name


def test_a_pod_refused_at_admission_gets_a_new_pod(world, operator, fake_ops):
    # given a request admitted, whose pod the node refuses before sync saw it bound
    world.chips("Ascend310P", 1)
    request = world.request(operator)
    run_pass(world.cluster)
    first = _fail_current_pod(fake_ops, request, REFUSED)

    # when the next pass runs
    report = run_pass(world.cluster)

    # then the failed pod is gone, and a new one was admitted in the same pass
    request.refresh_from_db()
    assert report.reconciled.retried == [request.pk]
    assert (request.namespace, first) not in fake_ops.pods
    assert request.state == RequestState.ADMITTED
    assert request.attempts == 1
    assert request.pod_name == f"{first}-1"
    assert (request.namespace, request.pod_name) in fake_ops.pods
    # and the failure is kept on the request and in its audit trail
    (failure,) = request.pod_failures
    assert failure["pod"] == first
    assert "UnexpectedAdmissionError" in failure["reason"]
    event = AuditEvent.objects.get(action="request.pod_failed")
    assert event.after["pod"] == first
    assert event.object_id == str(request.pk)


def test_a_bound_pod_whose_vnpu_is_not_made_is_retried_not_failed(
    world, operator, fake_ops
):
    # given a running request (sync saw its pod bound) whose container never starts
    (chip,) = world.chips("Ascend310P", 1)
    request = world.request(operator)
    run_pass(world.cluster)
    request.refresh_from_db()
    world.slice(chip, request.pod_name, request.template_booked, namespace="ci")
    run_pass(world.cluster)
    request.refresh_from_db()
    assert request.state == RequestState.RUNNING
    first = _fail_current_pod(fake_ops, request, START_ERROR)
    Slice.objects.filter(pod_name=first).delete()

    run_pass(world.cluster)

    request.refresh_from_db()
    assert request.state == RequestState.ADMITTED
    assert request.attempts == 1
    assert "StartError" in request.pod_failures[0]["reason"]
    assert request.pod_failures[0]["chip_uuid"] == chip.uuid


def test_after_the_limit_the_request_fails_with_the_last_reason(
    world, operator, fake_ops, settings
):
    settings.REQUEST_MAX_POD_FAILURES = 2
    world.chips("Ascend310P", 1)
    request = world.request(operator)
    run_pass(world.cluster)
    _fail_current_pod(fake_ops, request, REFUSED)
    run_pass(world.cluster)
    last = _fail_current_pod(fake_ops, request, START_ERROR)

    run_pass(world.cluster)

    request.refresh_from_db()
    assert request.state == RequestState.FAILED
    assert len(request.pod_failures) == 2
    assert "2 pods failed before running" in request.reason
    assert last in request.reason
    assert "StartError" in request.reason
    assert not [k for k in fake_ops.pods if k[1].startswith(f"vnpu-req-{request.pk}")]


def test_a_chip_the_pod_failed_on_twice_is_not_offered_again(
    world, operator, fake_ops, settings
):
    settings.REQUEST_MAX_POD_FAILURES = 10
    chips = world.chips("Ascend310P", 2)
    request = world.request(operator)
    run_pass(world.cluster)
    request.refresh_from_db()
    # every pod fails at start, wherever it goes, until the request waits
    while request.state == RequestState.ADMITTED:
        _fail_current_pod(fake_ops, request, START_ERROR)
        run_pass(world.cluster)
        request.refresh_from_db()
    # then no pod went to a chip after its second failure there: two each
    on = [f["chip_id"] for f in request.pod_failures]
    assert sorted(on) == sorted([c.pk for c in chips] * 2)
    # and it waits, saying both chips are excluded
    assert request.state == RequestState.PENDING
    assert "(2 excluded)" in request.reason


def test_a_pod_that_ran_and_ended_before_sync_saw_it_ends_the_request(
    world, operator, fake_ops
):
    world.chips("Ascend310P", 2)
    short, failing = world.request(operator), world.request(operator)
    run_pass(world.cluster)
    _fail_current_pod(fake_ops, short, {"phase": "Succeeded"})
    _fail_current_pod(
        fake_ops,
        failing,
        {
            "phase": "Failed",
            "containerStatuses": [
                {
                    "name": "main",
                    "state": {
                        "terminated": {
                            "exitCode": 3,
                            "reason": "Error",
                            "startedAt": "2026-12-06T10:00:00Z",
                        }
                    },
                }
            ],
        },
    )

    report = run_pass(world.cluster)

    short.refresh_from_db()
    failing.refresh_from_db()
    assert sorted(report.reconciled.ended) == sorted([short.pk, failing.pk])
    assert short.state == RequestState.SUCCEEDED
    assert failing.state == RequestState.FAILED
    assert "exited 3" in failing.reason
    assert failing.attempts == 0
    assert failing.pod_failures == []


@pytest.mark.parametrize(
    ("status", "ran"),
    [
        (REFUSED, False),
        (START_ERROR, False),
        ({"phase": "Failed", "reason": "Evicted"}, False),
        (
            {
                "phase": "Failed",
                "containerStatuses": [
                    {"state": {"waiting": {"reason": "ImagePullBackOff"}}}
                ],
            },
            False,
        ),
        (
            {
                "phase": "Failed",
                "containerStatuses": [
                    {"state": {"terminated": {"exitCode": 1, "reason": "Error"}}}
                ],
            },
            True,
        ),
        (
            {
                "phase": "Failed",
                "containerStatuses": [
                    {
                        "state": {"terminated": {"reason": "StartError"}},
                        "lastState": {
                            "terminated": {"startedAt": "2026-12-06T10:00:00Z"}
                        },
                    }
                ],
            },
            True,
        ),
        ({"phase": "Succeeded"}, True),
        ({"phase": "Running"}, True),
    ],
)
def test_never_ran_reads_the_pods_status(status, ran):
    assert never_ran({"status": status}) is (not ran)
