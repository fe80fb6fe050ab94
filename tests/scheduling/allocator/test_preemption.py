"""Preemption proposals, capacity being freed, and the exact victim search."""

from __future__ import annotations

import dataclasses

import pytest

from apps.scheduling.allocator import (
    AllocationResult,
    Chip,
    Policy,
    PreemptionProposal,
    QueueQuota,
    RunningSlice,
    StandingProposal,
    Strategy,
    Waiting,
    WaitReason,
    allocate,
)
from apps.scheduling.allocator.preempt import Candidate, min_victim_set
from tests.scheduling.allocator.builders import (
    BINPACK,
    RULES,
    chip,
    outcome_of,
    placement_of,
    req,
    slice_,
    waiting_of,
)

FULL_310P = [
    "vir04",
    "vir02",
    "vir01",
]  # 21504 of 21527 MB, 7 of 8 AICore, 7 of 7 AICPU


def _full_chip(
    chip_id: str, priorities: tuple[int, int, int], started: float = 0.0
) -> tuple[Chip, list[RunningSlice]]:
    running = [
        slice_(f"{chip_id}-{name}", chip_id, name, priority=p, started=started)
        for name, p in zip(FULL_310P, priorities, strict=True)
    ]
    return chip(chip_id, slices=FULL_310P), running


def _proposal(result: AllocationResult, request_id: str) -> PreemptionProposal:
    found = outcome_of(result, request_id)
    assert isinstance(found, PreemptionProposal), found
    return found


def test_lowest_priority_victims_first() -> None:
    # given two full chips; on "a" the vir01 has priority 1, on "b" priority 0
    a, run_a = _full_chip("a", (5, 5, 1))
    b, run_b = _full_chip("b", (5, 5, 0))

    result = allocate(
        [req("r", 3072, priority=9)],
        [a, b],
        RULES,
        policy=BINPACK,
        running=run_a + run_b,
    )

    proposal = _proposal(result, "r")
    assert (proposal.chip_id, proposal.victims, proposal.max_victim_priority) == (
        "b",
        ("b-vir01",),
        0,
    )


def test_lower_highest_priority_beats_fewer_victims() -> None:
    # given a 910B4 with one vir10_3c_16g of priority 2 and two vir05_1c_8g of priority 0
    b4 = chip("x", "Ascend910B4", slices=["vir10_3c_16g", "vir05_1c_8g", "vir05_1c_8g"])
    running = [
        slice_("big", "x", "vir10_3c_16g", priority=2),
        slice_("small-1", "x", "vir05_1c_8g", priority=0),
        slice_("small-2", "x", "vir05_1c_8g", priority=0),
    ]

    # when a vir10_3c_16g of priority 5 arrives
    result = allocate(
        [req("r", template="vir10_3c_16g", common_word="Ascend910B4", priority=5)],
        [b4],
        RULES,
        policy=BINPACK,
        running=running,
    )

    # then two priority-0 victims are preferred over one priority-2 victim
    proposal = _proposal(result, "r")
    assert proposal.victims == ("small-1", "small-2")
    assert proposal.max_victim_priority == 0


def test_fewer_victims_at_equal_priority() -> None:
    # given chip "a" where a vir04 needs two priority-0 victims, and chip "b" where one suffices
    a = chip("a", slices=["vir02", "vir02", "vir02"])
    b = chip("b", slices=["vir04", "vir02"])
    running = [
        *(slice_(f"a{i}", "a", "vir02") for i in range(3)),
        slice_("b-vir04", "b", "vir04"),
        slice_("b-vir02", "b", "vir02"),
    ]

    result = allocate(
        [req("r", template="vir04", priority=1)],
        [a, b],
        RULES,
        policy=BINPACK,
        running=running,
    )

    assert _proposal(result, "r").victims == ("b-vir04",)


def test_least_running_time_lost_breaks_ties() -> None:
    a, run_a = _full_chip("a", (5, 5, 0), started=100.0)
    b, run_b = _full_chip("b", (5, 5, 0), started=400.0)

    result = allocate(
        [req("r", 3072, priority=9)],
        [a, b],
        RULES,
        policy=BINPACK,
        running=run_a + run_b,
        now_s=1000.0,
    )

    proposal = _proposal(result, "r")
    assert (proposal.chip_id, proposal.lost_seconds) == ("b", 600.0)


