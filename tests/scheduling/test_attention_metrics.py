"""/metrics: the scheduling figures the alerts read (docs/alerts.md): requests
pending and why, proposals waiting for an admin, queues against their quota,
bind timeouts and released node locks; every label bounded."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.audit.services import audit_record
from apps.scheduling.choices import ProposalState, RequestState, WaitClass
from apps.scheduling.models import PreemptionProposal, QueueQuota, Request
from apps.scheduling.nodelocks import LOCK_RELEASE_ACTION
from apps.scheduling.reconcile import BIND_TIMEOUT_ACTION
from apps.scheduling.states import UNBOOKED, request_move
from tests.scheduling.helpers import run_pass
from tests.security.test_metrics import TOKEN, _scrape

pytestmark = pytest.mark.django_db

#: Every label the scheduling figures may carry: none takes a free-form value.
BOUNDED = {"cluster", "queue", "chip_type", "reason", "resource", "state"}


@pytest.fixture(autouse=True)
def _metrics_on(settings):
    settings.METRICS_TOKEN = TOKEN


def _age(request: Request, seconds: float) -> None:
    Request.objects.filter(pk=request.pk).update(
        created_at=timezone.now() - timedelta(seconds=seconds)
    )


def test_pending_requests_by_reason_class(world, operator, fake_ops):
    # given one request with no chip of its type and one whose namespace is gone
    world.queue("default", namespaces=("ci", "gone"))
    fake_ops.namespace_names = {"ci", "gone"}
    no_chip = world.request(operator)
    held = world.request(operator, namespace="gone")
    fake_ops.namespace_names = {"ci"}
    # when no pass has looked at them yet
    _age(no_chip, 900)
    samples = _scrape()
    unclassified = (
        ("chip_type", "Ascend310P"),
        ("cluster", "guide"),
        ("queue", "default"),
        ("reason", "unclassified"),
    )
    # then they are counted as unclassified
    assert samples["vnpu_requests_pending"][unclassified] == 2
    assert samples["vnpu_request_pending_age_seconds"][unclassified] >= 900
    # and after a pass each has its class, the oldest age per class
    run_pass(world.cluster)
    _age(no_chip, 900)
    samples = _scrape()
    by_reason = {
        dict(k)["reason"]: v for k, v in samples["vnpu_requests_pending"].items()
    }
    assert by_reason == {WaitClass.NO_ELIGIBLE_CHIP: 1, WaitClass.CLUSTER_SETUP: 1}
    ages = {
        dict(k)["reason"]: v
        for k, v in samples["vnpu_request_pending_age_seconds"].items()
    }
    assert ages[WaitClass.NO_ELIGIBLE_CHIP] >= 900
    assert ages[WaitClass.CLUSTER_SETUP] < 60
    held.refresh_from_db()
    assert held.wait_class == WaitClass.CLUSTER_SETUP


def test_a_request_sent_back_to_pending_forgets_why_it_waited(world, operator):
    # given a request a pass classed as waiting for an admin, then booked
    request = world.request(operator)
    Request.objects.filter(pk=request.pk).update(
        wait_class=WaitClass.AWAITING_APPROVAL, state=RequestState.RESERVED
    )
    # when it goes back to Pending (a bind timeout, a retry, a failed preemption)
    assert request_move(
        request.pk,
        from_states=[RequestState.RESERVED],
        to=RequestState.PENDING,
        **UNBOOKED,
    )
    # then it is unclassified until the next pass looks at it
    request.refresh_from_db()
    assert request.wait_class == ""
    reasons = {dict(k)["reason"] for k in _scrape()["vnpu_requests_pending"]}
    assert reasons == {"unclassified"}


def test_proposals_waiting_for_an_admin(world, operator):
    # given two pending proposals of the default queue, one 20 minutes old, and
    # one already decided
    request = world.request(operator)
    rows = [
        PreemptionProposal.objects.create(
            cluster=world.cluster,
            request=request,
            chip_uuid="n1-Ascend310P-0",
            node="n1",
            memory=6144,
            max_victim_priority=0,
            state=state,
        )
        for state in (ProposalState.PENDING, ProposalState.PENDING, ProposalState.DONE)
    ]
    PreemptionProposal.objects.filter(pk=rows[0].pk).update(
        created_at=timezone.now() - timedelta(minutes=20)
    )
    # when Prometheus scrapes
    samples = _scrape()
    key = (("cluster", "guide"), ("queue", "default"))
    # then the pending ones count, and the oldest one's wait is reported
    assert samples["vnpu_preemption_proposals_pending"][key] == 2
    age = samples["vnpu_preemption_proposal_oldest_pending_age_seconds"][key]
    assert 1200 <= age < 1300


def test_queue_use_against_its_quota(world, operator):
    # given a quota of 10 GB and 2 slots of Ascend310P, one slice held by a
    # running request, and an unlimited chip type that reports nothing
    queue = world.queue("default", namespaces=("ci",))
    QueueQuota.objects.create(
        queue=queue, common_word="Ascend310P", memory_limit=10240, slots_limit=2
    )
    QueueQuota.objects.create(queue=queue, common_word="Ascend910B4")
    (chip,) = world.chips("Ascend310P", 1)
    request = world.request(operator)
    world.slice(chip, "held-pod", "vir02", namespace="ci")
    Request.objects.filter(pk=request.pk).update(
        state="running", pod_name="held-pod", chip=chip
    )
    # when Prometheus scrapes
    samples = _scrape()

    def key(resource: str) -> tuple:
        return (
            ("chip_type", "Ascend310P"),
            ("cluster", "guide"),
            ("queue", "default"),
            ("resource", resource),
        )

    # then limit, use and their ratio are reported per resource
    assert samples["vnpu_queue_quota_limit"][key("memory")] == 10240
    assert samples["vnpu_queue_quota_used"][key("memory")] == 6144
    assert samples["vnpu_queue_quota_used_ratio"][key("memory")] == 0.6
    assert samples["vnpu_queue_quota_used_ratio"][key("slots")] == 0.5
    assert all(
        dict(k)["chip_type"] == "Ascend310P" for k in samples["vnpu_queue_quota_limit"]
    )


def test_bind_timeouts_and_lock_releases_count_from_the_audit_log(world, operator):
    from apps.inventory.models import Cluster

    # given a second cluster without any, and the guide with two bind
    # timeouts and one released node lock
    Cluster.objects.create(name="quiet")
    for action in (BIND_TIMEOUT_ACTION, BIND_TIMEOUT_ACTION, LOCK_RELEASE_ACTION):
        audit_record(
            actor=None, actor_name="reconcile", action=action, cluster=world.cluster
        )
    # when Prometheus scrapes
    samples = _scrape()
    guide, quiet = (("cluster", "guide"),), (("cluster", "quiet"),)
    # then both are counters per cluster, 0 where nothing happened yet
    assert samples["vnpu_bind_timeouts_total"] == {guide: 2, quiet: 0}
    assert samples["vnpu_node_lock_releases_total"] == {guide: 1, quiet: 0}


def test_every_label_is_bounded(world, operator):
    world.request(operator)
    samples = _scrape()
    names = [
        "vnpu_requests_pending",
        "vnpu_request_pending_age_seconds",
        "vnpu_preemption_proposals_pending",
        "vnpu_queue_quota_used_ratio",
        "vnpu_bind_timeouts_total",
    ]
    for name in names:
        for key in samples.get(name, {}):
            assert {label for label, _ in key} <= BOUNDED, (name, key)
