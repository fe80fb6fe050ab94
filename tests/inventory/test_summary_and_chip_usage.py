"""The cluster summary and the chip-usage rows, checked against a plain recount.

The summary is added up by the database (grouped SUM and COUNT ... FILTER) and
the chip-usage rows are ``values_list`` tuples: both are compared here with
what a straightforward Python loop over the same rows gives, on a cluster
that has every case the two tell apart.
"""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.renderers import JSONRenderer

from apps.inventory.chipstate import chip_state
from apps.inventory.models import Chip, ChipType, Cluster, Node, Slice
from apps.inventory.selectors import chip_usage, cluster_summary
from apps.live.events import CHIP_COLUMNS, ChipRow

pytestmark = pytest.mark.django_db

TOTALS = (
    "chips",
    "healthy_chips",
    "memory_total",
    "memory_used",
    "slots_total",
    "slots_used",
    "aicore_total",
    "aicore_used",
    "aicpu_total",
    "aicpu_used",
)


def _chip_type(cluster: Cluster, common_word: str) -> None:
    ChipType.objects.create(
        cluster=cluster,
        common_word=common_word,
        chip_name=common_word,
        resource_name=f"huawei.com/{common_word}",
        resource_memory_name=f"huawei.com/{common_word}-memory",
        memory_allocatable=32768,
        memory_capacity=32768,
    )


def _populate(cluster: Cluster, *, seed: int) -> None:
    """Chips of configured and unconfigured types, unhealthy and cordoned ones,
    nodes not ready, partial and whole-card slices, slices of no known type."""
    kinds = [
        # (type, memory, slots, aicore, aicpu): 910B3 is not configured; the
        # 310P reports no AICore or AICPU.
        ("Ascend910B4", 32768, 4, 20, 7),
        ("Ascend310P", 21527, 7, 0, 0),
        ("Ascend910B3", 65536, 8, 20, 7),
    ]
    chips: list[Chip] = []
    for n in range(7):
        node = Node.objects.create(
            cluster=cluster, name=f"{cluster.name}-node-{n}", ready=n % 3 != 1
        )
        cw, memory, slots, aicore, aicpu = kinds[n % 3]
        for index in range(n % 4 + 1):
            k = seed + n * 10 + index
            chips.append(
                Chip.objects.create(
                    cluster=cluster,
                    node=node,
                    common_word=cw,
                    uuid=f"{node.name}-{index}",
                    index=index,
                    memory=memory,
                    slots=slots,
                    aicore=aicore,
                    aicpu=aicpu,
                    healthy=k % 4 != 0,
                    cordoned=k % 5 == 0,
                    memory_used=(k * 4096) % (memory + 1),
                    slots_used=k % (slots + 1),
                    aicore_used=k % (aicore + 1),
                    aicpu_used=k % (aicpu + 1),
                )
            )
    for i, chip in enumerate(chips):
        whole_card = i % 4 == 0
        for j in range(1 if whole_card else i % 3):
            Slice.objects.create(
                cluster=cluster,
                chip=chip,
                chip_uuid=chip.uuid,
                common_word=chip.common_word,
                namespace="team",
                pod_name=f"pod-{i}-{j}",
                node_name=chip.node.name,
                template="" if whole_card else "vir05_1c_8g",
                memory=chip.memory if whole_card else 8192,
            )
    # A slice whose chip is gone, and one of a type with neither chips nor a config.
    for pod, cw in (("orphan", "Ascend910B4"), ("stranger", "Ascend999")):
        Slice.objects.create(
            cluster=cluster,
            chip_uuid="gone",
            common_word=cw,
            namespace="t",
            pod_name=pod,
        )


def _recount(cluster: Cluster) -> dict[str, Any]:
    """The summary, counted one chip and one slice at a time in Python."""
    types = set(
        ChipType.objects.filter(cluster=cluster).values_list("common_word", flat=True)
    )
    chips = list(Chip.objects.filter(cluster=cluster))
    types |= {c.common_word for c in chips}
    per_type: dict[str, dict[str, Any]] = {cw: dict.fromkeys(TOTALS, 0) for cw in types}
    for c in chips:
        t = per_type[c.common_word]
        t["chips"] += 1
        t["healthy_chips"] += 1 if c.healthy else 0
        t["memory_total"] += c.memory
        t["memory_used"] += c.memory_used
        t["slots_total"] += c.slots
        t["slots_used"] += c.slots_used
        t["aicore_total"] += c.aicore
        t["aicore_used"] += c.aicore_used
        t["aicpu_total"] += c.aicpu
        t["aicpu_used"] += c.aicpu_used
    slices: dict[str, int] = {}
    for s in Slice.objects.filter(cluster=cluster):
        slices[s.common_word] = slices.get(s.common_word, 0) + 1
    chip_types = [
        {
            "common_word": cw,
            **per_type[cw],
            "memory_free": per_type[cw]["memory_total"] - per_type[cw]["memory_used"],
            "slots_free": per_type[cw]["slots_total"] - per_type[cw]["slots_used"],
            "slices": slices.get(cw, 0),
        }
        for cw in sorted(types)
    ]
    return {
        "cluster": cluster.name,
        "nodes": Node.objects.filter(cluster=cluster).count(),
        "chips": len(chips),
        "slices": sum(t["slices"] for t in chip_types),
        "sync_state": cluster.sync_state,
        "last_sync_at": cluster.last_sync_at,
        "chip_types": chip_types,
    }


