"""A node's room under Volcano, which picks any fitting chip (volcano_room).

``places_all`` is checked against a brute force that plays every order and
every chip choice; ``allocate_for_volcano`` sends a request elsewhere rather
than onto a node where Volcano could strand a pod, and says why one waits.
"""

from __future__ import annotations

from functools import cache

from hypothesis import given, settings
from hypothesis import strategies as st

from apps.scheduling.allocator import (
    ChipTypeRules,
    Policy,
    Strategy,
    TemplateShape,
    WaitReason,
    allocate,
    allocate_for_volcano,
    places_all,
)
from apps.scheduling.allocator.volcano_room import ChipRoom
from tests.scheduling.allocator.builders import (
    BINPACK,
    chip,
    placement_of,
    req,
    slice_,
    waiting_of,
)
from tests.scheduling.allocator.builders import P310 as P310_RULES

VIR01, VIR02, VIR04 = 3072, 6144, 12288
VOLCANO = Policy(Strategy.BINPACK, scheduler_picks_chip=True)
P310 = ChipRoom(slots=7, memory=21527)


def strands_one(chips: tuple[ChipRoom, ...], pods: tuple[int, ...]) -> bool:
    """Brute force: some order and chip choices leave a pod with no chip.

    A pod is its memory, all Volcano's fit compares besides a free slot."""

    @cache
    def bad(rooms: tuple[tuple[int, int], ...], left: tuple[int, ...]) -> bool:
        for i, memory in enumerate(left):
            fitting = [j for j, (s, m) in enumerate(rooms) if s >= 1 and m >= memory]
            if not fitting:
                return True
            rest = left[:i] + left[i + 1 :]
            for j in fitting:
                s, m = rooms[j]
                after = (*rooms[:j], (s - 1, m - memory), *rooms[j + 1 :])
                if bad(after, rest):
                    return True
        return False

    return bad(tuple((c.slots, c.memory) for c in chips), tuple(sorted(pods)))


def test_seven_vir01_a_chip_whatever_volcano_picks():
    assert places_all([P310] * 4, [VIR01] * 28)
    assert not places_all([P310] * 4, [VIR01] * 29)


def test_a_chip_packed_by_booking_is_not_safe_when_volcano_picks():
    # a vir04, a vir02 and a vir01 fill a chip exactly as booked; Volcano may
    # bind two vir02 to one chip and two vir04 then find one chip left
    assert not places_all([P310] * 2, [VIR04, VIR02, VIR01] * 2)
    assert strands_one((P310,) * 2, (VIR04, VIR02, VIR01) * 2)
    assert places_all([P310] * 2, [VIR04, VIR02, VIR01, VIR04])


def test_bound_pods_leave_their_room_only():
    used = ChipRoom(slots=1, memory=21527 - 6 * VIR01)  # six vir01 bound
    assert places_all([used, P310], [VIR01] * 8)
    assert not places_all([used, P310], [VIR02, VIR02, VIR02, VIR02])


rooms = st.builds(
    ChipRoom, slots=st.integers(0, 4), memory=st.sampled_from([0, 3, 5, 6, 8, 9])
)


@settings(max_examples=300, deadline=None)
@given(
    chips=st.lists(rooms, min_size=1, max_size=3),
    pods=st.lists(st.sampled_from([1, 2, 3, 4]), min_size=1, max_size=6),
)
def test_places_all_agrees_with_every_order_and_chip_choice(chips, pods):
    assert places_all(chips, pods) == (not strands_one(tuple(chips), tuple(pods)))


# An admin's 910B4 templates whose AICore is not proportional to their memory:
# two "x" fill a chip's 20 cores with half its memory.
B4_CORE_HEAVY = ChipTypeRules(
    common_word="Ascend910B4",
    memory_allocatable=32768,
    memory_capacity=32768,
    ai_core=20,
    ai_cpu=7,
    templates=(
        TemplateShape("x_10c_8g", 8192, 10, 1),
        TemplateShape("y_15c_16g", 16384, 15, 3),
    ),
)


