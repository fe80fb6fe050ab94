"""Room on chips is room for a template, in all four dimensions (issue 15).

The two cases from the issue: a chip with 23 MB free and all its AICPU taken
has no room at all; 16 GiB free in 4 GiB pieces is stranded for a 12 GiB
template although the smallest template still fits everywhere.
"""

from __future__ import annotations

import pytest

from apps.inventory.hami.deviceconfig import TemplateSpec
from apps.inventory.models import Chip, Node
from apps.inventory.room import ChipLoad, fitting_templates, slices_that_fit, type_room

VIR05 = TemplateSpec("vir05_1c_8g", 8192, ai_core=5, ai_cpu=1)
VIR10 = TemplateSpec("vir10_3c_16g", 16384, ai_core=10, ai_cpu=3)
SMALL = TemplateSpec("vir04_3g", 4096, ai_core=2, ai_cpu=1)
LARGE = TemplateSpec("vir12_12g", 12288, ai_core=4, ai_cpu=2)


def load(**overrides: object) -> ChipLoad:
    """A 910B4 chip (32 GiB, 20 AICore, 7 AICPU, 4 slots), empty unless told."""
    values: dict[str, object] = {
        "common_word": "Ascend910B4",
        "memory": 32768,
        "memory_used": 0,
        "slots": 4,
        "slots_used": 0,
        "aicore": 20,
        "aicore_used": 0,
        "aicpu": 7,
        "aicpu_used": 0,
    }
    values.update(overrides)
    return ChipLoad(**values)  # type: ignore[arg-type]


def test_every_dimension_limits_how_many_slices_fit():
    assert slices_that_fit(load(), VIR05) == 4  # slots: 4; memory would allow 4
    assert slices_that_fit(load(aicore_used=12), VIR05) == 1  # 8 AICore left
    assert slices_that_fit(load(aicpu_used=7), VIR05) == 0  # no AICPU left
    assert slices_that_fit(load(slots_used=4), VIR05) == 0
    assert slices_that_fit(load(memory_used=32768 - 8191), VIR05) == 0
    assert slices_that_fit(load(eligible=False), VIR05) == 0


def test_a_chip_that_does_not_report_aicpu_is_not_limited_by_it():
    assert slices_that_fit(load(aicpu=0, aicpu_used=0), VIR10) == 2


def test_23_mb_free_and_no_aicpu_left_is_no_room():
    chip = load(memory_used=32768 - 23, aicpu_used=7, slots_used=3)
    assert fitting_templates(chip, [VIR05, VIR10]) == []


def test_fitting_templates_are_listed_smallest_first():
    chip = load(memory_used=32768 - 12288)  # 12 GiB free
    assert [t.name for t in fitting_templates(chip, [VIR10, VIR05])] == ["vir05_1c_8g"]


def test_memory_in_small_pieces_is_stranded_for_a_large_template():
    # Four chips with 4 GiB free each: 16 GiB in all, no 12 GiB slice fits.
    chips = [load(memory_used=32768 - 4096, aicore_used=0) for _ in range(4)]
    room = type_room("Ascend910B4", [SMALL, LARGE], chips)
    small, large = room.templates
    assert room.free_memory == 16384
    assert (small.name, small.slices_that_fit, small.stranded_memory) == (
        "vir04_3g",
        4,
        0,
    )
    assert (large.name, large.slices_that_fit, large.chips_with_room) == (
        "vir12_12g",
        0,
        0,
    )
    assert large.stranded_memory == 16384
    assert room.largest_template == "vir04_3g"
    # Against the smallest template nothing is stranded: that is why the old
    # measure showed all green while a 12 GiB pod waited.
    assert room.stranded_memory == 0


def test_ineligible_chips_count_neither_as_room_nor_as_stranded():
    room = type_room("Ascend910B4", [VIR05], [load(eligible=False), load()])
    assert (room.chips, room.eligible_chips, room.free_memory) == (2, 1, 32768)
    assert room.templates[0].slices_that_fit == 4


@pytest.fixture
def chips(guide_cluster):
    """Three 910B4 chips of the guide's cluster: empty, fragmented, out of AICPU."""
    node = Node.objects.create(cluster=guide_cluster, name="node-a")
    common = {"cluster": guide_cluster, "node": node, "common_word": "Ascend910B4"}
    common |= {"slots": 4, "memory": 32768, "aicore": 20, "aicpu": 7, "healthy": True}
    return {
        "empty": Chip.objects.create(uuid="u-empty", index=0, **common),
        "fragmented": Chip.objects.create(
            uuid="u-frag", index=1, memory_used=32768 - 12288, slots_used=2, **common
        ),
        "no-aicpu": Chip.objects.create(
            uuid="u-cpu",
            index=2,
            memory_used=32768 - 23,
            aicpu_used=7,
            slots_used=3,
            **common,
        ),
    }


def test_the_chip_api_says_which_templates_fit(viewer_client, chips):
    answer = viewer_client.get(
        "/api/chips/", {"chip_type": "Ascend910B4", "page_size": 10}
    )
    assert answer.status_code == 200
    by_uuid = {c["uuid"]: c for c in answer.json()["results"]}
    assert by_uuid["u-empty"]["fits"] == ["vir05_1c_8g", "vir10_3c_16g"]
    assert by_uuid["u-empty"]["largest_template"] == "vir10_3c_16g"
    assert by_uuid["u-frag"]["fits"] == ["vir05_1c_8g"]
    assert by_uuid["u-cpu"]["fits"] == []
    assert by_uuid["u-cpu"]["largest_template"] is None


def test_chips_filtered_by_room_for_a_template(viewer_client, chips):
    def uuids(template: str) -> set[str]:
        answer = viewer_client.get("/api/chips/", {"room_for": template})
        assert answer.status_code == 200, answer.json()
        return {c["uuid"] for c in answer.json()["results"]}

    assert uuids("vir05_1c_8g") == {"u-empty", "u-frag"}
    assert uuids("vir10_3c_16g") == {"u-empty"}
    Chip.objects.filter(uuid="u-empty").update(cordoned=True)
    assert uuids("vir10_3c_16g") == set()


def test_room_for_an_unknown_template_is_a_400_naming_the_field(viewer_client, chips):
    answer = viewer_client.get("/api/chips/", {"room_for": "vir99"})
    assert answer.status_code == 400
    assert "room_for" in str(answer.json())


def test_fragmentation_reports_each_template(viewer_client, chips, guide_cluster):
    answer = viewer_client.get(f"/api/clusters/{guide_cluster.pk}/fragmentation/")
    assert answer.status_code == 200
    (b4,) = [t for t in answer.json() if t["common_word"] == "Ascend910B4"]
    assert b4["largest_template"] == "vir10_3c_16g"
    assert b4["free_memory"] == 32768 + 12288 + 23
    rooms = {t["name"]: t for t in b4["templates"]}
    assert rooms["vir05_1c_8g"]["slices_that_fit"] == 4 + 1
    assert rooms["vir10_3c_16g"]["slices_that_fit"] == 2
    # 16 GiB slices strand the fragmented chip's 12 GiB and the 23 MB.
    assert rooms["vir10_3c_16g"]["stranded_memory"] == 12288 + 23
    assert b4["stranded_memory"] == 23  # against the smallest template
