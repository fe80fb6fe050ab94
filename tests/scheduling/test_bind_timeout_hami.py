"""The bind timeout under HAMi's scheduler: a pod still in its queue is not stuck.

HAMi v2.9.0's client is throttled to 5 requests a second (client-go's default,
kept by its chart: ``cmd/scheduler/main.go`` ``--kube-qps``). kube-scheduler
waits for the extender's ``Filter`` (a pod patch) at each attempt, and
``Scheduler.Bind`` (``pkg/scheduler/scheduler.go``) takes the node lock
``hami.io/mutex.lock`` (``pkg/util/nodelock/nodelock.go`` ``LockNode``),
which only the device plugin lifts after Allocate (ascend-device-plugin
``internal/server/server.go`` ``Allocate`` → ``PodAllocationTrySuccess`` →
``nodelock.ReleaseNodeLock``); other binds on that node fail meanwhile and are
backed off. 40 pods at once onto 3 nodes: the last were not even filtered 30 s
after their creation, and the portal deleted them (``bench.burst --quick
--scheduler hami``). Now such a pod waits unless kube-scheduler found it
unschedulable (``reconcile._hami_bind_in_progress``).
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from apps.inventory.choices import SchedulerSetting
from apps.scheduling.choices import RequestState
from apps.scheduling.reconcile import HAMI_NODE_LOCK_EXPIRE_SECONDS
from tests.scheduling.helpers import run_pass

pytestmark = pytest.mark.django_db

NODE = "npu-node-310p-01"
# HAMi's Bind error, as kube-scheduler passes an extender's on (extendersBinding)
LOCKED = "node npu-node-310p-01 has been locked within 5m0s"


@pytest.fixture
def hami_world(world):
    world.cluster.scheduler = SchedulerSetting.HAMI
    world.cluster.save(update_fields=["scheduler"])
    world.chips("Ascend310P", 1, node=NODE)
    return world


def _admitted(world, operator, fake_ops, settings):
    settings.REQUEST_BIND_TIMEOUT_SECONDS = 30
    request = world.request(operator)
    run_pass(world.cluster)
    request.refresh_from_db()
    assert request.state == RequestState.ADMITTED
    pod = fake_ops.pods[("ci", request.pod_name)]
    assert pod["spec"]["schedulerName"] == "hami-scheduler"
    return request, pod


def _scheduled_false(pod, reason: str, message: str) -> None:
    """What kube-scheduler writes on a pod it could not schedule or bind."""
    pod.setdefault("status", {})["conditions"] = [
        {
            "type": "PodScheduled",
            "status": "False",
            "reason": reason,
            "message": message,
        }
    ]


def _at(world, request, seconds: int):
    now = request.admitted_at + timedelta(seconds=seconds)
    return run_pass(world.cluster, now=now).reconciled.retried


def test_a_pod_not_yet_tried_or_waiting_for_the_node_lock_is_kept(
    hami_world, operator, fake_ops, settings
):
    request, pod = _admitted(hami_world, operator, fake_ops, settings)

    # not yet looked at by kube-scheduler (no condition): queued, kept
    assert _at(hami_world, request, 31) == []
    # its bind failed on the node lock another pod's bind holds: kept
    _scheduled_false(pod, "SchedulerError", LOCKED)
    assert _at(hami_world, request, 60) == []
    assert _at(hami_world, request, 200) == []
    request.refresh_from_db()
    assert request.state == RequestState.ADMITTED
    assert request.attempts == 0
    assert ("delete_pod", "ci", request.pod_name) not in fake_ops.calls


def test_an_unschedulable_pod_times_out_as_before(
    hami_world, operator, fake_ops, settings
):
    request, pod = _admitted(hami_world, operator, fake_ops, settings)
    _scheduled_false(pod, "Unschedulable", "0/5 nodes are available")
    assert _at(hami_world, request, 31) == [request.pk]
    request.refresh_from_db()
    assert request.attempts == 1
    assert request.pod_name == f"vnpu-req-{request.pk}-1"  # a new pod


def test_waiting_ends_at_hamis_node_lock_expiry(
    hami_world, operator, fake_ops, settings
):
    # HAMi takes over a lock older than five minutes: past that (and the
    # timeout), a pod still unbound is not waiting for a bind in flight
    request, pod = _admitted(hami_world, operator, fake_ops, settings)
    _scheduled_false(pod, "SchedulerError", LOCKED)
    limit = HAMI_NODE_LOCK_EXPIRE_SECONDS + 30
    assert _at(hami_world, request, limit) == []
    assert _at(hami_world, request, limit + 1) == [request.pk]


def test_a_volcano_pod_is_not_spared(world, operator, fake_ops, settings):
    # Volcano binds in its own sessions: a pod it left behind (across its
    # restart) is never bound, so the plain timeout stays
    world.chips("Ascend310P", 1, node=NODE)
    settings.REQUEST_BIND_TIMEOUT_SECONDS = 30
    request = world.request(operator)
    run_pass(world.cluster)
    request.refresh_from_db()
    pod = fake_ops.pods[("ci", request.pod_name)]
    assert pod["spec"]["schedulerName"] != "hami-scheduler"
    assert _at(world, request, 31) == [request.pk]
