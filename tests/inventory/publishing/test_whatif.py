"""What-if before publishing: slots, fits, running slices that would break, over-commit."""

from __future__ import annotations

import pytest

from apps.inventory.models import Chip, ChipType, Template

pytestmark = pytest.mark.django_db


def _what_if(client, url) -> dict:
    answer = client.get(url("what-if"))
    assert answer.status_code == 200, answer.json()
    return answer.json()


def _chip_type(body: dict, word: str) -> dict:
    return next(c for c in body["chip_types"] if c["common_word"] == word)


def _template_id(cluster, name: str) -> int:
    return Template.objects.get(chip_type__cluster=cluster, name=name).pk


def test_nothing_edited_changes_nothing(cluster, viewer_client, url):
    body = _what_if(viewer_client, url)
    assert (body["baseline_version"], body["valid"]) == (1, True)
    p310 = _chip_type(body, "Ascend310P")
    assert p310["chip_type_change"] == "unchanged"
    assert (p310["slots_per_chip"], p310["slots_per_chip_before"]) == (7, 7)
    assert {t["name"]: t["fit_alone"] for t in p310["templates"]} == {
        "vir01": 7,
        "vir02": 3,
        "vir04": 1,
    }
    assert body["invalid_slices"] == []
    assert body["overbooked_chips"] == []


def test_removed_template_breaks_its_slices_and_changes_slots(
    cluster, operator_client, viewer_client, url
):
    # given vir01 deleted in the portal (not published)
    assert (
        operator_client.delete(
            f"/api/templates/{_template_id(cluster, 'vir01')}/"
        ).status_code
        == 204
    )
    # one chip already holds more slices than the new slot count allows
    Chip.objects.filter(cluster=cluster, node__name="npu-node-310p-01", index=2).update(
        slots_used=5
    )
    body = _what_if(viewer_client, url)
    p310 = _chip_type(body, "Ascend310P")
    # then slots drop from 7 to 3 (21527 // 6144), and vir01 is listed as removed
    assert (p310["slots_per_chip"], p310["slots_per_chip_before"]) == (3, 7)
    assert p310["removed_templates"] == ["vir01"]
    assert {t["name"]: t["fit_alone"] for t in p310["templates"]} == {
        "vir02": 3,
        "vir04": 1,
    }
    # and the running vir01 slice is named with its pod, node and chip
    [broken] = body["invalid_slices"]
    assert (
        broken["pod_name"],
        broken["namespace"],
        broken["node_name"],
        broken["chip_index"],
    ) == (
        "npu-pod-310p",
        "default",
        "npu-node-310p-01",
        0,
    )
    assert "vir01 is removed" in broken["reason"]
    [chip] = body["overbooked_chips"]
    assert (chip["chip_index"], chip["slots_used"], chip["slots_per_chip"]) == (2, 5, 3)


def test_resized_template_and_renamed_chip_type(
    cluster, operator_client, viewer_client, url
):
    # given vir05_1c_8g resized
    answer = operator_client.patch(
        f"/api/templates/{_template_id(cluster, 'vir05_1c_8g')}/", {"memory": 4096}
    )
    assert answer.status_code == 200, answer.json()
    body = _what_if(viewer_client, url)
    b4 = _chip_type(body, "Ascend910B4")
    vir05 = next(t for t in b4["templates"] if t["name"] == "vir05_1c_8g")
    assert (vir05["template_change"], vir05["memory_before"], vir05["fit_alone"]) == (
        "resized",
        8192,
        8,
    )
    [broken] = body["invalid_slices"]
    assert broken["pod_name"] == "npu-pod-910b"
    assert broken["chip_index"] == 6
    assert "resized from 8192 MB to 4096 MB" in broken["reason"]
    # when the chip type's commonWord is renamed as well
    chip_type = ChipType.objects.get(cluster=cluster, common_word="Ascend910B4")
    answer = operator_client.patch(
        f"/api/chip-types/{chip_type.pk}/", {"common_word": "Ascend910B4x"}
    )
    assert answer.status_code == 200, answer.json()
    body = _what_if(viewer_client, url)
    # then the slice is broken by the rename, and the old word is listed as renamed
    assert body["removed_chip_types"] == [
        {"common_word": "Ascend910B4", "renamed_to": "Ascend910B4x"}
    ]
    renamed = _chip_type(body, "Ascend910B4x")
    assert (renamed["chip_type_change"], renamed["renamed_from"]) == (
        "renamed",
        "Ascend910B4",
    )
    [broken] = body["invalid_slices"]
    assert "renamed to Ascend910B4x" in broken["reason"]


def test_aicpu_overcommit_is_warned(cluster, operator_client, viewer_client, url):
    chip_type = ChipType.objects.get(cluster=cluster, common_word="Ascend310P")
    answer = operator_client.patch(f"/api/chip-types/{chip_type.pk}/", {"ai_cpu": 5})
    assert answer.status_code == 200, answer.json()
    p310 = _chip_type(_what_if(viewer_client, url), "Ascend310P")
    assert len(p310["overcommit"]) == 1
    assert "use 7 AICPU, more than the chip's 5" in p310["overcommit"][0]
