"""Sync's hook: batches that touch the portal's pods (or victims) start a reconciliation."""

from __future__ import annotations

import pytest

from apps.inventory.sync.writer import ClusterWriter
from apps.scheduling.tasks import reconcile_requests_task

pytestmark = pytest.mark.django_db


def _pod(name: str, uuid: str) -> dict:
    return {
        "metadata": {
            "name": name,
            "namespace": "default",
            "annotations": {
                "hami.io/vgpu-node": "n1",
                "hami.io/Ascend310P-devices-allocated": f"{uuid},Ascend310P,3072,0:;",
                "huawei.com/Ascend310P": f'[{{"UUID":"{uuid}","temp":"vir01"}}]',
            },
        },
        "spec": {"nodeName": "n1", "priority": 100},
        "status": {"phase": "Running"},
    }


@pytest.fixture
def enqueued(monkeypatch):
    calls: list[int] = []
    monkeypatch.setattr(reconcile_requests_task, "delay", calls.append)
    return calls


def test_a_bound_portal_pod_triggers_a_reconciliation(
    world, enqueued, django_capture_on_commit_callbacks
):
    (chip,) = world.chips("Ascend310P", 1)
    writer = ClusterWriter(world.cluster)
    with django_capture_on_commit_callbacks(execute=True):
        writer.apply_pod_events([("ADDED", _pod("someone-else", chip.uuid))])
    assert enqueued == []
    with django_capture_on_commit_callbacks(execute=True):
        writer.apply_pod_events([("ADDED", _pod("vnpu-req-7", chip.uuid))])
    assert enqueued == [world.cluster.pk]


def test_a_removed_slice_triggers_one_while_a_preemption_is_carried_out(
    world, operator, fake_ops, enqueued, django_capture_on_commit_callbacks
):
    from apps.scheduling.choices import ProposalState
    from apps.scheduling.models import PreemptionProposal

    (chip,) = world.chips("Ascend310P", 1)
    writer = ClusterWriter(world.cluster)
    with django_capture_on_commit_callbacks(execute=True):
        writer.apply_pod_events([("ADDED", _pod("victim", chip.uuid))])
    request = world.request(operator)
    PreemptionProposal.objects.create(
        cluster=world.cluster,
        request=request,
        chip=chip,
        chip_uuid=chip.uuid,
        node="n1",
        memory=3072,
        victims=[{"namespace": "default", "pod": "victim"}],
        max_victim_priority=100,
        state=ProposalState.EVICTING,
    )
    with django_capture_on_commit_callbacks(execute=True):
        writer.apply_pod_events([("DELETED", _pod("victim", chip.uuid))])
    assert enqueued == [world.cluster.pk]


def test_a_failing_reconciliation_never_breaks_sync(
    world, monkeypatch, django_capture_on_commit_callbacks
):
    def boom(cluster_id):
        raise RuntimeError("broker down")

    monkeypatch.setattr(reconcile_requests_task, "delay", boom)
    (chip,) = world.chips("Ascend310P", 1)
    writer = ClusterWriter(world.cluster)
    with django_capture_on_commit_callbacks(execute=True):
        writer.apply_pod_events([("ADDED", _pod("vnpu-req-8", chip.uuid))])
    assert world.cluster.slices.filter(pod_name="vnpu-req-8").exists()
