"""Portal queues as Volcano Queues, and requests that wait for theirs to be Open.

Against simcluster (it serves Queues; its queue controller opens a new one as
vc-controller-manager does) with sync run by hand, and with the fake API
server where a cluster answer is forced. The real Volcano is the judge in
tests/realstack/test_volcano_queues.py.
"""

from __future__ import annotations

import pytest
from django.utils import timezone

from apps.inventory.models import ChipType, ClusterObject, SyncCursor
from apps.inventory.sync.engine import sync_once
from apps.scheduling.admission import requests_admit
from apps.scheduling.choices import RequestState
from apps.scheduling.kube import KubeError
from apps.scheduling.models import Queue, QueueQuota, Reservation
from apps.scheduling.services import allocations, queues
from apps.scheduling.volcano import MANAGED_LABEL, capability
from tests.scheduling.helpers import run_pass

pytestmark = pytest.mark.django_db
GROUP, VERSION, PLURAL = "scheduling.volcano.sh", "v1beta1", "queues"


@pytest.fixture
def custom(sim, tmp_path):
    """A CustomObjectsApi on the simulator (admin)."""
    from kubernetes import client

    return client.CustomObjectsApi(sim.kubernetes_client(tmp_path / "kc-custom"))


def _queue(custom, name: str) -> dict:
    return custom.get_cluster_custom_object(GROUP, VERSION, PLURAL, name)


def _set_state(custom, name: str, state: str) -> None:
    # What vc-controller-manager does after `vcctl queue operate -a close/open`.
    custom.patch_cluster_custom_object_status(
        GROUP, VERSION, PLURAL, name, {"status": {"state": state}}
    )


def _portal_queue(live, admin_user, name: str, **quota) -> Queue:
    return queues.queue_create(
        actor=admin_user,
        cluster=live.cluster,
        name=name,
        quotas=[{"chip_type": "Ascend310P", **quota}] if quota else [],
        allowed_namespaces=["ci"],
        access={"open_to_all": True},
    )


def _pods(sim_core, request) -> list[str]:
    pods = sim_core.list_namespaced_pod(
        "ci", label_selector=f"vnpu-portal/request={request.pk}"
    )
    return [p.metadata.name for p in pods.items]


def test_quotas_map_to_the_device_plugin_resources(world):
    queue = world.queue("ml")
    QueueQuota.objects.create(
        queue=queue, common_word="Ascend310P", slots_limit=4, memory_limit=20000
    )
    QueueQuota.objects.create(queue=queue, common_word="Ascend910B4", slots_limit=2)
    types = {
        ct.common_word: ct for ct in ChipType.objects.filter(cluster=world.cluster)
    }

    assert capability(queue.quotas.all(), types) == {
        "huawei.com/Ascend310P": "4",
        "huawei.com/Ascend310P-memory": "20000",
        "huawei.com/Ascend910B4": "2",
    }
    # an unlimited quota adds nothing: no capability is Volcano's "unlimited"
    QueueQuota.objects.filter(queue=queue).update(slots_limit=None, memory_limit=None)
    assert capability(queue.quotas.all(), types) == {}


def test_a_portal_queue_becomes_an_open_volcano_queue_kept_in_step(
    live, custom, admin_user, admin_client_api
):
    queue = _portal_queue(live, admin_user, "ml", slots_limit=4, memory_limit=20000)
    run_pass(live.cluster)

    made = _queue(custom, "ml")
    assert made["metadata"]["labels"][MANAGED_LABEL] == "true"
    assert made["spec"]["capability"] == {
        "huawei.com/Ascend310P": "4",
        "huawei.com/Ascend310P-memory": "20000",
    }
    assert made["status"]["state"] == "Open"  # simcluster's queue controller
    sync_once(live.cluster)
    shown = admin_client_api.get(f"/api/queues/{queue.pk}/").json()["volcano"]
    assert shown["state"] == "Open"
    assert shown["managed"] is True
    assert shown["reason"] == ""

    # a quota change reaches the Volcano Queue (its state untouched)
    queues.queue_update(
        actor=admin_user,
        queue=queue,
        quotas=[{"chip_type": "Ascend310P", "slots_limit": 2}],
    )
    run_pass(live.cluster)
    changed = _queue(custom, "ml")
    assert changed["spec"]["capability"] == {"huawei.com/Ascend310P": "2"}
    assert changed["status"]["state"] == "Open"
    # and a pass with everything in step writes nothing
    version = changed["metadata"]["resourceVersion"]
    sync_once(live.cluster)
    run_pass(live.cluster)
    assert _queue(custom, "ml")["metadata"]["resourceVersion"] == version


