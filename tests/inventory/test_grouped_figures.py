"""Fragmentation and the registrations check count chips grouped in the database.

At 80,000 chips both used to fetch every chip into Python; now the database
groups identical chips and the figures are weighted sums. These tests compute
the old way, chip by chip, on a varied fixture (two configured types and one
that is not, unhealthy, cordoned, partly used and whole-card chips, identical
chips that group together, chips not reporting AICPU, stale registrations),
and require the same answers.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from apps.inventory.deviceconfig.health import (
    _registration_checks,
    registrations_judged,
)
from apps.inventory.models import Chip, Cluster, Node
from apps.inventory.room import ChipLoad, type_room
from apps.inventory.selectors import (
    ROOM_FIELDS,
    chip_loads,
    fragmentation,
    templates_by_type,
)

B4 = {"common_word": "Ascend910B4", "memory": 32768, "aicore": 20, "aicpu": 7}
P3 = {"common_word": "Ascend310P", "memory": 21527, "aicore": 8, "aicpu": 0}


def _chips(cluster: Cluster) -> None:
    nodes = [Node.objects.create(cluster=cluster, name=f"node-{i}") for i in range(3)]
    b4_slots = 4
    rows: list[dict[str, Any]] = [
        # Identical empty chips (one group of three), on different nodes.
        *({**B4, "slots": b4_slots} for _ in range(3)),
        # Partly used: one 8 GiB slice; and the same load twice more.
        *(
            {**B4, "slots": b4_slots, "slots_used": 1, "memory_used": 8192}
            | {"aicore_used": 5, "aicpu_used": 1}
            for _ in range(3)
        ),
        # 12 GiB free, a 16 GiB template does not fit: stranded for it.
        {**B4, "slots": b4_slots, "slots_used": 2, "memory_used": 20480}
        | {"aicore_used": 10, "aicpu_used": 2},
        # 23 MB free, all AICPU taken: stranded against the smallest template.
        {**B4, "slots": b4_slots, "slots_used": 3, "memory_used": 32768 - 23}
        | {"aicore_used": 15, "aicpu_used": 7},
        # Whole-card slices: everything used.
        *(
            {**B4, "slots": b4_slots, "slots_used": 1, "memory_used": 32768}
            | {"aicore_used": 20, "aicpu_used": 7}
            for _ in range(2)
        ),
        # Unhealthy and cordoned, with free memory: neither room nor stranded.
        {**B4, "slots": b4_slots, "healthy": False},
        {**B4, "slots": b4_slots, "cordoned": True, "memory_used": 4096},
        {**B4, "slots": b4_slots, "healthy": False, "cordoned": True},
        # A stale registration: other slots than the config gives.
        {**B4, "slots": 7},
        # 310P, not reporting AICPU; empty, partly used, whole card, unhealthy.
        *({**P3, "slots": 7} for _ in range(2)),
        {**P3, "slots": 7, "slots_used": 2, "memory_used": 6144, "aicore_used": 3},
        {**P3, "slots": 7, "slots_used": 1, "memory_used": 21527, "aicore_used": 8},
        {**P3, "slots": 7, "healthy": False, "memory_used": 3072, "slots_used": 1},
        # A type the device config does not define, no templates.
        *(
            {"common_word": "Ascend910C", "memory": 65536, "aicore": 24}
            | {"aicpu": 6, "slots": 1, "memory_used": 1024 * i}
            for i in range(3)
        ),
    ]
    for i, row in enumerate(rows):
        Chip.objects.create(
            cluster=cluster,
            node=nodes[i % 3],
            uuid=f"u-{i}",
            index=i,
            **{"healthy": True, **row},
        )


def _fragmentation_chip_by_chip(cluster: Cluster) -> list[dict[str, Any]]:
    """The computation before grouping: every chip as a model, then type_room."""
    templates = templates_by_type([cluster.pk])
    by_type: dict[str, list[ChipLoad]] = {}
    for load in chip_loads(Chip.objects.filter(cluster=cluster).only(*ROOM_FIELDS)):
        by_type.setdefault(load.common_word, []).append(load)
    return [
        dataclasses.asdict(type_room(cw, templates.get((cluster.pk, cw), []), loads))
        for cw, loads in sorted(by_type.items())
    ]


def _registrations_chip_by_chip(cluster: Cluster) -> dict[str, Any]:
    """The registrations check with its chips counted one by one, not grouped
    in the database; judged by the same rules."""
    registered: dict[str, dict[tuple[int, int], int]] = {}
    for word, slots, memory in Chip.objects.filter(cluster=cluster).values_list(
        "common_word", "slots", "memory"
    ):
        counts = registered.setdefault(word, {})
        counts[(slots, memory)] = counts.get((slots, memory), 0) + 1
    return registrations_judged(cluster, registered)


@pytest.fixture
def cluster(guide_cluster: Cluster) -> Cluster:
    _chips(guide_cluster)
    return guide_cluster


def test_fixture_is_varied_and_groups(cluster):
    assert Chip.objects.filter(cluster=cluster).count() == 22
    distinct = (
        Chip.objects.filter(cluster=cluster).order_by().values(*ROOM_FIELDS).distinct()
    )
    assert distinct.count() < 22  # some chips share a load, so grouping matters


def test_fragmentation_equals_the_chip_by_chip_computation(cluster):
    grouped = [dataclasses.asdict(r) for r in fragmentation(cluster)]
    assert grouped == _fragmentation_chip_by_chip(cluster)
    by_type = {r["common_word"]: r for r in grouped}
    assert set(by_type) == {"Ascend310P", "Ascend910B4", "Ascend910C"}
    b4 = by_type["Ascend910B4"]
    assert (b4["chips"], b4["eligible_chips"]) == (14, 11)
    assert b4["stranded_memory"] > 0
    assert b4["templates"]


def test_fragmentation_api_equals_the_chip_by_chip_computation(viewer_client, cluster):
    answer = viewer_client.get(f"/api/clusters/{cluster.pk}/fragmentation/")
    assert answer.status_code == 200
    expected = _fragmentation_chip_by_chip(cluster)
    assert [r["common_word"] for r in answer.json()] == [
        r["common_word"] for r in expected
    ]
    for got, want in zip(answer.json(), expected, strict=True):
        for key in ("chips", "eligible_chips", "free_memory", "stranded_memory"):
            assert got[key] == want[key], key
        assert got["largest_template"] == want["largest_template"]
        assert [(t["name"], t["slices_that_fit"]) for t in got["templates"]] == [
            (t["name"], t["slices_that_fit"]) for t in want["templates"]
        ]


def test_registrations_equal_the_chip_by_chip_check(cluster):
    # Unknown type (fail) and stale 910B4 registration (warn).
    check = _registration_checks(cluster)
    assert check == _registrations_chip_by_chip(cluster)
    assert check["check_status"] == "fail"
    assert "3 chips register as Ascend910C" in check["message"]
    assert "Ascend910B4 chips advertise other slots" in check["message"]
    # Without those: the 910B4 chips agree with the config, or all types do.
    Chip.objects.filter(cluster=cluster, common_word="Ascend910C").delete()
    Chip.objects.filter(cluster=cluster, slots=7, common_word="Ascend910B4").delete()
    check = _registration_checks(cluster)
    assert check == _registrations_chip_by_chip(cluster)
    assert check["check_status"] == "ok"
    # A type with no chips at all.
    Chip.objects.filter(cluster=cluster, common_word="Ascend310P").delete()
    check = _registration_checks(cluster)
    assert check == _registrations_chip_by_chip(cluster)
    assert "Ascend310P (chipName 310P3) has no registered chips" in check["message"]
