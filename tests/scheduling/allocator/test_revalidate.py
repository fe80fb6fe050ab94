"""A pending proposal is checked against the cluster as it is now (pure)."""

from __future__ import annotations

import dataclasses

from apps.scheduling.allocator import Chip, RunningSlice, SliceShape, proposal_problem

CHIP = Chip(
    id="7",
    node="n1",
    common_word="Ascend310P",
    memory=21527,
    slots=7,
    ai_core=8,
    ai_cpu=7,
    memory_used=21504,
    slots_used=3,
    ai_core_used=7,
    ai_cpu_used=7,
)
VIR04 = SliceShape(template="vir04", memory=12288, ai_core=4, ai_cpu=4)


def running(
    pod: str, memory: int, core: int, cpu: int, chip: str = "7"
) -> RunningSlice:
    return RunningSlice(
        id=f"s-{pod}",
        chip_id=chip,
        memory=memory,
        ai_core=core,
        ai_cpu=cpu,
        priority=0,
        started_at_s=0.0,
        queue="",
        namespace="default",
        pod=pod,
    )


SLICES = [
    running("big", 12288, 4, 4),
    running("mid", 6144, 2, 2),
    running("small", 3072, 1, 1),
]


def test_a_plan_that_still_works_has_no_problem():
    assert proposal_problem(CHIP, SLICES, {("default", "big")}, VIR04) is None


def test_each_way_a_plan_stops_working_is_named():
    big = {("default", "big")}
    assert (
        proposal_problem(None, SLICES, big, VIR04)
        == "its chip is gone from the cluster"
    )
    sick = dataclasses.replace(CHIP, healthy=False)
    assert "unhealthy" in proposal_problem(sick, SLICES, big, VIR04)
    cordoned = dataclasses.replace(CHIP, cordoned=True)
    assert "cordoned" in proposal_problem(cordoned, SLICES, big, VIR04)
    moved = [running("big", 12288, 4, 4, chip="8"), *SLICES[1:]]
    assert "default/big no longer runs" in proposal_problem(CHIP, moved, big, VIR04)
    # evicting the small one alone never made room for a vir04
    assert "no longer frees enough" in proposal_problem(
        CHIP, SLICES, {("default", "small")}, VIR04
    )
