"""allocate() where the scheduler picks the chip within the node (Volcano).

A placement is guaranteed only when every chip of its node that Volcano could
pick for the shape (by its count: type, slot, memory, AICore; no health, no
AICPU, no exclusions) keeps the portal's promises.
"""

from __future__ import annotations

from apps.scheduling.allocator import Policy, Strategy, WaitReason, allocate
from tests.scheduling.allocator.builders import (
    BINPACK,
    RULES,
    chip,
    placement_of,
    req,
    slice_,
    waiting_of,
)

VOLCANO = Policy(Strategy.BINPACK, scheduler_picks_chip=True)
VOLCANO_STRICT = Policy(
    Strategy.BINPACK, scheduler_picks_chip=True, place_unguaranteed=False
)


def _sick_node() -> list:
    # n1: a is partly used (binpack's first choice), b is unhealthy and empty.
    return [
        chip("a", node="n1", slices=["vir02"]),
        chip("b", node="n1", healthy=False),
    ]


def test_a_node_with_a_sick_chip_volcano_may_pick_is_avoided() -> None:
    chips = [*_sick_node(), chip("c", node="n2")]
    placed = placement_of(allocate([req("r", 6144)], chips, RULES, policy=VOLCANO), "r")
    assert (placed.chip_id, placed.node, placed.caveat) == ("c", "n2", None)


def test_under_a_scheduler_that_honours_the_pin_nothing_changes() -> None:
    chips = [*_sick_node(), chip("c", node="n2")]
    placed = placement_of(allocate([req("r", 6144)], chips, RULES, policy=BINPACK), "r")
    assert (placed.chip_id, placed.caveat) == ("a", None)


def test_only_unguaranteed_room_is_placed_with_the_caveat_said_plainly() -> None:
    placed = placement_of(
        allocate([req("r", 6144)], _sick_node(), RULES, policy=VOLCANO), "r"
    )
    assert placed.chip_id == "a"
    assert placed.caveat == (
        "not guaranteed: Volcano picks the chip on node n1 and may pick "
        "chip b, which is unhealthy"
    )


def test_strict_policy_waits_instead_and_names_the_chip() -> None:
    result = allocate([req("r", 6144)], _sick_node(), RULES, policy=VOLCANO_STRICT)
    waiting = waiting_of(result, "r")
    assert waiting.code == WaitReason.UNGUARANTEED
    assert "may pick chip b, which is unhealthy" in waiting.reason


def test_a_sick_chip_volcano_counts_as_full_breaks_no_promise() -> None:
    chips = [
        chip("a", node="n1", slices=["vir02"]),
        chip("b", node="n1", healthy=False, slots_used=7, memory_used=21527),
    ]
    result = allocate([req("r", 6144)], chips, RULES, policy=VOLCANO_STRICT)
    assert placement_of(result, "r").caveat is None


def test_a_sick_chip_too_small_for_this_shape_breaks_no_promise() -> None:
    # 4000 MB free on b: Volcano cannot put vir04 (12288 MB) there.
    chips = [
        chip("a", node="n1"),
        chip("b", node="n1", healthy=False, memory_used=17527, slots_used=1),
    ]
    big = allocate([req("r", 12288)], chips, RULES, policy=VOLCANO_STRICT)
    assert placement_of(big, "r").caveat is None
    small = allocate([req("r", 3072)], chips, RULES, policy=VOLCANO_STRICT)
    assert waiting_of(small, "r").code == WaitReason.UNGUARANTEED


def test_volcano_does_not_count_aicpu_so_a_chip_short_of_it_is_a_hazard() -> None:
    # x has memory, a slot and AICore for vir05_1c_8g but no AICPU left.
    chips = [
        chip("x", "Ascend910B4", node="n1", ai_cpu_used=7),
        chip("y", "Ascend910B4", node="n1"),
    ]
    r = req("r", 8192, common_word="Ascend910B4")
    placed = placement_of(allocate([r], chips, RULES, policy=VOLCANO), "r")
    assert placed.chip_id == "y"
    assert placed.caveat is not None
    assert "chip x, which has 0 AICPU free, not 1" in placed.caveat


def test_cordoned_and_excluded_chips_of_the_node_are_hazards_too() -> None:
    chips = [
        chip("a", node="n1"),
        chip("b", node="n1", cordoned=True),
        chip("c", node="n1"),
    ]
    placed = placement_of(
        allocate([req("r", 6144, excluded=["c"])], chips, RULES, policy=VOLCANO), "r"
    )
    assert placed.caveat is not None
    assert "chip b, which is cordoned" in placed.caveat
    assert "chip c, which the request excludes" in placed.caveat


def test_earlier_placements_in_the_pass_fill_the_node_before_the_caveat() -> None:
    # The guaranteed node n2 takes one vir04 slice, then only n1 has room.
    chips = [
        *_sick_node(),
        chip("c", node="n2", slices=["vir04"], slots_used=6),
    ]
    result = allocate(
        [req("r1", 6144, at=1), req("r2", 6144, at=2)], chips, RULES, policy=VOLCANO
    )
    assert placement_of(result, "r1").node == "n2"
    assert placement_of(result, "r1").caveat is None
    assert placement_of(result, "r2").node == "n1"
    assert "chip b" in (placement_of(result, "r2").caveat or "")


def test_a_proposal_says_what_is_not_guaranteed_once_its_victims_are_gone() -> None:
    # n1: chip a full of priority-0 slices, chip b unhealthy and empty: after
    # the eviction Volcano may bind the request's pod to b
    full = ("vir04", "vir02", "vir01")
    chips = [chip("a", node="n1", slices=full), chip("b", node="n1", healthy=False)]
    running = [slice_(f"a-{name}", "a", name) for name in full]
    request = [req("r", 3072, priority=9)]

    volcano = allocate(request, chips, RULES, policy=VOLCANO, running=running)
    (proposal,) = volcano.proposals
    assert (proposal.chip_id, proposal.victims) == ("a", ("a-vir01",))
    assert proposal.caveat == (
        "not guaranteed: Volcano picks the chip on node n1 and may pick "
        "chip b, which is unhealthy"
    )
    # HAMi's scheduler binds the pod to the freed chip: nothing to say
    hami = allocate(request, chips, RULES, policy=BINPACK, running=running)
    (proposal,) = hami.proposals
    assert proposal.caveat is None


def test_a_proposal_on_a_node_whose_chips_all_keep_the_promises_has_no_caveat() -> None:
    full = ("vir04", "vir02", "vir01")
    chips = [chip("a", node="n1", slices=full), chip("b", node="n1", slices=full)]
    running = [slice_(f"{c}-{name}", c, name) for c in "ab" for name in full]
    result = allocate(
        [req("r", 3072, priority=9)], chips, RULES, policy=VOLCANO, running=running
    )
    (proposal,) = result.proposals
    assert proposal.caveat is None