def test_no_victims_of_equal_or_higher_priority() -> None:
    a, running = _full_chip("a", (3, 3, 3))

    result = allocate(
        [req("r", 3072, priority=3)], [a], RULES, policy=BINPACK, running=running
    )

    waiting = outcome_of(result, "r")
    assert isinstance(waiting, Waiting)
    assert waiting.code is WaitReason.NO_CAPACITY
    assert waiting.reason.endswith(
        "no set of preemptable running slices with priority below 3 frees enough "
        "on one chip"
    )


def test_a_slice_marked_not_preemptable_is_never_a_victim() -> None:
    # given two full chips whose cheapest victim set is on "b", where the
    # vir01 is marked volcano.sh/preemptable: "false"
    a, run_a = _full_chip("a", (5, 5, 2))
    b, run_b = _full_chip("b", (5, 5, 1))
    run_b = [
        dataclasses.replace(s, preemptable=False) if s.id == "b-vir01" else s
        for s in run_b
    ]
    result = allocate(
        [req("r", 3072, priority=9)],
        [a, b],
        RULES,
        policy=BINPACK,
        running=run_a + run_b,
    )
    # then the proposal takes the dearer victim that may be evicted
    assert _proposal(result, "r").victims == ("a-vir01",)

    # and with every small slice protected, nothing of priority 5 is taken
    # either when the request is not above it
    protected = [dataclasses.replace(s, preemptable=False) for s in run_a + run_b]
    waiting = outcome_of(
        allocate(
            [req("r", 3072, priority=9)],
            [a, b],
            RULES,
            policy=BINPACK,
            running=protected,
        ),
        "r",
    )
    assert isinstance(waiting, Waiting)
    assert "no set of preemptable running slices" in waiting.reason


def test_a_priority_class_that_never_preempts_gets_no_proposal() -> None:
    a, running = _full_chip("a", (0, 0, 0))
    never = dataclasses.replace(req("r", 3072, priority=9), never_preempts=True)

    waiting = outcome_of(
        allocate([never], [a], RULES, policy=BINPACK, running=running), "r"
    )

    assert isinstance(waiting, Waiting)
    assert waiting.reason.endswith("its PriorityClass has preemptionPolicy: Never")
    # the same request without the policy would have preempted
    assert _proposal(
        allocate(
            [req("r", 3072, priority=9)], [a], RULES, policy=BINPACK, running=running
        ),
        "r",
    )


def test_no_proposal_when_terminating_slices_free_enough() -> None:
    # given a full chip whose vir02 (priority 0) is already terminating
    a = chip("a", slices=FULL_310P)
    running = [
        slice_("v4", "a", "vir04", priority=0),
        slice_("v2", "a", "vir02", priority=0, terminating=True),
        slice_("v1", "a", "vir01", priority=0),
    ]

    result = allocate(
        [req("r", 5000, priority=9)], [a], RULES, policy=BINPACK, running=running
    )

    assert outcome_of(result, "r") == Waiting(
        "r",
        "waiting for capacity being freed on chip a (node node-of-a)",
        WaitReason.CAPACITY_FREEING,
        "a",
    )


def test_capacity_being_freed_is_reserved_for_the_first_waiter() -> None:
    # given the same chip: the terminating vir02 frees room for one vir02 only
    a = chip("a", slices=FULL_310P)
    running = [
        slice_("v4", "a", "vir04", priority=0),
        slice_("v2", "a", "vir02", priority=0, terminating=True),
        slice_("v1", "a", "vir01", priority=0),
    ]
    requests = [
        req("first", 6144, priority=9, at=1),
        req("second", 6144, priority=9, at=2),
    ]

    result = allocate(requests, [a], RULES, policy=BINPACK, running=running)

    # then the second one preempts for itself instead of counting on the same room
    assert waiting_of(result, "first").code is WaitReason.CAPACITY_FREEING
    proposal = _proposal(result, "second")
    assert "v2" not in proposal.victims
    assert proposal.victims == ("v4",)


