"""Preemption proposals: proposed once, approved (evict, then admit) or rejected."""

from __future__ import annotations

import pytest
from django.utils import translation

from apps.audit.models import AuditEvent
from apps.common.exceptions import Conflict, ValidationFailed
from apps.inventory.models import Slice
from apps.scheduling.choices import ProposalState, RequestState
from apps.scheduling.decisions import proposal_approve, proposal_reject
from apps.scheduling.eviction import victims_evict
from apps.scheduling.kube import KubeError
from apps.scheduling.models import PreemptionProposal, Reservation
from apps.scheduling.progress import progress_shown
from tests.scheduling.helpers import run_pass

pytestmark = pytest.mark.django_db


def _in_chinese(proposal: PreemptionProposal) -> str:
    """The proposal's progress as the API shows it to a Chinese reader."""
    with translation.override("zh-hans"):
        return progress_shown(proposal)


@pytest.fixture
def full(world, fake_ops):
    """One 310P chip full of low-priority pods: two vir04 would not fit, so
    vir04 + vir02 + vir01 (21504 MB of 21527). The vir04 runs longest."""
    (chip,) = world.chips("Ascend310P", 1)
    world.slice(chip, "big", "vir04", priority=100, age_seconds=600)
    world.slice(chip, "mid", "vir02", priority=1000, priority_class="batch-medium")
    world.slice(chip, "small", "vir01", priority=100, age_seconds=30)
    for name in ("big", "mid", "small"):
        fake_ops.add_pod("default", name)
    return chip


def _urgent(world, operator):
    return world.request(
        operator, template="vir04", memory=None, priority="inference-high"
    )


def _approved(world, operator, admin_user):
    """An urgent request whose proposal an admin has just approved."""
    request = _urgent(world, operator)
    run_pass(world.cluster)
    proposal = proposal_approve(
        proposal=PreemptionProposal.objects.get(), actor=admin_user, reason="go"
    )
    return request, proposal


def test_a_high_priority_request_on_a_full_chip_gets_one_stable_proposal(
    world, operator, full, fake_ops
):
    request = _urgent(world, operator)

    run_pass(world.cluster)
    run_pass(world.cluster)  # a second pass finds the same plan: no new proposal

    (proposal,) = PreemptionProposal.objects.all()
    assert proposal.state == ProposalState.PENDING
    assert proposal.chip_id == full.pk
    # freeing 12288 MB: evicting "big" alone does it (lowest priority, one victim)
    assert [(v["namespace"], v["pod"]) for v in proposal.victims] == [
        ("default", "big")
    ]
    assert proposal.victims[0]["priority"] == 100
    assert proposal.victims[0]["lost_seconds"] >= 599
    assert proposal.max_victim_priority == 100
    request.refresh_from_db()
    assert request.state == RequestState.PENDING
    assert f"proposal {proposal.pk}" in request.reason
    assert "default/big" in request.reason
    assert fake_ops.events == []  # nothing happens without a decision


