"""HAMi's request → template rule, and the four-dimension chip fit."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apps.scheduling.allocator import (
    ChipTypeRules,
    InvalidRequest,
    Placement,
    SliceShape,
    TemplateShape,
    Waiting,
    WaitReason,
    all_shapes,
    allocate,
    resolve_shape,
)
from apps.scheduling.allocator.fit import ZERO, Resources, booking, fits, shortfall
from tests.scheduling.allocator.builders import (
    B4,
    BINPACK,
    P310,
    RULES,
    chip,
    outcome_of,
    req,
)


@pytest.mark.parametrize(
    ("rules", "memory", "template", "expected_memory"),
    [
        (P310, 0, "vir01", 3072),  # 0 <= 3072: the smallest template
        (P310, 3000, "vir01", 3072),
        (P310, 3072, "vir01", 3072),
        (P310, 3073, "vir02", 6144),
        (P310, 5000, "vir02", 6144),
        (P310, 6144, "vir02", 6144),
        (P310, 6145, "vir04", 12288),
        (P310, 12288, "vir04", 12288),
        (P310, 12289, None, 21527),  # whole card books memoryAllocatable
        (P310, 24576, None, 21527),  # up to memoryCapacity
        (P310, None, None, 21527),  # no memory: whole card
        (B4, 8192, "vir05_1c_8g", 8192),
        (B4, 8193, "vir10_3c_16g", 16384),
        (B4, 16385, None, 32768),
    ],
)
def test_memory_maps_to_smallest_template_that_holds_it(
    rules: ChipTypeRules, memory: int | None, template: str | None, expected_memory: int
) -> None:
    shape = resolve_shape(rules, memory=memory, template=None)

    assert shape.template == template
    assert shape.memory == expected_memory


@pytest.mark.parametrize(
    ("rules", "memory", "message"),
    [
        (P310, 24577, "Ascend310P: 24577 MB is more than memoryCapacity 24576 MB"),
        (P310, 30000, "Ascend310P: 30000 MB is more than memoryCapacity 24576 MB"),
        (B4, 32769, "Ascend910B4: 32769 MB is more than memoryCapacity 32768 MB"),
        (P310, -1, "Ascend310P: -1 MB is negative"),
    ],
)
def test_memory_beyond_capacity_is_invalid(
    rules: ChipTypeRules, memory: int, message: str
) -> None:
    with pytest.raises(InvalidRequest) as caught:
        resolve_shape(rules, memory=memory, template=None)

    assert caught.value.detail == message


def test_explicit_template_wins_over_memory() -> None:
    shape = resolve_shape(P310, memory=100, template="vir04")

    assert shape == SliceShape("vir04", 12288, 4, 4)


def test_unknown_template_is_invalid_and_lists_known_ones() -> None:
    with pytest.raises(InvalidRequest) as caught:
        resolve_shape(P310, memory=None, template="vir99")

    assert (
        caught.value.detail
        == "unknown template vir99 for Ascend310P (known: vir01, vir02, vir04)"
    )


def test_template_order_in_config_does_not_matter() -> None:
    reversed_rules = dataclasses.replace(
        P310, templates=tuple(reversed(P310.templates))
    )

    for memory in (0, 3072, 4000, 7000, 12288, 20000):
        assert resolve_shape(
            reversed_rules, memory=memory, template=None
        ) == resolve_shape(P310, memory=memory, template=None)


def test_chip_type_without_templates_serves_whole_cards_only() -> None:
    rules = ChipTypeRules("Ascend910C", 65536, 65536, 20, 7, ())

    assert resolve_shape(rules, memory=100, template=None).whole_card
    with pytest.raises(InvalidRequest):
        resolve_shape(rules, memory=65537, template=None)


def test_12289_mb_is_a_whole_card_that_fits_only_an_empty_chip() -> None:
    # given one chip running a vir01 and one empty chip
    chips = [chip("busy", slices=["vir01"]), chip("empty")]

    # when asking for 12289 MB (more than vir04)
    result = allocate([req("r", 12289)], chips, RULES, policy=BINPACK)

    # then the empty chip takes it as a whole card with all AICore and AICPU
    assert outcome_of(result, "r") == Placement(
        "r", "empty", "node-of-empty", None, 21527, 8, 7
    )


def test_whole_card_waits_when_no_chip_is_empty() -> None:
    result = allocate(
        [req("r", None)], [chip("busy", slices=["vir01"])], RULES, policy=BINPACK
    )

    waiting = outcome_of(result, "r")
    assert isinstance(waiting, Waiting)
    assert waiting.code is WaitReason.NO_CAPACITY
    assert "is empty for a whole card of 21527 MB" in waiting.reason


def test_request_beyond_capacity_waits_as_invalid() -> None:
    result = allocate([req("r", 30000)], [chip("c")], RULES, policy=BINPACK)

    assert outcome_of(result, "r") == Waiting(
        "r",
        "invalid: Ascend310P: 30000 MB is more than memoryCapacity 24576 MB",
        WaitReason.INVALID,
    )


# -- per-chip fit --------------------------------------------------------------------

TOTAL_310P = Resources(21527, 7, 8, 7)
VIR = {
    t.name: SliceShape(t.name, t.memory, t.ai_core, t.ai_cpu)
    for r in RULES
    for t in r.templates
}


def _stack(total: Resources, names: list[str]) -> Resources | None:
    used = ZERO
    for name in names:
        if not fits(total, used, VIR[name]):
            return None
        used = Resources(
            *(u + b for u, b in zip(used, booking(VIR[name], total), strict=True))
        )
    return used


@pytest.mark.parametrize(
    ("names", "fit"),
    [
        (["vir01", "vir02", "vir04"], True),  # 21504 MB
        (["vir01"] * 7, True),  # 7 slots
        (["vir01"] * 8, False),  # no 8th slot
        (["vir02", "vir02", "vir02", "vir01"], True),
        (["vir04", "vir04"], False),  # 24576 MB > 21527
    ],
)
def test_310p_template_mixes(names: list[str], fit: bool) -> None:
    assert (_stack(TOTAL_310P, names) is not None) is fit


def test_aicpu_alone_blocks_a_template() -> None:
    # A 910B4 chip whose AICPU is over-used (HAMi does not account AICPU in
    # template mode): memory, a slot and AICore are free, AICPU is not.
    total = Resources(32768, 4, 20, 7)
    used = Resources(16384, 2, 10, 5)

    assert fits(total, used, VIR["vir05_1c_8g"])
    assert not fits(total, used, VIR["vir10_3c_16g"])
    assert shortfall(total, used, VIR["vir10_3c_16g"]) == Resources(0, 0, 0, 1)


def test_aicpu_blocks_a_third_vir10_3c_16g_on_a_big_chip() -> None:
    # given a 910B4-like chip with room for three vir10_3c_16g in memory,
    # slots and AICore, but 7 AICPU (3 + 3 + 3 > 7)
    big = chip("big", "Ascend910B4", memory=65536, ai_core=40)
    requests = [
        req(f"r{i}", template="vir10_3c_16g", common_word="Ascend910B4", at=i)
        for i in range(3)
    ]

    result = allocate(requests, [big], RULES, policy=BINPACK)

    assert [p.request_id for p in result.placements] == ["r0", "r1"]
    waiting = outcome_of(result, "r2")
    assert isinstance(waiting, Waiting)
    assert "1 AICPU free" in waiting.reason


def test_aicore_alone_blocks_a_template() -> None:
    total = Resources(32768, 4, 20, 7)
    used = Resources(8192, 1, 15, 1)

    assert not fits(total, used, VIR["vir10_3c_16g"])
    assert shortfall(total, used, VIR["vir10_3c_16g"]) == Resources(0, 0, 5, 0)


resources = st.builds(
    Resources,
    st.integers(0, 40000),
    st.integers(0, 8),
    st.integers(0, 24),
    st.integers(0, 8),
)
shapes = st.sampled_from(
    [*VIR.values(), SliceShape(None, 21527, 8, 7), SliceShape(None, 32768, 20, 7)]
)


@settings(max_examples=300, deadline=None)
@given(total=resources, used=resources, shape=shapes)
def test_fits_exactly_when_nothing_is_short(
    total: Resources, used: Resources, shape: SliceShape
) -> None:
    assert fits(total, used, shape) is (shortfall(total, used, shape) == ZERO)


@settings(max_examples=200, deadline=None)
@given(total=resources, used=resources, shape=shapes)
def test_removing_the_shortfall_makes_it_fit(
    total: Resources, used: Resources, shape: SliceShape
) -> None:
    need = shortfall(total, used, shape)
    after = Resources(*(u - n for u, n in zip(used, need, strict=True)))

    if all(x >= 0 for x in after):
        assert fits(total, after, shape)


def test_whole_card_shortfall_is_all_usage() -> None:
    used = Resources(3072, 1, 1, 1)

    assert shortfall(TOTAL_310P, used, SliceShape(None, 21527, 8, 7)) == used
    assert not fits(TOTAL_310P, used, SliceShape(None, 21527, 8, 7))
    assert fits(TOTAL_310P, ZERO, SliceShape(None, 21527, 8, 7))


def test_placement_reports_the_booked_amounts() -> None:
    result = allocate([req("r", 5000)], [chip("c")], RULES, policy=BINPACK)

    assert outcome_of(result, "r") == Placement(
        "r", "c", "node-of-c", "vir02", 6144, 2, 2
    )


# --- ties and boundaries (docs/scheduler-behaviour.md, "Template rule ties") ------

TIED = dataclasses.replace(
    P310,
    templates=(
        TemplateShape("vir04_3c", 12288, 3, 3),
        TemplateShape("vir01", 3072, 1, 1),
        TemplateShape("vir04", 12288, 4, 4),
    ),
)


def test_equal_memories_go_to_the_first_in_the_file() -> None:
    shape = resolve_shape(TIED, memory=10000, template=None)

    assert shape == SliceShape("vir04_3c", 12288, 3, 3)
    reordered = dataclasses.replace(TIED, templates=TIED.templates[::-1])
    assert resolve_shape(reordered, memory=10000, template=None).template == "vir04"


def test_a_shadowed_template_asked_by_name_is_refused_naming_the_winner() -> None:
    with pytest.raises(InvalidRequest) as caught:
        resolve_shape(TIED, memory=None, template="vir04")

    assert caught.value.detail == (
        "template vir04 of Ascend310P is never handed out: vir04_3c has the same "
        "memory (12288 MB) and comes first, so the scheduler creates vir04_3c; "
        "ask for vir04_3c"
    )
    assert resolve_shape(TIED, memory=None, template="vir04_3c").template == "vir04_3c"


def test_shadowed_templates_are_not_shapes_a_request_can_take() -> None:
    assert [s.template for s in all_shapes(TIED)] == ["vir01", "vir04_3c", None]


def test_a_template_of_memory_allocatable_turns_a_whole_card_into_it() -> None:
    full = TemplateShape("vir08", 21527, 8, 7)
    rules = dataclasses.replace(P310, templates=(*P310.templates, full))

    for memory in (None, 12289, 21527, 24576):
        assert resolve_shape(rules, memory=memory, template=None) == SliceShape(
            "vir08", 21527, 8, 7
        )
    assert [s.template for s in all_shapes(rules)] == [
        "vir01",
        "vir02",
        "vir04",
        "vir08",
    ]
