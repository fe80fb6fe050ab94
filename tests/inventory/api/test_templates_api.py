"""Chip types and templates through the API: validation on the field, roles, audit."""

from __future__ import annotations

import pytest

from apps.audit.models import AuditEvent
from apps.inventory.models import ChipType, Template

pytestmark = pytest.mark.django_db


def _template(cluster, cw: str, name: str) -> Template:
    return Template.objects.get(
        chip_type__cluster=cluster, chip_type__common_word=cw, name=name
    )


def test_list_templates_of_a_cluster(viewer_client, guide_cluster):
    response = viewer_client.get(
        "/api/templates/", {"cluster": guide_cluster.pk, "common_word": "Ascend310P"}
    )
    assert response.status_code == 200
    names = [t["name"] for t in response.json()["results"]]
    assert names == ["vir01", "vir02", "vir04"]


def test_operator_edits_a_template_and_it_is_audited(operator_client, guide_cluster):
    vir02 = _template(guide_cluster, "Ascend310P", "vir02")
    response = operator_client.patch(
        f"/api/templates/{vir02.pk}/", {"memory": 7000}, format="json"
    )
    assert response.status_code == 200, response.json()
    vir02.refresh_from_db()
    assert vir02.memory == 7000
    event = AuditEvent.objects.get(action="template.update")
    assert event.actor_name == "otto"
    assert event.before["memory"] == 6144
    assert event.after["memory"] == 7000
    assert event.cluster == guide_cluster


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        ({"memory": 0}, "memory", ["greater than 0"]),
        ({"memory": 30000}, "memory", ["memoryAllocatable"]),
        ({"ai_core": 99}, "ai_core", ["aiCore"]),
        ({"ai_cpu": 99}, "ai_cpu", ["aiCPU"]),
        ({"name": "vir01"}, "name", ["vir01"]),
        ({"name": "vir99"}, "name", ["vir99"]),
        ({"memory": "lots"}, "memory", []),
    ],
)
def test_invalid_template_edit_is_refused_on_its_field(
    operator_client, guide_cluster, change, field, words
):
    vir02 = _template(guide_cluster, "Ascend310P", "vir02")
    response = operator_client.patch(
        f"/api/templates/{vir02.pk}/", change, format="json"
    )
    assert response.status_code == 400
    body = response.json()
    assert field in body["errors"], body
    for word in words:
        assert word in " ".join(body["errors"][field]), body
    vir02.refresh_from_db()
    assert vir02.memory == 6144
    assert vir02.name == "vir02"
    assert not AuditEvent.objects.filter(action="template.update").exists()


def test_create_and_delete_template(operator_client, guide_cluster):
    chip_type = ChipType.objects.get(cluster=guide_cluster, common_word="Ascend310P")
    response = operator_client.post(
        "/api/templates/",
        {
            "chip_type": chip_type.pk,
            "name": "vir02_1c",
            "memory": 6144,
            "ai_core": 2,
            "ai_cpu": 1,
        },
        format="json",
    )
    assert response.status_code == 201, response.json()
    created = Template.objects.get(pk=response.json()["id"])
    assert created.name == "vir02_1c"
    response = operator_client.delete(f"/api/templates/{created.pk}/")
    assert response.status_code == 204
    assert not Template.objects.filter(pk=created.pk).exists()
    assert AuditEvent.objects.filter(
        action="template.delete", object_id=str(created.pk)
    ).exists()


def test_removing_the_smallest_template_warns_about_slots(
    operator_client, guide_cluster
):
    vir01 = _template(guide_cluster, "Ascend310P", "vir01")
    response = operator_client.patch(
        f"/api/templates/{vir01.pk}/", {"memory": 4000}, format="json"
    )
    assert response.status_code == 200
    messages = " ".join(w["message"] for w in response.json()["warnings"])
    assert "5" in messages  # 21527 // 4000 = 5 slices per chip


def test_viewer_cannot_edit(viewer_client, guide_cluster):
    vir02 = _template(guide_cluster, "Ascend310P", "vir02")
    response = viewer_client.patch(
        f"/api/templates/{vir02.pk}/", {"memory": 7000}, format="json"
    )
    assert response.status_code == 403
    vir02.refresh_from_db()
    assert vir02.memory == 6144


def test_chip_type_create_validates_whole_config(operator_client, guide_cluster):
    payload = {
        "cluster": guide_cluster.pk,
        "common_word": "Ascend310P",  # already used
        "chip_name": "310P3",
        "resource_name": "huawei.com/Ascend310P-b",
        "resource_memory_name": "huawei.com/Ascend310P-b-memory",
        "memory_allocatable": 21527,
        "memory_capacity": 24576,
    }
    response = operator_client.post("/api/chip-types/", payload, format="json")
    assert response.status_code == 400
    assert "common_word" in response.json()["errors"]
    payload.update(
        common_word="Ascend910B3",
        chip_name="910B3",
        resource_name="huawei.com/Ascend910B3",
        resource_memory_name="huawei.com/Ascend910B3-memory",
        memory_allocatable=65536,
        memory_capacity=65536,
        ai_core=20,
        ai_cpu=7,
        templates=[
            {"name": "vir05_1c_16g", "memory": 16384, "ai_core": 5, "ai_cpu": 1}
        ],
    )
    response = operator_client.post("/api/chip-types/", payload, format="json")
    assert response.status_code == 201, response.json()
    assert response.json()["templates"][0]["name"] == "vir05_1c_16g"
    assert response.json()["slots_per_chip"] == 4