def test_approval_evicts_with_a_reason_then_admits_on_the_freed_chip(
    world, operator, admin_user, full, fake_ops
):
    request = _urgent(world, operator)
    run_pass(world.cluster)
    proposal = PreemptionProposal.objects.get()

    # when an admin approves
    proposal = proposal_approve(proposal=proposal, actor=admin_user, reason="release")

    # then the room is held for the request at once
    assert proposal.state == ProposalState.APPROVED
    request.refresh_from_db()
    assert request.state == RequestState.RESERVED
    assert Reservation.objects.get(request=request).proposal_id == proposal.pk
    assert AuditEvent.objects.filter(action="preemption.approve").count() == 1

    # when the eviction runs: annotate, record an Event, then evict
    report = victims_evict(proposal.pk)
    assert report.evicted == ["default/big"]
    steps = [c[0] for c in fake_ops.calls if c[2] == "big"]
    assert steps == ["patch_pod_annotations", "create_event", "evict_pod"]
    (event,) = fake_ops.events
    assert event["metadata"]["namespace"] == "default"
    assert event["involvedObject"] == {
        "apiVersion": "v1",
        "kind": "Pod",
        "namespace": "default",
        "name": "big",
    }
    assert f"request {request.pk}" in event["message"]
    assert "approved by ada" in event["message"]
    assert ("default", "big") not in fake_ops.pods

    # the node was held for the request before anything was evicted
    hold = "vnpu-portal/held"
    assert fake_ops.calls.index(("node_taint", "n1", hold)) < fake_ops.calls.index(
        ("evict_pod", "default", "big")
    )
    assert fake_ops.taints["n1"] == [
        {"key": hold, "value": "true", "effect": "NoSchedule"}
    ]
    proposal.refresh_from_db()
    assert proposal.held_node == "n1"
    assert "node n1 is held" in proposal.progress
    assert "节点 n1 为该申请保留" in _in_chinese(proposal)

    # while the victim terminates (sync still shows its slice) no pod is made:
    # Volcano would count its room as free and bind into what it still holds
    report = run_pass(world.cluster)
    request.refresh_from_db()
    assert report.admitted == []
    assert request.state == RequestState.RESERVED
    assert ("ci", request.pod_name) not in fake_ops.pods

    # once it is gone, the proposal is done and the pod is created in the same
    # pass, tolerating the hold (and only that hold)
    Slice.objects.filter(pod_name="big").delete()
    report = run_pass(world.cluster)
    proposal.refresh_from_db()
    request.refresh_from_db()
    assert proposal.state == ProposalState.DONE
    assert _in_chinese(proposal) == "所有被抢占 Pod 均已退出；正在准入该申请"
    assert report.admitted == [request.pk]
    assert request.state == RequestState.ADMITTED
    assert "node n1" in request.reason
    assert "held for it" in request.reason
    pod = fake_ops.pods[("ci", request.pod_name)]
    assert pod["spec"]["tolerations"] == [
        {"key": hold, "operator": "Equal", "value": "true", "effect": "NoSchedule"}
    ]
    assert fake_ops.taints["n1"]  # still held until the pod is bound

    # bound (sync shows its slice): running, and the hold is lifted
    world.slice(full, request.pod_name, "vir04", namespace="ci", priority=100000)
    run_pass(world.cluster)
    proposal.refresh_from_db()
    request.refresh_from_db()
    assert request.state == RequestState.RUNNING
    assert fake_ops.taints["n1"] == []
    assert proposal.held_node == ""
    assert "runs on the freed room; node n1 released" in proposal.progress
    assert _in_chinese(proposal) == (
        f"申请 {request.pk} 已在腾出的资源上运行；节点 n1 已释放"
    )