def test_terminating_slices_are_never_victims() -> None:
    a = chip("a", slices=["vir04", "vir04"], memory=40000, ai_core=16, ai_cpu=16)
    running = [
        slice_("going", "a", "vir04", priority=0, terminating=True),
        slice_("staying", "a", "vir04", priority=0),
    ]

    # a whole card needs the chip empty: the terminating slice frees only part of it
    result = allocate(
        [req("r", None, priority=9)], [a], RULES, policy=BINPACK, running=running
    )

    assert _proposal(result, "r").victims == ("staying",)


def test_a_victim_is_not_used_twice() -> None:
    a = chip("a", slices=["vir04", "vir04"], memory=40000, ai_core=16, ai_cpu=16)
    running = [slice_("v1", "a", "vir04"), slice_("v2", "a", "vir04")]
    requests = [req(f"r{i}", template="vir04", priority=5, at=i) for i in range(3)]

    result = allocate(requests, [a], RULES, policy=BINPACK, running=running)

    # room for one more vir04 exists now; the other two need one victim each
    victims = [v for p in result.proposals for v in p.victims]
    assert sorted(victims) == ["v1", "v2"]
    assert len(result.placements) == 1


def test_room_freed_by_a_proposal_is_reserved_for_its_request() -> None:
    # given a chip with a priority-0 vir04 and a priority-9 vir02 (3095 MB free)
    a = chip("a", slices=["vir04", "vir02"])
    running = [
        slice_("low", "a", "vir04", priority=0),
        slice_("keep", "a", "vir02", priority=9),
    ]
    requests = [
        req("high", template="vir04", priority=5, at=1),
        req("later", template="vir04", priority=3, at=2, allow_preemption=False),
    ]

    result = allocate(requests, [a], RULES, policy=BINPACK, running=running)

    # then "high" evicts "low", and "later" may not count on the room it frees
    assert _proposal(result, "high").victims == ("low",)
    assert waiting_of(result, "later").code is WaitReason.NO_CAPACITY


def test_later_lower_priority_request_still_uses_room_that_is_really_free() -> None:
    a = chip("a", slices=["vir04", "vir02"])
    running = [
        slice_("low", "a", "vir04", priority=0),
        slice_("keep", "a", "vir02", priority=9),
    ]
    requests = [
        req("high", template="vir04", priority=5, at=1),
        req("tiny", 3000, priority=3, at=2),
    ]

    result = allocate(requests, [a], RULES, policy=BINPACK, running=running)

    assert _proposal(result, "high").victims == ("low",)
    assert placement_of(result, "tiny").chip_id == "a"


@pytest.mark.parametrize(
    ("policy", "allow", "note"),
    [
        (Policy(Strategy.BINPACK, preemption=False), True, "preemption is off"),
        (BINPACK, False, "the request does not allow preemption"),
    ],
)
def test_preemption_can_be_turned_off(policy: Policy, allow: bool, note: str) -> None:
    a, running = _full_chip("a", (0, 0, 0))

    result = allocate(
        [req("r", 3072, priority=9, allow_preemption=allow)],
        [a],
        RULES,
        policy=policy,
        running=running,
    )

    waiting = outcome_of(result, "r")
    assert isinstance(waiting, Waiting)
    assert waiting.reason.endswith(note)


def test_pinned_request_preempts_only_on_its_chip() -> None:
    a, run_a = _full_chip("a", (0, 0, 0))
    b, run_b = _full_chip("b", (1, 1, 1))

    result = allocate(
        [req("r", 3072, priority=9, pinned="b")],
        [a, b],
        RULES,
        policy=BINPACK,
        running=run_a + run_b,
    )

    proposal = _proposal(result, "r")
    assert (proposal.chip_id, proposal.victims) == ("b", ("b-vir01",))


def test_excluded_chip_is_not_preempted() -> None:
    a, run_a = _full_chip("a", (0, 0, 0))
    b, run_b = _full_chip("b", (1, 1, 1))

    result = allocate(
        [req("r", 3072, priority=9, excluded=["a"])],
        [a, b],
        RULES,
        policy=BINPACK,
        running=run_a + run_b,
    )

    assert _proposal(result, "r").chip_id == "b"


