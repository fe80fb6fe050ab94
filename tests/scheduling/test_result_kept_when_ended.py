"""A request's exit code is kept from the pod seen when it ended, not only
when its log is kept later: a pod deleted in between (a fresh-clone run on a
busy machine) left `vnpu run` a failed job "without an exit code"."""

from __future__ import annotations

import pytest
from django.utils import timezone

from apps.scheduling import states
from apps.scheduling.choices import RequestState
from apps.scheduling.logs import result_record_ended
from apps.scheduling.models import Request
from apps.scheduling.pods import LABEL_REQUEST

pytestmark = pytest.mark.django_db


def _ended_pod(request_id: int, code: int) -> dict:
    return {
        "metadata": {
            "name": "p",
            "namespace": "ci",
            "labels": {LABEL_REQUEST: str(request_id)},
        },
        "spec": {"containers": [{"name": "main"}]},
        "status": {
            "phase": "Failed",
            "containerStatuses": [
                {
                    "name": "main",
                    "state": {"terminated": {"exitCode": code, "reason": "Error"}},
                }
            ],
        },
    }


def test_the_exit_code_seen_when_the_request_ended_survives_its_pod(
    world, operator
) -> None:
    request = world.request(operator)
    Request.objects.filter(pk=request.pk).update(state=RequestState.RUNNING)
    assert states.request_move(
        request.pk,
        from_states=[RequestState.RUNNING],
        to=RequestState.FAILED,
        finished_at=timezone.now(),
        reason="the pod failed: container main exited 3 (Error)",
    )
    result_record_ended(request.pk, _ended_pod(request.pk, 3))
    kept = Request.objects.get(pk=request.pk)
    assert (kept.exit_code, kept.result["reason"]) == (3, "Error")
    # a pod of another request, or none, changes nothing
    result_record_ended(request.pk, _ended_pod(request.pk + 1, 7))
    result_record_ended(request.pk, None)
    assert Request.objects.get(pk=request.pk).exit_code == 3
