"""What is promised is what is enforced, through the scheduling pass.

Under Volcano the portal steers the node only; a placement is guaranteed only
where every chip Volcano could pick keeps the promises. Under HAMi's scheduler
the pin holds, so nothing changes.
"""

from __future__ import annotations

import pytest

from apps.inventory.choices import SchedulerSetting
from apps.scheduling.choices import RequestState
from apps.scheduling.models import PreemptionProposal, Reservation
from apps.scheduling.services.allocations import allocation_create
from tests.scheduling.helpers import run_pass

pytestmark = pytest.mark.django_db


def _sick_node(world):
    """npu-node-910b-01 with chips 0 (healthy) and 1 (unhealthy, empty)."""
    good, sick = world.chips("Ascend910B4", 2, node="npu-node-910b-01")
    sick.healthy = False
    sick.save()
    return good, sick


def _request(world, operator):
    return world.request(
        operator, chip_type="Ascend910B4", memory=8000, queue="default"
    )


def test_under_volcano_a_node_free_of_sick_chips_is_chosen(world, operator, fake_ops):
    _sick_node(world)
    world.chips("Ascend910B4", 1, node="npu-node-910b-02")
    request = _request(world, operator)
    run_pass(world.cluster)
    request.refresh_from_db()
    assert request.state == RequestState.ADMITTED
    assert request.node == "npu-node-910b-02"
    assert "not guaranteed" not in request.reason


def test_under_volcano_only_unguaranteed_room_is_placed_and_says_so(
    world, operator, fake_ops
):
    _good, sick = _sick_node(world)
    request = _request(world, operator)
    # booking first, then the pass admits: the reason says it at each step
    allocation_create(cluster_id=world.cluster.pk)
    request.refresh_from_db()
    assert request.state == RequestState.RESERVED
    caveat = (
        "not guaranteed: Volcano picks the chip on node npu-node-910b-01 and may "
        f"pick chip {sick.uuid} (index 1), which is unhealthy"
    )
    assert request.reason.endswith(caveat)
    assert Reservation.objects.get(request=request).caveat == caveat

    run_pass(world.cluster)
    request.refresh_from_db()
    assert request.state == RequestState.ADMITTED
    assert "Volcano picks the chip" in request.reason
    assert request.reason.endswith(caveat)


def test_under_volcano_strict_setting_waits_naming_the_chip(
    world, operator, fake_ops, settings
):
    settings.PLACE_UNGUARANTEED = False
    _good, sick = _sick_node(world)
    request = _request(world, operator)
    run_pass(world.cluster)
    request.refresh_from_db()
    assert request.state == RequestState.PENDING
    assert f"may pick chip {sick.uuid} (index 1), which is unhealthy" in (
        request.reason
    )
    assert "PLACE_UNGUARANTEED is off" in request.reason
    assert fake_ops.pods == {}


def test_under_hamis_scheduler_the_pin_holds_and_nothing_is_caveated(
    world, operator, fake_ops, settings
):
    settings.PLACE_UNGUARANTEED = False
    world.cluster.scheduler = SchedulerSetting.HAMI
    world.cluster.save()
    good, _sick = _sick_node(world)
    request = _request(world, operator)
    run_pass(world.cluster)
    request.refresh_from_db()
    assert request.state == RequestState.ADMITTED
    assert request.chip_uuid == good.uuid
    assert "not guaranteed" not in request.reason


def test_under_volcano_a_proposal_says_what_is_not_guaranteed(
    world, operator, admin_client_api, fake_ops
):
    # n1: chip a full (the vir04 is the cheapest victim), chip b unhealthy and
    # empty: once the vir04 is gone, Volcano may bind the request's pod to b
    full, sick = world.chips("Ascend310P", 2, node="n1")
    sick.healthy = False
    sick.save()
    world.slice(full, "big", "vir04", priority=100)
    world.slice(full, "mid", "vir02", priority=1000)
    world.slice(full, "small", "vir01", priority=1000)
    world.request(operator, template="vir04", memory=None, priority="inference-high")
    run_pass(world.cluster)

    proposal = PreemptionProposal.objects.get()
    assert proposal.chip_id == full.pk
    caveat = (
        "not guaranteed: Volcano picks the chip on node n1 and may pick "
        f"chip {sick.uuid} (index {sick.index}), which is unhealthy, instead of "
        f"chip {full.uuid} (index {full.index}) that its victims free"
    )
    assert proposal.caveat == caveat
    shown = admin_client_api.get(f"/api/preemptions/{proposal.pk}/").json()
    assert shown["caveat"] == caveat