def test_whole_card_evicts_everything_lower() -> None:
    a, run_a = _full_chip("a", (0, 0, 9))
    b, run_b = _full_chip("b", (1, 2, 1))

    result = allocate(
        [req("r", None, priority=5)],
        [a, b],
        RULES,
        policy=BINPACK,
        running=run_a + run_b,
    )

    proposal = _proposal(result, "r")
    assert (proposal.chip_id, proposal.victims, proposal.max_victim_priority) == (
        "b",
        ("b-vir01", "b-vir02", "b-vir04"),
        2,
    )
    assert (proposal.template, proposal.memory, proposal.ai_core, proposal.ai_cpu) == (
        None,
        21527,
        8,
        7,
    )


def test_quota_bound_request_preempts_its_own_queue() -> None:
    # given queue ci at its slot quota; its only slice runs on chip "a",
    # another queue's lower-priority slice runs on chip "b"
    quota = QueueQuota("ci", "Ascend310P", None, 1, 3072, 1)
    chips = [chip("a", slices=["vir01"]), chip("b", slices=["vir01"]), chip("c")]
    running = [
        slice_("ci-slice", "a", "vir01", priority=0, queue="ci"),
        slice_("other", "b", "vir01", priority=0, queue="prod"),
    ]

    result = allocate(
        [req("r", 3072, priority=5, queue="ci")],
        chips,
        RULES,
        policy=BINPACK,
        quotas=[quota],
        running=running,
    )

    # then only evicting its own queue's slice gives the quota back
    proposal = _proposal(result, "r")
    assert (proposal.chip_id, proposal.victims) == ("a", ("ci-slice",))


def test_quota_bound_request_waits_when_its_queue_has_nothing_lower() -> None:
    quota = QueueQuota("ci", "Ascend310P", None, 1, 3072, 1)
    chips = [chip("a", slices=["vir01"]), chip("c")]
    running = [slice_("ci-slice", "a", "vir01", priority=7, queue="ci")]

    result = allocate(
        [req("r", 3072, priority=5, queue="ci")],
        chips,
        RULES,
        policy=BINPACK,
        quotas=[quota],
        running=running,
    )

    assert waiting_of(result, "r").code is WaitReason.QUOTA


def test_lost_seconds_default_to_latest_start() -> None:
    a, running = _full_chip("a", (0, 0, 0), started=50.0)
    running = [*running[:2], slice_("a-vir01", "a", "vir01", started=80.0)]

    result = allocate(
        [req("r", 3072, priority=1)], [a], RULES, policy=BINPACK, running=running
    )

    assert _proposal(result, "r").lost_seconds == 0.0  # now_s defaults to 80


# -- the exact search on one chip -----------------------------------------------------


def _c(cid: str, priority: int, lost: float, *amounts: int) -> Candidate:
    return Candidate(cid, priority, lost, tuple(amounts))


def test_search_minimises_priority_then_count_then_time() -> None:
    candidates = [
        _c("p1-big", 1, 5.0, 10),
        _c("p0-a", 0, 9.0, 4),
        _c("p0-b", 0, 1.0, 4),
        _c("p0-c", 0, 2.0, 6),
    ]

    found = min_victim_set(candidates, [10])

    # priority 0 needs two victims: {a, c} or {b, c} (10 each); b+c loses less time
    assert found is not None
    assert (found.victims, found.max_priority, found.lost_seconds) == (
        ("p0-b", "p0-c"),
        0,
        3.0,
    )


def test_search_returns_none_when_even_everything_is_not_enough() -> None:
    assert min_victim_set([_c("a", 0, 0.0, 3), _c("b", 0, 0.0, 3)], [7]) is None


def test_search_needs_something_to_free() -> None:
    assert min_victim_set([_c("a", 0, 0.0, 3)], [0, 0]) is None


def test_search_covers_every_dimension() -> None:
    candidates = [
        _c("mem", 0, 0.0, 10, 0),
        _c("cpu", 0, 0.0, 0, 2),
        _c("both", 1, 0.0, 10, 2),
    ]

    found = min_victim_set(candidates, [5, 1])

    assert found is not None
    assert found.victims == ("cpu", "mem")


