"""allocate(): chip choice, order, eligibility, quotas, reasons and input checks."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

from apps.scheduling.allocator import (
    AllocationResult,
    Chip,
    InvalidSnapshot,
    Placement,
    Policy,
    QueueQuota,
    SnapshotProblem,
    Strategy,
    Waiting,
    WaitReason,
    allocate,
)
from apps.scheduling.allocator.policy import (
    FULLER_FIRST,
    LOOKS_AHEAD,
    SORT_KEYS,
    chip_key,
)
from tests.scheduling.allocator.builders import (
    BINPACK,
    RULES,
    SPREAD,
    chip,
    outcome_of,
    placed_on,
    req,
    slice_,
    waiting_of,
)

# -- strategy ------------------------------------------------------------------------


def test_every_strategy_has_a_key_and_flags() -> None:
    for strategy in Strategy:
        assert strategy in SORT_KEYS
        assert strategy in FULLER_FIRST
        assert strategy in LOOKS_AHEAD


def test_binpack_key_is_volcano_used_fraction_then_chip_id() -> None:
    assert chip_key(Strategy.BINPACK, "a", 20000, 10000, 3) < chip_key(
        Strategy.BINPACK, "b", 20000, 5000, 1
    )
    assert chip_key(Strategy.BINPACK, "a", 20000, 5000, 1) < chip_key(
        Strategy.BINPACK, "b", 20000, 5000, 1
    )


def test_spread_key_puts_empty_chips_first_then_least_used() -> None:
    empty = chip_key(Strategy.SPREAD, "z", 20000, 0, 0)
    light = chip_key(Strategy.SPREAD, "a", 20000, 3000, 1)
    heavy = chip_key(Strategy.SPREAD, "b", 20000, 9000, 2)
    assert empty < light < heavy


@pytest.mark.parametrize(("policy", "expected"), [(BINPACK, "half"), (SPREAD, "empty")])
def test_strategy_chooses_the_chip(policy: Policy, expected: str) -> None:
    # given an empty chip, a lightly used one and a half-used one
    chips = [
        chip("empty"),
        chip("light", slices=["vir01"]),
        chip("half", slices=["vir04"]),
    ]

    # when one vir01 arrives
    result = allocate([req("r", 3072)], chips, RULES, policy=policy)

    # then binpack fills the fullest, spread takes the empty chip
    assert placed_on(result) == {"r": expected}


def test_spread_prefers_least_used_when_none_is_empty() -> None:
    chips = [chip("a", slices=["vir04"]), chip("b", slices=["vir01"])]

    result = allocate([req("r", 3072)], chips, RULES, policy=SPREAD)

    assert placed_on(result) == {"r": "b"}


def test_binpack_compares_used_fraction_across_chip_sizes() -> None:
    # given a small chip 50 % used and a big chip 25 % used (more MB in use)
    small = chip("small", "Ascend910B4", slices=["vir10_3c_16g"])
    big = chip(
        "big",
        "Ascend910B4",
        memory=131072,
        ai_core=80,
        ai_cpu=28,
        slots=16,
        memory_used=32768,
    )

    result = allocate(
        [req("r", 8192, common_word="Ascend910B4")], [small, big], RULES, policy=BINPACK
    )

    assert placed_on(result) == {"r": "small"}


def test_ties_are_broken_by_chip_id() -> None:
    chips = [chip("c2"), chip("c1"), chip("c3")]

    for policy in (BINPACK, SPREAD):
        assert placed_on(allocate([req("r", 3072)], chips, RULES, policy=policy)) == {
            "r": "c1"
        }


def test_binpack_looks_ahead_to_fit_more() -> None:
    # given two empty 310P chips and two vir02 followed by two vir04
    chips = [chip("a"), chip("b")]
    requests = [
        req("r1", template="vir02", at=1),
        req("r2", template="vir02", at=2),
        req("r3", template="vir04", at=3),
        req("r4", template="vir04", at=4),
    ]

    # when packing greedily (no look-ahead) both vir02 share a chip: one vir04 is stranded
    greedy = allocate(
        requests, chips, RULES, policy=Policy(Strategy.BINPACK, lookahead=0)
    )
    looking = allocate(requests, chips, RULES, policy=BINPACK)

    # then the look-ahead puts one vir02 on each chip and all four fit
    assert len(greedy.placements) == 3
    assert len(looking.placements) == 4
    assert placed_on(looking)["r1"] != placed_on(looking)["r2"]


# -- eligibility ----------------------------------------------------------------------


def test_cordoned_and_unhealthy_chips_are_skipped() -> None:
    chips = [
        chip("a", cordoned=True),
        chip("b", healthy=False),
        chip("c", slices=["vir04"]),
    ]

    result = allocate([req("r", 3072)], chips, RULES, policy=SPREAD)

    assert placed_on(result) == {"r": "c"}


def test_no_schedulable_chip_says_why() -> None:
    chips = [chip("a", cordoned=True), chip("b", healthy=False)]

    result = allocate([req("r", 3072)], chips, RULES, policy=BINPACK)

    assert outcome_of(result, "r") == Waiting(
        "r",
        "no healthy, schedulable Ascend310P chip (1 cordoned, 1 unhealthy)",
        WaitReason.NO_ELIGIBLE_CHIP,
    )


def test_chips_of_another_type_are_not_used() -> None:
    result = allocate(
        [req("r", 3072)], [chip("b4", "Ascend910B4")], RULES, policy=BINPACK
    )

    assert waiting_of(result, "r").code is WaitReason.NO_ELIGIBLE_CHIP


def test_pinned_chip_is_honoured_against_the_strategy() -> None:
    chips = [chip("a"), chip("b", slices=["vir04"])]

    result = allocate([req("r", 3072, pinned="a")], chips, RULES, policy=BINPACK)

    assert placed_on(result) == {"r": "a"}


@pytest.mark.parametrize(
    ("pinned", "chips", "why"),
    [
        ("nope", [chip("a")], "pinned chip nope is unknown"),
        ("a", [chip("a", cordoned=True)], "pinned chip a is cordoned"),
        ("a", [chip("a", healthy=False)], "pinned chip a is unhealthy"),
        (
            "a",
            [chip("a", "Ascend910B4")],
            "pinned chip a is Ascend910B4, not Ascend310P",
        ),
    ],
)
def test_unusable_pinned_chip(pinned: str, chips: list[Chip], why: str) -> None:
    result = allocate([req("r", 3072, pinned=pinned)], chips, RULES, policy=BINPACK)

    assert outcome_of(result, "r") == Waiting("r", why, WaitReason.NO_ELIGIBLE_CHIP)


def test_full_pinned_chip_waits_even_if_others_are_free() -> None:
    chips = [chip("a", slices=["vir04", "vir02", "vir01"]), chip("b")]

    result = allocate([req("r", 3072, pinned="a")], chips, RULES, policy=BINPACK)

    waiting = outcome_of(result, "r")
    assert isinstance(waiting, Waiting)
    assert waiting.code is WaitReason.NO_CAPACITY
    assert waiting.reason.startswith("pinned chip a has no room for vir01")


def test_excluded_chips_are_skipped() -> None:
    chips = [chip("a", slices=["vir04"]), chip("b")]

    result = allocate([req("r", 3072, excluded=["a"])], chips, RULES, policy=BINPACK)

    assert placed_on(result) == {"r": "b"}


def test_all_chips_excluded() -> None:
    result = allocate(
        [req("r", 3072, excluded=["a"])], [chip("a")], RULES, policy=BINPACK
    )

    assert outcome_of(result, "r") == Waiting(
        "r",
        "no healthy, schedulable Ascend310P chip (1 excluded)",
        WaitReason.NO_ELIGIBLE_CHIP,
    )


def test_unknown_chip_type_is_invalid() -> None:
    result = allocate(
        [req("r", 3072, common_word="Ascend999")], [chip("a")], RULES, policy=BINPACK
    )

    assert outcome_of(result, "r") == Waiting(
        "r", "invalid: no chip type Ascend999 in the device config", WaitReason.INVALID
    )


# -- order ----------------------------------------------------------------------------


def _one_slot_left() -> list[Chip]:
    return [chip("c", slices=["vir01"] * 6)]


def test_higher_priority_first_even_if_younger() -> None:
    requests = [
        req("old-low", 3072, priority=1, at=0),
        req("new-high", 3072, priority=2, at=9),
    ]

    result = allocate(
        requests, _one_slot_left(), RULES, policy=Policy(Strategy.BINPACK, False)
    )

    assert placed_on(result) == {"new-high": "c"}
    assert waiting_of(result, "old-low").code is WaitReason.NO_CAPACITY


def test_oldest_first_within_a_priority_then_id() -> None:
    requests = [req("b", 3072, at=5), req("a", 3072, at=5), req("z", 3072, at=1)]

    result = allocate(requests, _one_slot_left(), RULES, policy=BINPACK)

    assert placed_on(result) == {"z": "c"}
    assert [w.request_id for w in result.waiting] == ["a", "b"]


def test_outputs_are_in_processing_order() -> None:
    requests = [req(f"r{i}", 3072, priority=i % 3, at=-i) for i in range(6)]

    result = allocate(requests, [chip("a"), chip("b")], RULES, policy=BINPACK)

    keys = [
        (-r.priority, r.submitted_at_s)
        for r in sorted(requests, key=lambda r: (-r.priority, r.submitted_at_s))
    ]
    by_id = {r.id: (-r.priority, r.submitted_at_s) for r in requests}
    assert [by_id[p.request_id] for p in result.placements] == keys


# -- quotas ---------------------------------------------------------------------------


def test_memory_quota_blocks_with_its_numbers() -> None:
    quota = QueueQuota("ci", "Ascend310P", 20480, None, 18432, 3)

    result = allocate(
        [req("r", 3072, queue="ci")], [chip("a")], RULES, policy=BINPACK, quotas=[quota]
    )

    waiting = outcome_of(result, "r")
    assert isinstance(waiting, Waiting)
    assert waiting.code is WaitReason.QUOTA
    assert waiting.reason.startswith(
        "queue ci quota: 18432 of 20480 MB of Ascend310P in use (request needs 3072)"
    )


def test_slot_quota_blocks() -> None:
    quota = QueueQuota("ci", "Ascend310P", None, 2, 0, 2)

    result = allocate(
        [req("r", 3072, queue="ci")], [chip("a")], RULES, policy=BINPACK, quotas=[quota]
    )

    waiting = outcome_of(result, "r")
    assert isinstance(waiting, Waiting)
    assert "queue ci quota: 2 of 2 slices of Ascend310P in use" in waiting.reason


def test_quota_is_consumed_by_placements_in_the_same_pass() -> None:
    quota = QueueQuota("ci", "Ascend310P", 12288, None, 0, 0)
    requests = [req(f"r{i}", 6144, queue="ci", at=i) for i in range(3)]

    result = allocate(
        requests, [chip("a"), chip("b")], RULES, policy=BINPACK, quotas=[quota]
    )

    assert sorted(placed_on(result)) == ["r0", "r1"]
    assert waiting_of(result, "r2").code is WaitReason.QUOTA


def test_quota_applies_per_queue_and_chip_type() -> None:
    quota = QueueQuota("ci", "Ascend310P", 0, 0, 0, 0)
    chips = [chip("a"), chip("b4", "Ascend910B4")]
    requests = [
        req("other-queue", 3072, queue="prod"),
        req("other-type", 8192, queue="ci", common_word="Ascend910B4"),
        req("blocked", 3072, queue="ci"),
    ]

    result = allocate(requests, chips, RULES, policy=BINPACK, quotas=[quota])

    assert sorted(placed_on(result)) == ["other-queue", "other-type"]


def test_unlimited_quota_never_blocks() -> None:
    quota = QueueQuota("ci", "Ascend310P", None, None, 10**9, 10**6)

    result = allocate(
        [req("r", 3072, queue="ci")], [chip("a")], RULES, policy=BINPACK, quotas=[quota]
    )

    assert placed_on(result) == {"r": "a"}


def test_terminating_slices_of_the_queue_free_quota() -> None:
    # given a queue at its slot quota, one of its slices terminating
    quota = QueueQuota("ci", "Ascend310P", None, 1, 3072, 1)
    chips = [chip("a", slices=["vir01"]), chip("b")]
    running = [slice_("s", "a", "vir01", queue="ci", terminating=True)]

    result = allocate(
        [req("r", 3072, queue="ci")],
        chips,
        RULES,
        policy=BINPACK,
        quotas=[quota],
        running=running,
    )

    # then the request waits for that quota instead of preempting or failing
    waiting = outcome_of(result, "r")
    assert isinstance(waiting, Waiting)
    assert waiting.code is WaitReason.CAPACITY_FREEING
    assert waiting.reason.startswith("waiting for quota being freed in queue ci")


# -- accounting and determinism -------------------------------------------------------


def test_every_request_is_answered_exactly_once() -> None:
    chips = [
        chip("a", slices=["vir04"]),
        chip("b", cordoned=True),
        chip("c", "Ascend910B4"),
    ]
    requests = [
        req("fits", 3072),
        req("whole", None),
        req("too-big", 99999),
        req("unknown-type", 1, common_word="X"),
        req("b4", 8192, common_word="Ascend910B4"),
        req("b4-whole", None, common_word="Ascend910B4"),
        req("pinned-cordoned", 1, pinned="b"),
    ]

    result = allocate(requests, chips, RULES, policy=BINPACK)

    answered = [
        *(p.request_id for p in result.placements),
        *(p.request_id for p in result.proposals),
        *(w.request_id for w in result.waiting),
    ]
    assert sorted(answered) == sorted(r.id for r in requests)
    assert all(w.reason for w in result.waiting)


def test_same_input_in_any_order_gives_the_same_result() -> None:
    rng = random.Random(3)
    chips = [
        chip(f"c{i}", slices=rng.sample(["vir01", "vir02", "vir04"], rng.randint(0, 2)))
        for i in range(8)
    ]
    requests = [
        req(
            f"r{i}",
            rng.choice([None, 1000, 4000, 9000]),
            priority=rng.randint(0, 2),
            at=rng.randint(0, 3),
        )
        for i in range(20)
    ]
    first = allocate(requests, chips, RULES, policy=BINPACK)

    for _ in range(5):
        rng.shuffle(chips)
        rng.shuffle(requests)
        assert allocate(requests, chips, list(reversed(RULES)), policy=BINPACK) == first


# -- input checks --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "problem"),
    [
        ({"chips": [chip("a", memory_used=-1)]}, SnapshotProblem.NEGATIVE_VALUE),
        ({"chips": [chip("a", memory=0)]}, SnapshotProblem.NOT_POSITIVE),
        ({"chips": [chip("a"), chip("a")]}, SnapshotProblem.DUPLICATE_ID),
        ({"requests": [req("r"), req("r")]}, SnapshotProblem.DUPLICATE_ID),
        ({"requests": [req("r", at=math.nan)]}, SnapshotProblem.NOT_FINITE),
        ({"running": [slice_("s", "nope", "vir01")]}, SnapshotProblem.UNKNOWN_CHIP),
        (
            {"running": [slice_("s", "a", "vir04")]},
            SnapshotProblem.RUNNING_EXCEEDS_USAGE,
        ),
        (
            {"running": [slice_("s", "a", "vir01"), slice_("s", "a", "vir01")]},
            SnapshotProblem.DUPLICATE_ID,
        ),
        (
            {"quotas": [QueueQuota("q", "Ascend310P", 1, 1, 0, 0)] * 2},
            SnapshotProblem.DUPLICATE_ID,
        ),
        (
            {"quotas": [QueueQuota("q", "Ascend310P", -1, 1, 0, 0)]},
            SnapshotProblem.NEGATIVE_VALUE,
        ),
        (
            {"policy": Policy(Strategy.BINPACK, lookahead=-1)},
            SnapshotProblem.NEGATIVE_VALUE,
        ),
    ],
)
def test_invalid_snapshot_raises_with_data(
    kwargs: dict[str, Any], problem: SnapshotProblem
) -> None:
    args: dict[str, Any] = {
        "requests": [req("r", 3072)],
        "chips": [chip("a", slices=["vir01", "vir01"])],
        "policy": BINPACK,
        "running": [],
        "quotas": [],
        **kwargs,
    }

    with pytest.raises(InvalidSnapshot) as caught:
        allocate(args.pop("requests"), args.pop("chips"), RULES, **args)

    assert caught.value.problem is problem


def test_chip_of_a_type_without_rules_is_an_invalid_snapshot() -> None:
    with pytest.raises(InvalidSnapshot) as caught:
        allocate([], [chip("b4", "Ascend910B4")], RULES[:1], policy=BINPACK)

    assert (caught.value.problem, caught.value.kind, caught.value.subject) == (
        SnapshotProblem.UNKNOWN_COMMON_WORD,
        "chip",
        "b4",
    )


def test_empty_input_gives_an_empty_result() -> None:
    result = allocate([], [], RULES, policy=BINPACK)

    assert result == AllocationResult((), (), ())


def test_result_placements_are_frozen() -> None:
    result = allocate([req("r", 3072)], [chip("a")], RULES, policy=BINPACK)

    with pytest.raises(AttributeError):
        result.placements[0].chip_id = "b"  # type: ignore[misc]
    assert isinstance(result.placements[0], Placement)