def test_a_quota_change_lands_while_volcano_keeps_writing_the_queue(
    live, custom, admin_user
):
    """Volcano writes a queue's status after sync saw it: the PUT on the
    version sync saw is a 409, so the queue is read again and the PUT retried
    in the same pass, not left for a sync that a busy queue may never let win."""
    queue = _portal_queue(live, admin_user, "ml", slots_limit=4)
    run_pass(live.cluster)
    sync_once(live.cluster)
    seen = _queue(custom, "ml")["metadata"]["resourceVersion"]
    custom.patch_cluster_custom_object_status(
        GROUP, VERSION, PLURAL, "ml", {"status": {"allocated": {"cpu": "1"}}}
    )
    mirrored = ClusterObject.objects.get(cluster=live.cluster, kind="Queue", name="ml")
    assert mirrored.data["metadata"]["resourceVersion"] == seen  # sync is behind

    queues.queue_update(
        actor=admin_user,
        queue=queue,
        quotas=[{"chip_type": "Ascend310P", "slots_limit": 2}],
    )
    run_pass(live.cluster)

    changed = _queue(custom, "ml")
    assert changed["spec"]["capability"] == {"huawei.com/Ascend310P": "2"}
    assert changed["status"]["allocated"] == {"cpu": "1"}  # Volcano's write kept


def test_a_volcano_queue_the_portal_did_not_create_is_left_as_it_is(
    live, custom, admin_user, admin_client_api
):
    # the guide scenario's Volcano queue "ci" was made by an admin, not the portal
    before = _queue(custom, "ci")
    queue = _portal_queue(live, admin_user, "ci", slots_limit=1)
    run_pass(live.cluster)
    after = _queue(custom, "ci")
    assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]
    assert "capability" not in after["spec"]
    shown = admin_client_api.get(f"/api/queues/{queue.pk}/").json()["volcano"]
    assert shown == {"state": "Open", "managed": False, "capability": {}, "reason": ""}


def test_a_request_into_a_closed_queue_waits_without_a_pod_until_it_opens(
    live, custom, sim_core, admin_user, operator, operator_client
):
    live.priority_classes()
    queue = _portal_queue(live, admin_user, "ml")
    run_pass(live.cluster)
    _set_state(custom, "ml", "Closed")
    sync_once(live.cluster)

    request = live.request(operator, queue="ml", namespace="ci")
    run_pass(live.cluster)
    request.refresh_from_db()
    # then it waits, saying why, and no pod was sent into the closed queue
    assert request.state == RequestState.PENDING
    assert 'Volcano queue "ml" is Closed' in request.reason
    assert "vcctl queue operate -n ml -a open" in request.reason
    assert _pods(sim_core, request) == []
    shown = operator_client.get(f"/api/requests/{request.pk}/").json()
    assert shown["state"] == "pending"
    assert shown["reason"] == request.reason
    listed = operator_client.get(f"/api/queues/{queue.pk}/").json()["volcano"]
    assert listed["state"] == "Closed"
    assert listed["reason"] == request.reason
    # the portal never reopens a queue an admin closed
    run_pass(live.cluster)
    assert _queue(custom, "ml")["status"]["state"] == "Closed"

    # when the queue opens, the request proceeds into it
    _set_state(custom, "ml", "Open")
    sync_once(live.cluster)
    run_pass(live.cluster)
    request.refresh_from_db()
    assert request.state == RequestState.ADMITTED, request.reason
    pod = sim_core.read_namespaced_pod(request.pod_name, "ci")
    assert pod.metadata.annotations["scheduling.volcano.sh/queue-name"] == "ml"


