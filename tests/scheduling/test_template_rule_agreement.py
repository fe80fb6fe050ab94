"""Every caller of the template rule picks the same template (property test).

The allocator (from the database rows, as a pass sees them), the fit answer
(``template_fit``) and simcluster's binder (from the device config the portal
would publish, reading a pod as Volcano and as HAMi) must agree, for any chip
type, including templates of equal memory, more than 12 templates, and a
template of memoryAllocatable MB. The pod the portal sends for what the
allocator booked must be read back as that same template by both schedulers.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apps.inventory.deviceconfig.selectors import deviceconfig_render, template_fit
from apps.inventory.hami.template_rule import FitKind
from apps.inventory.models import ChipType, Template
from apps.scheduling import allocator as alloc
from apps.scheduling.pods import vnpu_resources
from apps.scheduling.snapshot import rules_for
from simcluster import hami
from simcluster.controllers.placement import device_requests, request_fit

pytestmark = pytest.mark.django_db

NAMES = [f"vir{i:02d}" for i in range(16)]


@st.composite
def chip_types(draw: st.DrawFn) -> dict[str, Any]:
    allocatable = draw(st.integers(4096, 65536))
    capacity = allocatable + draw(st.sampled_from([0, 1, 3049, 20000]))
    # Few distinct memories, so ties are common; allocatable itself included.
    drawn = draw(st.lists(st.integers(1, allocatable), min_size=1, max_size=4))
    pool = [*drawn, allocatable]
    memories = draw(st.lists(st.sampled_from(pool), max_size=15))
    return {
        "allocatable": allocatable,
        "capacity": capacity,
        "templates": [
            (NAMES[i], m, draw(st.integers(0, 8)), draw(st.integers(0, 7)))
            for i, m in enumerate(memories)
        ],
    }


def _requests(chip: dict[str, Any]) -> st.SearchStrategy[int | None]:
    edges = {0, 1, chip["allocatable"], chip["capacity"], chip["capacity"] + 1}
    for _, memory, _, _ in chip["templates"]:
        edges |= {memory - 1, memory, memory + 1}
    return st.one_of(
        st.none(),
        st.sampled_from(sorted(edges)),
        st.integers(0, chip["capacity"] + 4096),
    )


def _store(cluster, chip: dict[str, Any]) -> None:
    chip_type = ChipType.objects.get(cluster=cluster, common_word="Ascend310P")
    chip_type.memory_allocatable = chip["allocatable"]
    chip_type.memory_capacity = chip["capacity"]
    chip_type.save()
    chip_type.templates.all().delete()
    Template.objects.bulk_create(
        Template(
            chip_type=chip_type,
            name=name,
            memory=memory,
            ai_core=core,
            ai_cpu=cpu,
            position=position,
        )
        for position, (name, memory, core, cpu) in enumerate(chip["templates"])
    )


def _pod(chip_type: hami.ChipTypeSpec, memory: int | None) -> dict[str, Any]:
    limits = vnpu_resources(
        chip_type.resource_name, chip_type.resource_memory_name, memory
    )
    return {
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "resources": {"limits": limits}}]},
    }


def _simcluster(chip_type: hami.ChipTypeSpec, memory: int | None, scheduler: str):
    (request,) = device_requests(_pod(chip_type, memory), [chip_type])
    return request_fit(request, scheduler)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_allocator_fit_and_simcluster_pick_the_same_template(guide_cluster, data):
    chip = data.draw(chip_types())
    _store(guide_cluster, chip)
    rules = rules_for(guide_cluster)["Ascend310P"]
    (published,) = [
        c
        for c in hami.chip_types_from_text(deviceconfig_render(guide_cluster))
        if c.common_word == "Ascend310P"
    ]
    for memory in data.draw(st.lists(_requests(chip), min_size=1, max_size=8)):
        fit = template_fit(guide_cluster, common_word="Ascend310P", memory=memory)
        simulated = _simcluster(published, memory, "hami-scheduler")
        assert simulated == fit, memory
        placed = alloc.allocate(
            [alloc.Request("r", "Ascend310P", memory, None, 0, 0.0, "q")],
            [
                alloc.Chip(
                    "c", "n", "Ascend310P", chip["allocatable"], 64, 8, 7, 0, 0, 0, 0
                )
            ],
            [rules],
            policy=alloc.Policy(alloc.Strategy.BINPACK),
        )
        outcome = placed.placements[0] if placed.placements else placed.waiting[0]
        if fit.kind is FitKind.INVALID:
            assert isinstance(outcome, alloc.Waiting), memory
            assert outcome.code is alloc.WaitReason.INVALID
            continue
        assert isinstance(outcome, alloc.Placement), (memory, outcome)
        assert (outcome.template, outcome.memory) == (fit.template, fit.memory)
        # The pod the portal sends for that booking (admission.py): the
        # template's memory, or no -memory for a whole card.
        sent = outcome.memory if outcome.template else None
        for scheduler in ("volcano", "hami-scheduler"):
            read = _simcluster(published, sent, scheduler)
            assert (read.template, read.memory) == (outcome.template, outcome.memory)