def test_search_falls_back_to_greedy_beyond_the_exact_limit() -> None:
    candidates = [_c(f"s{i:02d}", 0, float(i), 1) for i in range(30)]

    found = min_victim_set(candidates, [3])

    assert found is not None
    assert len(found.victims) == 3


def test_spare_room_from_a_proposal_goes_to_earlier_waiting_requests_first() -> None:
    # given a chip with two priority-0 vir02 and a priority-9 vir01
    x = chip("x", slices=["vir02", "vir02", "vir01"])
    running = [
        slice_("A", "x", "vir02", priority=0, started=1.0),
        slice_("B", "x", "vir02", priority=0, started=2.0),
        slice_("C", "x", "vir01", priority=9),
    ]
    requests = [
        req(
            "P", template="vir04", priority=10
        ),  # evicts B; the chip's future is then full
        req(
            "H", template="vir01", priority=8, allow_preemption=False
        ),  # nothing left for it
        req("M", template="vir01", priority=5),  # evicts A: 6144 MB for a 3072 MB slice
        req("L", template="vir01", priority=1),
    ]

    result = allocate(requests, [x], RULES, policy=BINPACK, running=running)

    # then the room M's victim frees beyond M's need goes to H, not to the later L
    assert _proposal(result, "P").victims == ("B",)
    assert _proposal(result, "M").victims == ("A",)
    assert placement_of(result, "H").chip_id == "x"
    assert isinstance(outcome_of(result, "L"), Waiting)


def _standing(chip_id: str, *slice_ids: str) -> StandingProposal:
    return StandingProposal(chip_id, frozenset(("ns", f"pod-{s}") for s in slice_ids))


def test_a_standing_proposal_is_proposed_again_while_it_works() -> None:
    # given the request's pending proposal evicts b-vir04 (priority 1), and
    # now a-vir01 (priority 0) would be a better victim
    a, run_a = _full_chip("a", (5, 5, 0))
    b, run_b = _full_chip("b", (1, 5, 5))
    standing = _standing("b", "b-vir04")
    r = req("r", template="vir01", priority=9)

    fresh = _proposal(
        allocate([r], [a, b], RULES, policy=BINPACK, running=run_a + run_b), "r"
    )
    kept = _proposal(
        allocate(
            [dataclasses.replace(r, standing=standing)],
            [a, b],
            RULES,
            policy=BINPACK,
            running=run_a + run_b,
        ),
        "r",
    )

    assert (fresh.chip_id, fresh.victims) == ("a", ("a-vir01",))
    assert (kept.chip_id, kept.victims, kept.max_victim_priority) == (
        "b",
        ("b-vir04",),
        1,
    )


@pytest.mark.parametrize(
    ("standing", "why"),
    [
        (_standing("b", "gone"), "a victim left the chip"),
        (_standing("b", "b-vir02"), "evicting it no longer frees enough"),
        (_standing("b", "b-vir04", "b-vir01"), "a victim of higher priority"),
        (_standing("x", "b-vir04"), "its chip is gone"),
    ],
)
def test_a_standing_proposal_that_no_longer_works_is_searched_afresh(
    standing: StandingProposal, why: str
) -> None:
    a, run_a = _full_chip("a", (5, 5, 0))
    b, run_b = _full_chip("b", (1, 1, 9))
    r = dataclasses.replace(req("r", template="vir04", priority=9), standing=standing)

    result = allocate([r], [a, b], RULES, policy=BINPACK, running=run_a + run_b)

    assert _proposal(result, "r").victims == ("b-vir04",), why


def test_a_standing_proposals_victims_are_claimed_by_an_earlier_request() -> None:
    # given "later" stands on b-vir01, but "first" (higher priority) is served
    # first and b-vir01 is its best victim: "later" is searched afresh
    a, run_a = _full_chip("a", (5, 5, 3))
    b, run_b = _full_chip("b", (5, 5, 0))
    first = req("first", template="vir01", priority=9, at=2)
    later = dataclasses.replace(
        req("later", template="vir01", priority=8, at=1),
        standing=_standing("b", "b-vir01"),
    )

    result = allocate(
        [first, later], [a, b], RULES, policy=BINPACK, running=run_a + run_b
    )

    assert _proposal(result, "first").victims == ("b-vir01",)
    assert _proposal(result, "later").victims == ("a-vir01",)