@pytest.fixture
def varied(guide_cluster: Cluster) -> Cluster:
    """The guide's cluster (310P and 910B4 configured) plus a configured type
    with no chip, chips of all kinds, and a second cluster that must not count."""
    _chip_type(guide_cluster, "Ascend910A")
    _populate(guide_cluster, seed=0)
    other = Cluster.objects.create(name="other")
    _chip_type(other, "Ascend910B4")
    _populate(other, seed=3)
    return guide_cluster


def test_summary_equals_a_python_recount(varied):
    summary = cluster_summary(varied)
    expected = _recount(varied)
    assert summary == expected
    # The cases are there: an empty configured type, an unconfigured one with
    # chips, unhealthy chips, a slice of no known type left out of the totals.
    by_type = {t["common_word"]: t for t in summary["chip_types"]}
    assert list(by_type) == ["Ascend310P", "Ascend910A", "Ascend910B3", "Ascend910B4"]
    assert by_type["Ascend910A"]["chips"] == 0
    assert by_type["Ascend910B3"]["chips"] > 0
    assert any(t["healthy_chips"] < t["chips"] for t in summary["chip_types"])
    assert summary["slices"] == Slice.objects.filter(cluster=varied).count() - 1
    # Same types too: ints (not Decimal, not bool), in the same key order.
    for got, want in zip(summary["chip_types"], expected["chip_types"], strict=True):
        assert list(got) == list(want)
        assert all(type(v) is int for k, v in got.items() if k != "common_word")
    assert type(summary["nodes"]) is int


def test_summary_of_a_cluster_without_chips_is_all_zeros(guide_cluster):
    summary = cluster_summary(guide_cluster)
    assert summary == _recount(guide_cluster)
    assert [t["chips"] for t in summary["chip_types"]] == [0, 0]


def test_summary_api_answers_the_recount(viewer_client, varied):
    answer = viewer_client.get(f"/api/clusters/{varied.pk}/summary/").json()
    expected = _recount(varied)
    assert answer["chip_types"] == expected["chip_types"]
    assert (answer["nodes"], answer["chips"], answer["slices"]) == (
        expected["nodes"],
        expected["chips"],
        expected["slices"],
    )


def test_chip_usage_rows_are_the_chips_in_column_order(varied):
    chips = Chip.objects.filter(cluster=varied).select_related("node")
    chips = sorted(chips, key=lambda c: (c.node.name, c.common_word, c.index))
    expected = [
        ChipRow(
            c.id,
            c.node.name,
            c.common_word,
            c.index,
            c.uuid,
            c.healthy,
            c.cordoned,
            c.slots_used,
            c.slots,
            c.memory_used,
            c.memory,
            c.aicore_used,
            c.aicore,
            c.aicpu_used,
            c.aicpu,
            chip_state(c).value,
        )
        for c in chips
    ]
    usage = chip_usage(varied)
    assert usage["columns"] == list(CHIP_COLUMNS)
    assert usage["rows"] == expected
    assert all(type(row[5]) is bool and type(row[6]) is bool for row in usage["rows"])


def test_chip_usage_api_bytes_are_those_of_the_chip_rows(viewer_client, varied):
    """The plain tuples render exactly as ChipRows did (the answer's bytes)."""
    usage = chip_usage(varied)
    as_chip_rows = {**usage, "rows": [ChipRow._make(r) for r in usage["rows"]]}
    answer = viewer_client.get(f"/api/clusters/{varied.pk}/chip-usage/")
    assert answer.status_code == 200
    assert answer.content == JSONRenderer().render(as_chip_rows)
    assert len(answer.json()["rows"]) == Chip.objects.filter(cluster=varied).count()
