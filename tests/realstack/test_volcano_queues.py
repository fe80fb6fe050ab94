"""Portal queues as Volcano Queues on the real Volcano v1.15.1.

A portal queue appears as an Open Volcano Queue carrying the capability of its
quota. Closing it the Volcano way (``vcctl queue operate -a close``: a
``bus.volcano.sh/v1alpha1`` Command that vc-controller-manager turns into
``status.state: Closed``) makes a new request wait with that reason and no
pod; reopening it (the ``OpenQueue`` Command) lets the request run in it.
"""

from __future__ import annotations

import json

import pytest

from apps.scheduling.choices import RequestState
from apps.scheduling.models import Request
from apps.scheduling.services import queues
from harness.portal import (
    Running,
    ci_request,
    request_state,
    token_client,
    wait_running,
)
from tests.polling import wait_for

pytestmark = [
    pytest.mark.realstack,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]
NAME = "rs-ml"
CAPABILITY = {"huawei.com/Ascend310P": "4", "huawei.com/Ascend310P-memory": "20000"}


@pytest.fixture
def portal_queue(kube_stack, real_cluster, admin_user):
    queue = queues.queue_create(
        actor=admin_user,
        cluster=real_cluster,
        name=NAME,
        quotas=[{"chip_type": "Ascend310P", "slots_limit": 4, "memory_limit": 20000}],
        access={"open_to_all": True},
    )
    yield queue
    kube_stack.kubectl("delete", "queue", NAME, "--ignore-not-found", check=False)


def _volcano_queue(kube_stack) -> dict | None:
    done = kube_stack.kubectl("get", "queue", NAME, "-o", "json", check=False)
    return json.loads(done.stdout) if done.returncode == 0 else None


def _state(kube_stack) -> str:
    return ((_volcano_queue(kube_stack) or {}).get("status") or {}).get("state", "")


def _operate(kube_stack, action: str) -> None:
    """What ``vcctl queue operate -n rs-ml -a open|close`` creates."""
    queue = _volcano_queue(kube_stack)
    assert queue is not None
    owner = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "name": NAME,
        "uid": queue["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }
    command = {
        "apiVersion": "bus.volcano.sh/v1alpha1",
        "kind": "Command",
        "metadata": {
            "generateName": f"{NAME}-{action.lower()}-",
            "namespace": "default",
            "ownerReferences": [owner],
        },
        "target": owner,
        "action": action,
    }
    kube_stack.kubectl("create", "-f", "-", stdin=json.dumps(command))


def _pods_of(kube_stack, request_id: int) -> list[str]:
    done = kube_stack.kubectl(
        "get", "pods", "-A", "-l", f"vnpu-portal/request={request_id}", "-o", "name"
    )
    return done.stdout.split()


def test_a_portal_queue_is_an_open_volcano_queue_with_its_capability(
    kube_stack, real_cluster, portal_queue, admin_client_api
):
    with Running(real_cluster):
        wait_for(
            lambda: _state(kube_stack) == "Open",
            "vc-controller-manager to open the portal's Volcano queue",
            timeout=30,
        )
        made = _volcano_queue(kube_stack)
        assert made["metadata"]["labels"]["vnpu-portal.io/managed"] == "true"
        assert made["spec"]["capability"] == CAPABILITY
        shown = wait_for(
            lambda: (
                (v := admin_client_api.get(f"/api/queues/{portal_queue.pk}/").json())[
                    "volcano"
                ]["state"]
                == "Open"
                and v["volcano"]
            ),
            "the portal to see its queue Open",
            timeout=30,
        )
        assert shown["managed"] is True
        assert shown["capability"] == CAPABILITY


def test_a_closed_queue_holds_a_request_without_a_pod_until_it_reopens(
    kube_stack, real_cluster, portal_queue, cleanup
):
    ci = token_client("ci-bot", "operator")
    with Running(real_cluster) as running:
        wait_for(lambda: _state(kube_stack) == "Open", "the queue to open", timeout=30)
        _operate(kube_stack, "CloseQueue")
        wait_for(
            lambda: _state(kube_stack) == "Closed",
            "vc-controller-manager to close the queue",
            timeout=30,
        )
        submitted = ci.post(
            "/api/requests/",
            ci_request(queue=NAME, idempotency_key="rs-closed-queue"),
            format="json",
        )
        assert submitted.status_code == 201, submitted.json()
        request_id = submitted.json()["id"]
        waiting = wait_for(
            lambda: "is Closed" in (s := request_state(ci, request_id))["reason"] and s,
            "the request to wait for its closed queue",
            timeout=30,
        )
        assert waiting["state"] == RequestState.PENDING
        assert f'Volcano queue "{NAME}" is Closed' in waiting["reason"]
        # several passes later: still waiting, and no pod was ever sent
        running.wait_passes(6, timeout=60)
        assert request_state(ci, request_id)["state"] == RequestState.PENDING
        assert _pods_of(kube_stack, request_id) == []
        assert _state(kube_stack) == "Closed"  # the portal never reopens it

        # when an admin reopens it, the request runs in it
        _operate(kube_stack, "OpenQueue")
        shown = wait_running(ci, request_id, timeout=90)
        request = Request.objects.get(pk=request_id)
        cleanup.append(("default", request.pod_name))
        pod = json.loads(
            kube_stack.kubectl(
                "get", "pod", "-n", "default", request.pod_name, "-o", "json"
            ).stdout
        )
        assert (
            pod["metadata"]["annotations"]["scheduling.volcano.sh/queue-name"] == NAME
        )
        assert shown["node"] == pod["spec"]["nodeName"]
        assert ci.delete(f"/api/requests/{request_id}/").status_code == 200