def _watched(cluster) -> None:
    """Sync has listed the cluster's Volcano Queues (and found none)."""
    now = timezone.now()
    SyncCursor.objects.create(
        cluster=cluster,
        resource="volcano-queues",
        last_list_at=now,
        last_success_at=now,
    )


def test_a_missing_queue_holds_the_request_until_it_is_made_and_open(
    world, operator, fake_ops
):
    world.chips("Ascend310P", 1)
    _watched(world.cluster)
    fake_ops.errors["create_queue"] = KubeError(403, "forbidden", transient=False)
    request = world.request(operator)

    run_pass(world.cluster)
    request.refresh_from_db()
    assert request.state == RequestState.PENDING
    assert 'Volcano queue "default" does not exist in the cluster' in request.reason
    assert ("create_queue", "", "default") in fake_ops.calls
    assert not [c for c in fake_ops.calls if c[0] == "create_pod"]

    # created now, but not opened yet by vc-controller-manager: still waiting
    del fake_ops.errors["create_queue"]
    run_pass(world.cluster)
    request.refresh_from_db()
    assert fake_ops.queues["default"]["metadata"]["labels"][MANAGED_LABEL] == "true"
    assert request.state == RequestState.PENDING
    assert "has no state yet" in request.reason
    assert not [c for c in fake_ops.calls if c[0] == "create_pod"]

    ClusterObject.objects.filter(cluster=world.cluster, kind="Queue").update(
        data={**fake_ops.queues["default"], "status": {"state": "Open"}}
    )
    run_pass(world.cluster)
    request.refresh_from_db()
    assert request.state == RequestState.ADMITTED, request.reason
    assert ("create_pod", "ci", request.pod_name) in fake_ops.calls


def test_a_reserved_request_whose_queue_closed_gives_its_room_back(
    world, operator, fake_ops
):
    world.chips("Ascend310P", 1)
    _watched(world.cluster)
    ClusterObject.objects.create(
        cluster=world.cluster,
        kind="Queue",
        name="default",
        data={"metadata": {"name": "default"}, "status": {"state": "Open"}},
    )
    request = world.request(operator)
    allocations.allocation_create(cluster_id=world.cluster.pk)
    request.refresh_from_db()
    assert request.state == RequestState.RESERVED

    # closed after the room was booked, before the pod was created
    ClusterObject.objects.filter(cluster=world.cluster, kind="Queue").update(
        data={"metadata": {"name": "default"}, "status": {"state": "Closing"}}
    )
    requests_admit(world.cluster, ops=fake_ops)
    request.refresh_from_db()
    assert request.state == RequestState.PENDING
    assert 'Volcano queue "default" is Closing' in request.reason
    assert request.chip is None
    assert not Reservation.objects.filter(request=request).exists()
    assert not [c for c in fake_ops.calls if c[0] == "create_pod"]


def test_without_a_synced_queue_list_nothing_waits_for_a_queue(
    world, operator, fake_ops
):
    # (sync has not listed Volcano Queues: the portal cannot tell, so it sends)
    world.chips("Ascend310P", 1)
    request = world.request(operator)
    run_pass(world.cluster)
    request.refresh_from_db()
    assert request.state == RequestState.ADMITTED
    assert not [c for c in fake_ops.calls if c[0] == "create_queue"]


def test_discovery_lists_the_queues_the_api_server_serves(sim, tmp_path):
    """A 404 on a CRD's list counts as "not served" only when discovery agrees:
    a restarting API server answers 404 for custom resources it has not loaded."""
    from apps.inventory.sync.kubeapi import discovered

    api = sim.kubernetes_client(tmp_path / "kc-discovery")
    assert discovered(api, f"/apis/{GROUP}/{VERSION}/{PLURAL}")
    assert discovered(api, "/api/v1/namespaces/kube-system/configmaps")
    assert not discovered(api, f"/apis/{GROUP}/{VERSION}/no-such-things")