def test_volcano_fills_a_node_past_the_chips_aicore():
    """volcano-sh/volcano v1.15.1, pkg/scheduler/api/devices/ascend/hami/
    device_info.go, ``ResourceReqs``: it calls ``ExtractResourceRequest`` with
    an empty core resource name, so ``Coresreq`` is 0 for every template pod
    and ``Usedcores`` never grows: the fit compares slots and memory only.

    Node a's chips are booked x+x (20 cores) and nothing; a "y" (15 cores)
    then fits only the second chip by booking. Volcano may put one x on each
    chip (10 cores left on both): counting AICore, the y would be stranded and
    the node unsafe. Volcano does not count it, and binds the y: the node is
    safe, and the request goes there instead of waiting for nothing."""
    chips = [
        chip(
            "a1",
            "Ascend910B4",
            node="a",
            memory_used=16384,
            slots_used=2,
            ai_core_used=20,
            ai_cpu_used=2,
        ),
        chip("a2", "Ascend910B4", node="a"),
    ]
    requests = [req("r0", 16384, common_word="Ascend910B4")]
    result = allocate_for_volcano(
        requests,
        chips,
        [B4_CORE_HEAVY],
        policy=VOLCANO,
        unbound={"a1": [8192, 8192]},
    )
    assert placement_of(result, "r0").chip_id == "a2"
    room = ChipRoom(slots=4, memory=32768)
    assert places_all([room, room], [8192, 8192, 16384])
    assert not strands_one((room, room), (8192, 8192, 16384))


def _packed_node_and_an_empty_one():
    """Node a's two chips booked as a vir04, a vir02 and a vir01 and as a vir04
    and a vir02 (a vir01 short of full); node b empty."""
    return [
        chip("a1", node="a", slices=["vir04", "vir02", "vir01"]),
        chip("a2", node="a", slices=["vir04", "vir02"]),
        chip("b1", node="b"),
        chip("b2", node="b"),
    ]


UNBOUND_ON_A = {"a1": [VIR04, VIR02, VIR01], "a2": [VIR04, VIR02]}


def test_a_request_goes_to_another_node_rather_than_strand_a_pod():
    chips = _packed_node_and_an_empty_one()
    requests = [req("r0", template="vir01")]
    # by booking, the vir01 completes node a (binpack); but Volcano may bind
    # the two vir02 to one chip, and a vir04 then finds no chip with room
    plain = allocate(requests, chips, [P310_RULES], policy=BINPACK)
    assert placement_of(plain, "r0").chip_id == "a2"
    safe = allocate_for_volcano(
        requests, chips, [P310_RULES], policy=VOLCANO, unbound=UNBOUND_ON_A
    )
    assert placement_of(safe, "r0").node == "b"
    # HAMi's scheduler honours the pin: the booking is where the pod lands
    pinned = allocate_for_volcano(
        requests, chips, [P310_RULES], policy=BINPACK, unbound=UNBOUND_ON_A
    )
    assert placement_of(pinned, "r0").chip_id == "a2"


def test_once_bound_the_pods_are_where_volcano_put_them():
    # the same usage, bound: the vir01 completes node a
    result = allocate_for_volcano(
        [req("r0", template="vir01")],
        _packed_node_and_an_empty_one(),
        [P310_RULES],
        policy=VOLCANO,
    )
    assert placement_of(result, "r0").chip_id == "a2"


def test_a_request_with_no_safe_node_waits_saying_for_what_and_proposes_nothing():
    # node b is full of lower-priority vir01: a proposal could free it, but
    # node a is only waiting for its pods to be bound
    chips = [
        *_packed_node_and_an_empty_one()[:2],
        chip("b1", node="b", slices=["vir01"] * 7),
    ]
    running = [slice_(f"low{i}", "b1", "vir01", priority=-5) for i in range(7)]
    result = allocate_for_volcano(
        [req("r0", template="vir01", priority=10)],
        chips,
        [P310_RULES],
        policy=VOLCANO,
        running=running,
        unbound=UNBOUND_ON_A,
    )
    assert not result.proposals
    waiting = waiting_of(result, "r0")
    assert waiting.code == WaitReason.NO_CAPACITY
    assert waiting.reason.startswith(
        "a has room, but the pods sent there are not all bound yet"
    )