def test_chip_type_allocatable_above_capacity_refused(operator_client, guide_cluster):
    chip_type = ChipType.objects.get(cluster=guide_cluster, common_word="Ascend310P")
    response = operator_client.patch(
        f"/api/chip-types/{chip_type.pk}/", {"memory_allocatable": 30000}, format="json"
    )
    assert response.status_code == 400
    assert "memory_allocatable" in response.json()["errors"]


def test_fit_endpoint(viewer_client, guide_cluster):
    url = f"/api/clusters/{guide_cluster.pk}/fit/"
    assert (
        viewer_client.get(url, {"chip_type": "Ascend310P", "memory": 5000}).json()[
            "template"
        ]
        == "vir02"
    )
    whole = viewer_client.get(url, {"chip_type": "Ascend310P", "memory": 12289}).json()
    assert whole["kind"] == "whole_card"
    assert whole["memory"] == 21527
    assert (
        viewer_client.get(url, {"chip_type": "Ascend310P", "memory": 30000}).json()[
            "kind"
        ]
        == "invalid"
    )
    bad = viewer_client.get(url, {"chip_type": "Nope", "memory": 1})
    assert bad.status_code == 400
    assert "chip_type" in bad.json()["errors"]
    bad = viewer_client.get(url, {"chip_type": "Ascend310P", "memory": "x"})
    assert bad.status_code == 400
    assert "memory" in bad.json()["errors"]


def test_export_and_versions(viewer_client, operator_client, guide_cluster):
    vir04 = _template(guide_cluster, "Ascend310P", "vir04")
    operator_client.patch(
        f"/api/templates/{vir04.pk}/", {"memory": 12000}, format="json"
    )
    exported = viewer_client.get(
        f"/api/clusters/{guide_cluster.pk}/device-config/export/"
    )
    assert exported.status_code == 200
    assert "memory: 12000" in exported.content.decode()
    state = viewer_client.get(f"/api/clusters/{guide_cluster.pk}/device-config/").json()
    assert "-    memory: 12288" in state["diff_from_base"]
    assert "+    memory: 12000" in state["diff_from_base"]
    versions = viewer_client.get(
        "/api/device-config-versions/", {"cluster": guide_cluster.pk}
    ).json()["results"]
    assert [v["source"] for v in versions] == ["imported"]


def test_chip_type_lists_allowed_template_names(viewer_client, guide_cluster):
    rows = viewer_client.get("/api/chip-types/", {"cluster": guide_cluster.pk}).json()[
        "results"
    ]
    allowed = {row["common_word"]: row["allowed_template_names"] for row in rows}
    assert "vir04_3c" in allowed["Ascend310P"]
    assert "vir05_1c_8g" not in allowed["Ascend310P"]
    assert "vir10_3c_16g" in allowed["Ascend910B4"]
    assert "vir01" not in allowed["Ascend910B4"]


def test_equal_memories_warn_and_the_fit_answers_the_first_in_the_file(
    operator_client, viewer_client, guide_cluster
):
    chip_type = ChipType.objects.get(cluster=guide_cluster, common_word="Ascend310P")
    created = operator_client.post(
        "/api/templates/",
        {"chip_type": chip_type.pk, "name": "vir04_3c", "memory": 12288},
        format="json",
    )
    assert created.status_code == 201, created.json()
    tie = "Ascend310P: templates {} all have 12288 MB; a request carries only memory, so HAMi and Volcano always create {}"
    # Added last in the file: vir04 is handed out.
    messages = [w["message"] for w in created.json()["warnings"]]
    assert any(m.startswith(tie.format("vir04, vir04_3c", "vir04")) for m in messages)
    # Moved before vir04: now it is vir04_3c, in the draft's validation and the fit.
    vir04 = _template(guide_cluster, "Ascend310P", "vir04")
    Template.objects.filter(pk=created.json()["id"]).update(position=vir04.position)
    Template.objects.filter(pk=vir04.pk).update(position=vir04.position + 1)
    state = viewer_client.get(f"/api/clusters/{guide_cluster.pk}/device-config/")
    messages = [i["message"] for i in state.json()["warnings"]]
    assert any(
        m.startswith(tie.format("vir04_3c, vir04", "vir04_3c")) for m in messages
    )
    url = f"/api/clusters/{guide_cluster.pk}/fit/"
    fit = viewer_client.get(url, {"chip_type": "Ascend310P", "memory": 7000}).json()
    assert (fit["template"], fit["memory"]) == ("vir04_3c", 12288)


def test_fit_endpoint_reads_a_request_as_the_chosen_scheduler(
    viewer_client, guide_cluster
):
    url = f"/api/clusters/{guide_cluster.pk}/fit/"
    ask = {"chip_type": "Ascend310P", "memory": 0}
    assert viewer_client.get(url, ask).json()["template"] == "vir01"
    volcano = viewer_client.get(url, {**ask, "scheduler": "volcano"}).json()
    assert (volcano["kind"], volcano["memory"]) == ("whole_card", 21527)
    over = viewer_client.get(
        url, {"chip_type": "Ascend310P", "memory": 30000, "scheduler": "volcano"}
    ).json()
    assert (over["kind"], over["template"], over["memory"]) == ("template", "vir01", 0)
    bad = viewer_client.get(url, {**ask, "scheduler": "kube"})
    assert bad.status_code == 400
    assert "scheduler" in bad.json()["errors"]