def test_a_victim_still_terminating_on_the_api_server_keeps_the_pod_back(
    world, operator, admin_user, full, fake_ops
):
    """Sync's mirror may drop the victim's slice before the pod is gone."""
    request, proposal = _approved(world, operator, admin_user)
    victims_evict(proposal.pk)
    # evicted, but the API server still has it terminating on the node
    big = fake_ops.add_pod("default", "big")
    big["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    Slice.objects.filter(pod_name="big").delete()

    run_pass(world.cluster)
    request.refresh_from_db()
    proposal.refresh_from_db()
    assert proposal.state == ProposalState.EVICTING
    assert request.state == RequestState.RESERVED

    del fake_ops.pods[("default", "big")]
    run_pass(world.cluster)
    request.refresh_from_db()
    assert request.state == RequestState.ADMITTED


def test_a_cancelled_request_gives_its_held_node_back(
    world, operator, admin_user, full, fake_ops
):
    from apps.scheduling.services.requests import request_cancel

    request, proposal = _approved(world, operator, admin_user)
    fake_ops.blocked.add("big")  # a budget holds the eviction back
    victims_evict(proposal.pk)
    assert fake_ops.taints["n1"]

    request_cancel(request=request, actor=operator)
    run_pass(world.cluster)
    proposal.refresh_from_db()
    assert proposal.state == ProposalState.SUPERSEDED
    assert fake_ops.taints["n1"] == []
    assert proposal.held_node == ""


def test_no_victim_is_evicted_until_the_node_is_held(
    world, operator, admin_user, full, fake_ops
):
    request, proposal = _approved(world, operator, admin_user)
    fake_ops.errors["node_taint"] = KubeError(503, "unavailable", transient=True)
    report = victims_evict(proposal.pk)
    assert report.evicted == []
    assert not [c for c in fake_ops.calls if c[0] == "evict_pod"]
    proposal.refresh_from_db()
    assert proposal.state == ProposalState.EVICTING
    assert "cannot hold node n1 yet" in proposal.progress
    assert proposal.next_attempt_at is not None

    # a node that is gone fails the proposal and gives the request's room back
    del fake_ops.errors["node_taint"]
    fake_ops.gone_nodes.add("n1")
    PreemptionProposal.objects.filter(pk=proposal.pk).update(next_attempt_at=None)
    victims_evict(proposal.pk)
    proposal.refresh_from_db()
    request.refresh_from_db()
    assert proposal.state == ProposalState.FAILED
    assert "node n1 is gone" in proposal.progress
    assert request.state == RequestState.PENDING


def test_the_victim_is_annotated_before_it_is_evicted(
    world, operator, admin_user, full, fake_ops
):
    fake_ops.blocked.add("big")
    _, proposal = _approved(world, operator, admin_user)
    victims_evict(proposal.pk)
    annotations = fake_ops.pods[("default", "big")]["metadata"]["annotations"]
    assert annotations["vnpu-portal/preempted-by"] == str(proposal.request_id)
    assert annotations["vnpu-portal/preemption-proposal"] == str(proposal.pk)


def test_a_pdb_refusal_keeps_the_proposal_evicting_and_retries_later(
    world, operator, admin_user, full, fake_ops, settings
):
    settings.PREEMPTION_EVICTION_RETRY_SECONDS = 0
    request, proposal = _approved(world, operator, admin_user)
    fake_ops.blocked.add("big")

    report = victims_evict(proposal.pk)

    # then nothing is forced: the victim still runs, the proposal waits
    assert report.blocked == ["default/big"]
    proposal.refresh_from_db()
    assert proposal.state == ProposalState.EVICTING
    assert "disruption budget" in proposal.progress
    assert proposal.next_attempt_at is not None
    assert ("default", "big") in fake_ops.pods
    request.refresh_from_db()
    assert request.state == RequestState.RESERVED  # its room is still held

    # when the budget allows it, the retry evicts (annotation and Event not repeated)
    fake_ops.blocked.clear()
    report = victims_evict(proposal.pk)
    assert report.evicted == ["default/big"]
    assert len(fake_ops.events) == 1
    assert [c[0] for c in fake_ops.calls if c[2] == "big"].count(
        "patch_pod_annotations"
    ) == 1


def test_a_permanent_eviction_error_fails_the_proposal_and_frees_the_room(
    world, operator, admin_user, full, fake_ops
):
    request, proposal = _approved(world, operator, admin_user)
    fake_ops.errors["evict_pod"] = KubeError(403, "forbidden", transient=False)
    victims_evict(proposal.pk)
    proposal.refresh_from_db()
    request.refresh_from_db()
    assert proposal.state == ProposalState.FAILED
    assert "forbidden" in proposal.progress
    assert request.state == RequestState.PENDING
    assert not Reservation.objects.exists()


def test_rejection_keeps_everyone_running_and_stops_asking(
    world, operator, admin_user, full, fake_ops
):
    request = _urgent(world, operator)
    run_pass(world.cluster)
    proposal = proposal_reject(
        proposal=PreemptionProposal.objects.get(), actor=admin_user, reason="not now"
    )
    assert proposal.state == ProposalState.REJECTED
    assert proposal.decided_by == admin_user

    run_pass(world.cluster)

    assert PreemptionProposal.objects.count() == 1  # no new proposal
    request.refresh_from_db()
    assert request.state == RequestState.PENDING
    assert request.allow_preemption is False
    assert all(("default", n) in fake_ops.pods for n in ("big", "mid", "small"))
    assert not [c for c in fake_ops.calls if c[0] == "evict_pod"]


def test_decisions_need_a_reason_and_a_pending_proposal(
    world, operator, admin_user, full, fake_ops
):
    _urgent(world, operator)
    run_pass(world.cluster)
    proposal = PreemptionProposal.objects.get()
    with pytest.raises(ValidationFailed) as err:
        proposal_approve(proposal=proposal, actor=admin_user, reason="  ")
    assert "reason" in err.value.detail
    proposal_reject(proposal=proposal, actor=admin_user, reason="no")
    with pytest.raises(Conflict):
        proposal_approve(proposal=proposal, actor=admin_user, reason="yes")


def test_a_proposal_is_superseded_when_room_frees_up_on_its_own(
    world, operator, full, fake_ops
):
    request = _urgent(world, operator)
    run_pass(world.cluster)
    # the long job ends by itself before anyone decides
    Slice.objects.filter(pod_name="big").delete()
    run_pass(world.cluster)
    proposal = PreemptionProposal.objects.get()
    request.refresh_from_db()
    assert proposal.state == ProposalState.SUPERSEDED
    assert request.state == RequestState.ADMITTED


def test_a_cancelled_request_supersedes_its_proposal(world, operator, full, fake_ops):
    from apps.scheduling.services.requests import request_cancel

    request = _urgent(world, operator)
    run_pass(world.cluster)
    request_cancel(request=request, actor=operator)
    assert PreemptionProposal.objects.get().state == ProposalState.SUPERSEDED


def test_the_auto_approval_policy_by_priority_gap(
    world, operator, full, fake_ops, settings
):
    settings.PREEMPTION_AUTO_APPROVE_PRIORITY_GAP = 50000
    request = _urgent(world, operator)  # 100000 vs a victim of 100: gap 99900
    run_pass(world.cluster)
    proposal = PreemptionProposal.objects.get()
    request.refresh_from_db()
    assert proposal.auto_approved is True
    assert proposal.state == ProposalState.APPROVED
    assert "PREEMPTION_AUTO_APPROVE_PRIORITY_GAP" in proposal.reason
    assert request.state == RequestState.RESERVED


def test_the_gap_policy_leaves_small_gaps_to_an_admin(
    world, operator, full, fake_ops, settings
):
    settings.PREEMPTION_AUTO_APPROVE_PRIORITY_GAP = 200000
    _urgent(world, operator)
    run_pass(world.cluster)
    assert PreemptionProposal.objects.get().state == ProposalState.PENDING


def test_a_preempted_portal_request_fails_naming_who_preempted_it(
    world, operator, admin_user, fake_ops
):
    # given a low-priority portal request running on the only chip, full otherwise
    (chip,) = world.chips("Ascend310P", 1)
    low = world.request(operator, template="vir04", memory=None, priority="batch-low")
    run_pass(world.cluster)
    low.refresh_from_db()
    world.slice(chip, low.pod_name, "vir04", namespace="ci", priority=100)
    world.slice(chip, "mid", "vir02", priority=1000)
    world.slice(chip, "small", "vir01", priority=1000)
    run_pass(world.cluster)
    low.refresh_from_db()
    assert low.state == RequestState.RUNNING
    urgent = world.request(
        operator, template="vir04", memory=None, priority="inference-high"
    )
    run_pass(world.cluster)
    proposal = PreemptionProposal.objects.get(request=urgent)
    assert proposal.victims[0]["request"] == low.pk
    assert proposal.victims[0]["queue"] == "default"
    proposal_approve(proposal=proposal, actor=admin_user, reason="urgent")
    victims_evict(proposal.pk)
    Slice.objects.filter(pod_name=low.pod_name).delete()
    run_pass(world.cluster)
    low.refresh_from_db()
    assert low.state == RequestState.FAILED
    assert f"preempted by request {urgent.pk}" in low.reason


def test_a_pending_proposal_stays_while_the_cluster_changes_around_it(
    world, operator, full, fake_ops
):
    """A second full chip whose victims would now be cheaper does not replace
    the proposal an admin may be reading: it still works, so it stays."""
    _urgent(world, operator)
    run_pass(world.cluster)
    (first,) = PreemptionProposal.objects.all()

    # another chip fills with cheaper, younger victims: a fresh plan would pick it
    (other,) = world.chips("Ascend310P", 1)
    world.slice(other, "young", "vir04", priority=0, age_seconds=1)
    world.slice(other, "young-2", "vir04", priority=0, age_seconds=1)
    world.slice(other, "young-3", "vir04", priority=0, age_seconds=1)
    world.slice(other, "young-4", "vir04", priority=0, age_seconds=1)
    world.slice(other, "young-5", "vir01", priority=0, age_seconds=1)
    for _ in range(3):
        run_pass(world.cluster)

    (proposal,) = PreemptionProposal.objects.all()
    assert proposal.pk == first.pk
    assert proposal.state == ProposalState.PENDING
    assert AuditEvent.objects.filter(action="preemption.propose").count() == 1


def test_a_proposal_that_no_longer_works_is_replaced_with_the_reason(
    world, operator, full, fake_ops
):
    _urgent(world, operator)
    run_pass(world.cluster)
    first = PreemptionProposal.objects.get()

    # its victim ends on its own, and a new pod takes the room it freed
    Slice.objects.filter(pod_name="big").delete()
    world.slice(full, "newcomer", "vir04", priority=50, age_seconds=5)
    run_pass(world.cluster)

    first.refresh_from_db()
    assert first.state == ProposalState.SUPERSEDED
    assert "default/big no longer runs on the chip" in first.reason
    (current,) = PreemptionProposal.objects.filter(state=ProposalState.PENDING)
    assert current.pk != first.pk
    assert f"replaced by proposal {current.pk}" in first.reason


def test_a_proposal_says_when_it_crosses_queues(world, operator, full, fake_ops):
    from apps.scheduling.api.serializers import PreemptionProposalSerializer

    request = _urgent(world, operator)
    own = request.queue.name
    # the victim's pod names another Volcano queue (sync records it)
    Slice.objects.filter(pod_name="big").update(volcano_queue="research")
    run_pass(world.cluster)
    proposal = PreemptionProposal.objects.get()
    assert PreemptionProposalSerializer(proposal).data["crosses_queues"] == ["research"]

    # in the request's own queue it does not
    proposal.delete()
    Slice.objects.filter(pod_name="big").update(volcano_queue=own)
    run_pass(world.cluster)
    proposal = PreemptionProposal.objects.get()
    assert PreemptionProposalSerializer(proposal).data["crosses_queues"] == []


def test_two_approved_preemptions_on_one_node_share_one_hold(
    world, operator, admin_user, fake_ops
):
    """Each request's pod tolerates the node's one hold; it is lifted when the
    last held request is bound. (One taint per request deadlocked them: each
    pod tolerated only its own.)"""
    chips = world.chips("Ascend310P", 2)
    for i, chip in enumerate(chips):
        world.slice(chip, f"big{i}", "vir04", priority=100, age_seconds=600)
        world.slice(chip, f"mid{i}", "vir02", priority=100, age_seconds=600)
        world.slice(chip, f"small{i}", "vir01", priority=100, age_seconds=600)
        for name in (f"big{i}", f"mid{i}", f"small{i}"):
            fake_ops.add_pod("default", name)
    first, second = _urgent(world, operator), _urgent(world, operator)
    run_pass(world.cluster)
    proposals = list(PreemptionProposal.objects.order_by("request_id"))
    assert [p.request_id for p in proposals] == [first.pk, second.pk]
    assert {p.chip_id for p in proposals} == {c.pk for c in chips}
    for proposal in proposals:
        proposal_approve(proposal=proposal, actor=admin_user, reason="go")
        victims_evict(proposal.pk)
    hold = {"key": "vnpu-portal/held", "value": "true", "effect": "NoSchedule"}
    assert fake_ops.taints["n1"] == [hold]  # one taint for both

    Slice.objects.filter(pod_name__regex=r"^(big|mid|small)").delete()
    report = run_pass(world.cluster)
    assert sorted(report.admitted) == [first.pk, second.pk]
    for request in (first, second):
        request.refresh_from_db()
        pod = fake_ops.pods[("ci", request.pod_name)]
        assert pod["spec"]["tolerations"] == [{**hold, "operator": "Equal"}], (
            "each pod tolerates the node's hold, whoever put it there"
        )

    # the first is bound: the node stays held for the second
    chip_of = {p.request_id: p.chip for p in proposals}
    world.slice(chip_of[first.pk], first.pod_name, "vir04", namespace="ci")
    run_pass(world.cluster)
    assert fake_ops.taints["n1"] == [hold]
    done = PreemptionProposal.objects.get(request=first)
    assert done.held_node == ""
    assert "node n1 still held for other requests" in done.progress
    assert PreemptionProposal.objects.get(request=second).held_node == "n1"

    # the second is bound too: the hold is lifted, and the release is audited
    world.slice(chip_of[second.pk], second.pod_name, "vir04", namespace="ci")
    run_pass(world.cluster)
    assert fake_ops.taints["n1"] == []
    assert PreemptionProposal.objects.get(request=second).held_node == ""
    (released,) = AuditEvent.objects.filter(action="node.hold_release")
    assert released.after["node"] == "n1"


def test_a_hold_recorded_while_another_is_lifted_is_put_back(
    world, operator, admin_user, fake_ops
):
    """A release checks the holders again after lifting the taint: a
    preemption that recorded its hold meanwhile (its taint call found the
    taint still in place) keeps the node held."""
    from apps.scheduling.holds import hold_node
    from apps.scheduling.services.requests import request_cancel

    chips = world.chips("Ascend310P", 2)
    for i, chip in enumerate(chips):
        world.slice(chip, f"big{i}", "vir04", priority=100, age_seconds=600)
        world.slice(chip, f"mid{i}", "vir02", priority=100, age_seconds=600)
        world.slice(chip, f"small{i}", "vir01", priority=100, age_seconds=600)
        fake_ops.add_pod("default", f"big{i}")
    leaving, staying = _urgent(world, operator), _urgent(world, operator)
    run_pass(world.cluster)
    first = proposal_approve(
        proposal=PreemptionProposal.objects.get(request=leaving),
        actor=admin_user,
        reason="go",
    )
    victims_evict(first.pk)
    second = PreemptionProposal.objects.get(request=staying)
    request_cancel(request=leaving, actor=operator)

    untaint = fake_ops.node_untaint

    def untaint_while_another_holds(node, *keys):
        # the other approval runs between the release's check and its PATCH
        proposal_approve(proposal=second, actor=admin_user, reason="go")
        hold_node(fake_ops, PreemptionProposal.objects.get(pk=second.pk))
        fake_ops.node_untaint = untaint
        return untaint(node, *keys)

    fake_ops.node_untaint = untaint_while_another_holds
    run_pass(world.cluster)
    assert fake_ops.taints["n1"] == [
        {"key": "vnpu-portal/held", "value": "true", "effect": "NoSchedule"}
    ]
    assert PreemptionProposal.objects.get(pk=first.pk).held_node == ""
    assert PreemptionProposal.objects.get(pk=second.pk).held_node == "n1"


def test_a_standing_proposal_keeps_its_victims_from_other_requests(
    world, operator, fake_ops, full
):
    """After the first proposal a cheaper victim appears elsewhere: the first
    request keeps its proposal (an admin may be reading it) and its victim,
    and the second request's proposal takes the cheaper one. Before, the
    first request's fresh plan took the cheaper victim while its old row was
    kept, and the second was proposed the first one's victim: two pending
    proposals named one pod."""
    first = _urgent(world, operator)
    run_pass(world.cluster)
    (kept,) = PreemptionProposal.objects.all()
    assert [v["pod"] for v in kept.victims] == ["big"]

    (other,) = world.chips("Ascend310P", 1, node="n2")
    world.slice(other, "cheap", "vir04", priority=50, age_seconds=10)
    world.slice(other, "other-mid", "vir02", priority=1000, age_seconds=10)
    world.slice(other, "other-small", "vir01", priority=1000, age_seconds=10)
    fake_ops.add_pod("default", "cheap")
    second = _urgent(world, operator)
    run_pass(world.cluster)
    run_pass(world.cluster)  # and it stays so

    pending = {
        p.request_id: p
        for p in PreemptionProposal.objects.filter(state=ProposalState.PENDING)
    }
    assert pending[first.pk].pk == kept.pk
    assert [v["pod"] for v in pending[first.pk].victims] == ["big"]
    assert [v["pod"] for v in pending[second.pk].victims] == ["cheap"]
    assert PreemptionProposal.objects.count() == 2  # no churn
    assert AuditEvent.objects.filter(action="preemption.propose").count() == 2
