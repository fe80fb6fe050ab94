"""HAMi's request-to-template rule (trimMemory)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apps.inventory.hami.deviceconfig import (
    ChipTypeSpec,
    TemplateSpec,
    parse_device_config,
)
from apps.inventory.hami.template_rule import (
    FitKind,
    FitResult,
    Scheduler,
    fit_template,
)

FIXTURES = Path(__file__).resolve().parents[3] / "tests" / "fixtures"


def _p310() -> ChipTypeSpec:
    text = (FIXTURES / "device-config-list.yaml").read_text()
    return parse_device_config(text).chip_types()[1]


@pytest.mark.parametrize(
    ("memory", "kind", "template", "booked"),
    [
        (3072, FitKind.TEMPLATE, "vir01", 3072),
        (1, FitKind.TEMPLATE, "vir01", 3072),
        (0, FitKind.TEMPLATE, "vir01", 3072),
        (3073, FitKind.TEMPLATE, "vir02", 6144),
        (5000, FitKind.TEMPLATE, "vir02", 6144),
        (12288, FitKind.TEMPLATE, "vir04", 12288),
        (12289, FitKind.WHOLE_CARD, None, 21527),
        (24576, FitKind.WHOLE_CARD, None, 21527),
        (None, FitKind.WHOLE_CARD, None, 21527),
        (24577, FitKind.INVALID, None, 0),
        (-1, FitKind.INVALID, None, 0),
    ],
)
def test_310p_fixture(memory, kind, template, booked):
    result = fit_template(_p310(), memory)
    assert (result.kind, result.template, result.memory) == (kind, template, booked)
    assert result.reason.startswith("Ascend310P: ")


def test_invalid_reason_names_the_capacity():
    result = fit_template(_p310(), 30000)
    assert result == FitResult(
        FitKind.INVALID,
        None,
        0,
        "Ascend310P: 30000 MB is more than memoryCapacity 24576 MB",
    )


def test_template_order_in_the_file_does_not_matter():
    chip = _p310()
    shuffled = dataclasses.replace(chip, templates=tuple(reversed(chip.templates)))
    for memory in (None, 0, 3072, 3073, 6145, 12289, 30000):
        assert fit_template(shuffled, memory) == fit_template(chip, memory)


def test_equal_memories_keep_file_order():
    chip = dataclasses.replace(
        _p310(),
        templates=(TemplateSpec("vir04_3c", 12288), TemplateSpec("vir04", 12288)),
    )
    assert fit_template(chip, 10000).template == "vir04_3c"


def test_chip_type_without_templates_gives_whole_cards():
    chip = dataclasses.replace(_p310(), templates=())
    assert fit_template(chip, 1).kind is FitKind.WHOLE_CARD
    assert fit_template(chip, 0).memory == 21527


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(
    memories=st.lists(
        st.one_of(st.integers(1, 70000), st.just(21527)), min_size=1, max_size=6
    ),
    capacity=st.integers(1, 80000),
    request=st.integers(0, 90000),
)
def test_smallest_template_that_is_large_enough(memories, capacity, request):
    templates = tuple(TemplateSpec(f"t{i}", m) for i, m in enumerate(memories))
    chip = dataclasses.replace(_p310(), templates=templates, memory_capacity=capacity)
    result = fit_template(chip, request)
    large_enough = [m for m in memories if m >= request]
    if large_enough:
        assert result.kind is FitKind.TEMPLATE
        assert result.memory == min(large_enough) >= request
        assert {t.name: t.memory for t in templates}[result.template] == result.memory
    elif request <= capacity and any(m >= 21527 for m in memories):
        # A whole card (memoryAllocatable) becomes the first template, by
        # memory, that holds it: one of at least memoryAllocatable (hypothesis
        # drew [21528] with a request of 21529).
        holds_a_card = min(m for m in memories if m >= 21527)
        assert (result.kind, result.memory) == (FitKind.TEMPLATE, 21527)
        assert result.template == f"t{memories.index(holds_a_card)}"
    elif request <= capacity:
        assert (result.kind, result.memory) == (FitKind.WHOLE_CARD, 21527)
    else:
        assert (result.kind, result.memory, result.template) == (
            FitKind.INVALID,
            0,
            None,
        )


def _with_full_template() -> ChipTypeSpec:
    chip = _p310()
    return dataclasses.replace(
        chip, templates=(*chip.templates, TemplateSpec("vir08", 21527))
    )


@pytest.mark.parametrize("scheduler", list(Scheduler))
def test_a_template_of_memory_allocatable_takes_whole_card_requests(scheduler):
    for memory in (None, 12289, 24576):
        result = fit_template(_with_full_template(), memory, scheduler=scheduler)
        assert (result.kind, result.template, result.memory) == (
            FitKind.TEMPLATE,
            "vir08",
            21527,
        )
    assert "which is template vir08" in fit_template(_with_full_template(), None).reason


def test_zero_mb_is_the_smallest_template_for_hami_and_a_whole_card_for_volcano():
    hami = fit_template(_p310(), 0, scheduler=Scheduler.HAMI)
    volcano = fit_template(_p310(), 0, scheduler=Scheduler.VOLCANO)
    assert (hami.kind, hami.template) == (FitKind.TEMPLATE, "vir01")
    assert (volcano.kind, volcano.memory) == (FitKind.WHOLE_CARD, 21527)
    full = fit_template(_with_full_template(), 0, scheduler=Scheduler.VOLCANO)
    assert (full.template, full.memory) == ("vir08", 21527)


def test_volcano_books_nothing_over_capacity_and_creates_the_smallest_template():
    result = fit_template(_p310(), 30000, scheduler=Scheduler.VOLCANO)
    assert result == FitResult(
        FitKind.TEMPLATE,
        "vir01",
        0,
        "Ascend310P: 30000 MB is more than memoryCapacity 24576 MB: Volcano books "
        "0 MB and creates the smallest template vir01",
    )
    bare = dataclasses.replace(_p310(), templates=())
    assert fit_template(bare, 30000, scheduler=Scheduler.VOLCANO).memory == 0
    assert fit_template(_p310(), 30000).kind is FitKind.INVALID


@pytest.mark.parametrize(
    ("memory", "kind", "template", "booked", "wrapped"),
    [
        (2**34, FitKind.WHOLE_CARD, None, 21527, 0),  # 17179869184: a whole card
        (2**32 + 3072, FitKind.TEMPLATE, "vir01", 3072, 3072),
        (2**32 + 5000, FitKind.TEMPLATE, "vir02", 6144, 5000),
        (2**31, FitKind.INVALID, None, 0, -(2**31)),
    ],
)
def test_volcano_wraps_the_memory_limit_to_int32(
    memory, kind, template, booked, wrapped
):
    """volcano-sh/volcano v1.15.1, pkg/scheduler/api/devices/util.go,
    ``ExtractResourceRequest``: ``memnum = int32(memnums)``; 0 then reads as
    no memory asked (``ResourceReqs``: a whole card)."""
    result = fit_template(_p310(), memory, scheduler=Scheduler.VOLCANO)
    assert (result.kind, result.template, result.memory) == (kind, template, booked)
    assert result.reason.startswith(
        f"Ascend310P: {memory} MB wraps to {wrapped} MB in Volcano's int32"
    )
    # HAMi reads the int64: all of these are over memoryCapacity
    assert fit_template(_p310(), memory).kind is FitKind.INVALID


def test_more_than_twelve_tied_templates_follow_gos_order_not_the_file():
    # 13 templates: Go's sort.Slice is no longer an insertion sort; in this
    # file order it puts the second 3072 MB template first (recorded from Go).
    names = [f"t{i}" for i in range(13)]
    memories = [6144, 3072, 3072, *[6144] * 10]
    chip = dataclasses.replace(
        _p310(),
        templates=tuple(
            TemplateSpec(n, m) for n, m in zip(names, memories, strict=True)
        ),
    )
    assert fit_template(chip, 1).template == "t2"
    assert (
        fit_template(
            dataclasses.replace(chip, templates=chip.templates[:12]), 1
        ).template
        == "t1"
    )
