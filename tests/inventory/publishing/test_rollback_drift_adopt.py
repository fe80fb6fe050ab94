"""Rollback, drift after hand edits (kubectl patch / apply), and adopting the live config."""

from __future__ import annotations

import json

import pytest
import yaml

from apps.audit.models import AuditEvent
from apps.inventory.choices import DeviceConfigSource
from apps.inventory.models import DeviceConfigVersion, Template
from tests.guide import POD_310P

pytestmark = pytest.mark.django_db


def _template(cluster, name: str) -> Template:
    return Template.objects.get(chip_type__cluster=cluster, name=name)


def test_rollback_publishes_the_old_text_and_restores_templates(
    cluster, live_text, operator_client, url
):
    # given v1 (adopted) and a published v2 with vir01 at 4096 MB
    v1 = live_text()
    operator_client.patch(
        f"/api/templates/{_template(cluster, 'vir01').pk}/", {"memory": 4096}
    )
    published = operator_client.post(
        url("publish"), {"reason": "v2", "confirm_breaking": [POD_310P]}
    )
    assert published.status_code == 201, published.json()
    assert live_text() != v1
    # when rolling back to v1
    answer = operator_client.post(url("rollback"), {"version": 1, "reason": "undo"})
    # then the ConfigMap holds v1's text exactly, as a new published version
    assert answer.status_code == 201, answer.json()
    body = answer.json()
    assert (body["number"], body["rollback_of"]) == (3, 1)
    assert live_text() == v1
    v3 = DeviceConfigVersion.objects.get(cluster=cluster, number=3)
    assert (v3.source, v3.text, v3.reason) == (DeviceConfigSource.PUBLISHED, v1, "undo")
    # and the portal's templates are v1's again
    assert _template(cluster, "vir01").memory == 3072
    event = AuditEvent.objects.filter(action="deviceconfig.publish").latest("id")
    assert event.after["rollback_of"] == 1
    assert "memory: 3072" in event.after["diff"]


def test_rollback_errors(cluster, operator_client, viewer_client, url):
    assert (
        operator_client.post(
            url("rollback"), {"version": 99, "reason": "x"}
        ).status_code
        == 404
    )
    same = operator_client.post(url("rollback"), {"version": 1, "reason": "x"})
    assert same.status_code == 400
    assert same.json()["code"] == "no_change"
    assert (
        viewer_client.post(url("rollback"), {"version": 1, "reason": "x"}).status_code
        == 403
    )


def _ids(cluster) -> dict[str, int]:
    from apps.inventory.models import ChipType, Template

    chip_types = {
        ct.common_word: ct.pk for ct in ChipType.objects.filter(cluster=cluster)
    }
    templates = {
        f"{t.chip_type.common_word}/{t.name}": t.pk
        for t in Template.objects.filter(chip_type__cluster=cluster).select_related(
            "chip_type"
        )
    }
    assert chip_types
    assert templates
    return {**chip_types, **templates}


def test_drift_seen_after_kubectl_patch_then_adopted(
    cluster,
    live_text,
    hand_edit,
    resync,
    viewer_client,
    operator_client,
    admin_client_api,
    url,
):
    # given a cluster in sync
    first = viewer_client.get(url("drift")).json()
    assert (first["in_sync"], first["baseline_version"], first["checked"]) == (
        True,
        1,
        "live",
    )
    # when someone edits the ConfigMap by hand
    hand = live_text().replace("memory: 12288", "memory: 12000")
    hand_edit(hand)
    # then the live check shows drift with the diff at once
    drift = viewer_client.get(url("drift")).json()
    assert drift["in_sync"] is False
    assert "-    memory: 12288" in drift["diff"]
    assert "+    memory: 12000" in drift["diff"]
    # and the recorded (DB-only) view shows it once sync has seen it
    assert viewer_client.get(url("drift"), {"live": "false"}).json()["in_sync"] is True
    resync()
    recorded = viewer_client.get(url("drift"), {"live": "false"}).json()
    assert (recorded["in_sync"], recorded["checked"], recorded["live_version"]) == (
        False,
        "recorded",
        2,
    )
    assert "+    memory: 12000" in recorded["diff"]
    # when an operator tries to adopt, then 403; an admin adopts
    ids = _ids(cluster)
    assert operator_client.post(url("adopt"), {}).status_code == 403
    adopted = admin_client_api.post(url("adopt"), {"reason": "ops changed vir04"})
    assert adopted.status_code == 201, adopted.json()
    assert adopted.json()["source"] == "adopted"
    # then the live content is the portal's: in sync, and the templates follow it
    assert viewer_client.get(url("drift")).json()["in_sync"] is True
    assert viewer_client.get(url("drift"), {"live": "false"}).json()["in_sync"] is True
    assert _template(cluster, "vir04").memory == 12000
    # in the same rows: chip types and templates keep their ids (an editor
    # open on one, a link, a pipeline's id stay valid)
    assert _ids(cluster) == ids
    assert AuditEvent.objects.filter(action="deviceconfig.adopted").exists()
    # and adopting again is a polite no-op
    again = admin_client_api.post(url("adopt"), {})
    assert again.status_code == 400
    assert again.json()["code"] == "no_change"


def test_drift_seen_after_kubectl_apply(cluster, kubectl, live_cm, viewer_client, url):
    # given the ConfigMap re-applied from a manifest with a changed template
    cm = live_cm()
    manifest = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "hami-scheduler-device", "namespace": "kube-system"},
        "data": {
            "device-config.yaml": cm["data"]["device-config.yaml"].replace(
                "memory: 3072", "memory: 3000"
            )
        },
    }
    kubectl("apply", "-f", "-", stdin=json.dumps(manifest))
    # then drift shows the change
    drift = viewer_client.get(url("drift")).json()
    assert drift["in_sync"] is False
    assert "+    memory: 3000" in drift["diff"]


def test_an_invalid_live_config_cannot_be_adopted(
    cluster, live_text, hand_edit, admin_client_api, url
):
    # given a hand edit that would crash the device plugin (memory 0)
    hand_edit(live_text().replace("memory: 3072", "memory: 0"))
    # when adopted, then 400 with the validation errors and nothing changes
    answer = admin_client_api.post(url("adopt"), {})
    assert answer.status_code == 400
    messages = [m for ms in answer.json()["errors"].values() for m in ms]
    assert any("greater than 0" in m for m in messages)
    assert not DeviceConfigVersion.objects.filter(
        source="adopted", number__gt=1
    ).exists()
    assert _template(cluster, "vir01").memory == 3072


def test_publish_after_adopting_a_wrapper_keeps_it(
    cluster,
    hand_edit,
    set_images,
    resync,
    fixtures_dir,
    live_text,
    admin_client_api,
    operator_client,
    url,
):
    # given the cluster switched to the wrapper shape by hand (and to components
    # that read it) and an admin adopted it
    hand_edit((fixtures_dir / "device-config-wrapper.yaml").read_text())
    set_images()
    resync()
    assert admin_client_api.post(url("adopt"), {}).status_code == 201
    # when an operator publishes a change
    operator_client.patch(
        f"/api/templates/{_template(cluster, 'vir02').pk}/", {"memory": 7168}
    )
    assert operator_client.post(url("publish"), {"reason": "r"}).status_code == 201
    # then the wrapper and other vendors stay
    data = yaml.safe_load(live_text())
    assert data["vnpus"]["hamiVnpuCore"] is False
    assert "cambricon" in data
