"""Publishing to a simulated cluster: what lands, conflicts, roles, failures."""

from __future__ import annotations

import json

import pytest
import yaml

from apps.audit.models import AuditEvent
from apps.inventory.choices import DeviceConfigSource
from apps.inventory.deviceconfig import guarded_write
from apps.inventory.models import DeviceConfigVersion, Template
from tests.guide import POD_310P

pytestmark = pytest.mark.django_db


def _template(cluster, name: str) -> Template:
    return Template.objects.get(chip_type__cluster=cluster, name=name)


def _vnpus(text: str) -> list[dict]:
    vnpus = yaml.safe_load(text)["vnpus"]
    return vnpus["configs"] if isinstance(vnpus, dict) else vnpus


def _memory(text: str, common_word: str, template: str) -> int:
    chip = next(c for c in _vnpus(text) if c["commonWord"] == common_word)
    return next(t["memory"] for t in chip["templates"] if t["name"] == template)


@pytest.mark.parametrize("shape", ["list", "wrapper"])
def test_publish_lands_with_shape_and_untouched_keys(
    shape,
    connect,
    kubectl,
    live_cm,
    hand_edit,
    set_images,
    operator,
    operator_client,
    fixtures_dir,
):
    # given a ConfigMap with another data key and a label, in either shape, adopted by the first sync
    if shape == "wrapper":
        hand_edit((fixtures_dir / "device-config-wrapper.yaml").read_text())
        set_images()  # components that read it
    kubectl(
        "patch",
        "cm",
        "hami-scheduler-device",
        "-n",
        "kube-system",
        "--type",
        "merge",
        "-p",
        json.dumps(
            {
                "data": {"node-config.yaml": "nodes: []\n"},
                "metadata": {"labels": {"team": "npu"}},
            }
        ),
    )
    before = live_cm()
    cluster = connect()
    template = _template(cluster, "vir01")
    # when an operator edits a template and publishes with a reason
    edited = operator_client.patch(f"/api/templates/{template.pk}/", {"memory": 4096})
    assert edited.status_code == 200, edited.json()
    answer = operator_client.post(
        f"/api/clusters/{cluster.pk}/publish/",
        {"reason": "bigger vir01", "confirm_breaking": [POD_310P]},
    )
    # then the ConfigMap holds the edit, in the same shape, with every other key as it was
    assert answer.status_code == 201, answer.json()
    after = live_cm()
    text = after["data"]["device-config.yaml"]
    old = yaml.safe_load(before["data"]["device-config.yaml"])
    new = yaml.safe_load(text)
    assert isinstance(new["vnpus"], dict) is (shape == "wrapper")
    assert _memory(text, "Ascend310P", "vir01") == 4096
    assert _memory(text, "Ascend910B4", "vir05_1c_8g") == 8192
    assert {k: v for k, v in new.items() if k != "vnpus"} == {
        k: v for k, v in old.items() if k != "vnpus"
    }
    if shape == "wrapper":
        assert new["vnpus"]["hamiVnpuCore"] is False
        assert "nvidia" in new
    else:
        assert "# Ascend 310P3" in text  # comments people wrote stay
    assert after["data"]["node-config.yaml"] == "nodes: []\n"
    assert after["metadata"]["labels"]["team"] == "npu"
    # and the portal recorded a published version with author, reason and the new resourceVersion
    body = answer.json()
    version = DeviceConfigVersion.objects.get(pk=body["id"])
    assert (version.source, version.reason, version.author) == (
        DeviceConfigSource.PUBLISHED,
        "bigger vir01",
        operator,
    )
    assert version.text == text
    assert version.resource_version == after["metadata"]["resourceVersion"]
    assert body["previous_resource_version"] == before["metadata"]["resourceVersion"]
    assert any("slices per chip" in w["message"] for w in body["warnings"])
    event = AuditEvent.objects.get(action="deviceconfig.publish")
    assert event.actor == operator
    assert event.reason == "bigger vir01"
    assert (
        "+      memory: 4096" in event.after["diff"]
        or "+    memory: 4096" in event.after["diff"]
    )
    assert "memory: 3072" in event.after["diff"]


def test_hand_edit_makes_publish_409_and_loses_neither_edit(
    cluster, live_text, hand_edit, operator_client, url
):
    # given a portal edit not yet published and a hand edit of the ConfigMap
    baseline = live_text()
    operator_client.patch(
        f"/api/templates/{_template(cluster, 'vir02').pk}/", {"memory": 7168}
    )
    hand = baseline.replace("memory: 12288", "memory: 12000")
    hand_edit(hand)
    versions = DeviceConfigVersion.objects.count()
    # when the operator publishes
    answer = operator_client.post(url("publish"), {"reason": "vir02 7 GB"})
    # then 409 with last seen, live and proposed, and the diffs
    assert answer.status_code == 409
    body = answer.json()
    assert body["code"] == "drift"
    detail = body["detail"]
    assert detail["last_seen"] == baseline
    assert detail["live"] == hand
    assert _memory(detail["proposed"], "Ascend310P", "vir02") == 7168
    assert "+    memory: 12000" in detail["diff_live"]
    assert "+    memory: 7168" in detail["diff_proposed"]
    # and neither edit is lost: the cluster keeps the hand edit, the portal its own
    assert live_text() == hand
    assert _template(cluster, "vir02").memory == 7168
    assert DeviceConfigVersion.objects.count() == versions
    assert not AuditEvent.objects.filter(action="deviceconfig.publish").exists()


def test_write_between_read_and_put_is_refused_with_fresh_data(
    cluster, live_text, hand_edit, operator_client, url, monkeypatch
):
    # given someone edits the ConfigMap right after the portal read it
    real_read = guarded_write.live_device_config_read
    baseline = live_text()
    hand = baseline.replace("memory: 6144", "memory: 6000")
    calls = []

    def read_then_someone_writes(*args, **kwargs):
        seen = real_read(*args, **kwargs)
        if not calls:
            hand_edit(hand)
        calls.append(seen)
        return seen

    monkeypatch.setattr(
        guarded_write, "live_device_config_read", read_then_someone_writes
    )
    operator_client.patch(
        f"/api/templates/{_template(cluster, 'vir01').pk}/", {"memory": 4096}
    )
    # when the portal publishes (its PUT carries the resourceVersion it read)
    answer = operator_client.post(
        url("publish"), {"reason": "race", "confirm_breaking": [POD_310P]}
    )
    # then the API server's 409 becomes the portal's drift 409 with the fresh live text
    assert answer.status_code == 409
    assert answer.json()["detail"]["live"] == hand
    assert "while the portal was publishing" in answer.json()["message"]
    assert live_text() == hand
    assert not DeviceConfigVersion.objects.filter(source="published").exists()


def test_metadata_only_change_in_between_is_retried(
    cluster, kubectl, live_cm, operator_client, url, monkeypatch
):
    # given someone only labels the ConfigMap between the portal's read and write
    real_read = guarded_write.live_device_config_read
    calls = []

    def read_then_label(*args, **kwargs):
        seen = real_read(*args, **kwargs)
        if not calls:
            kubectl(
                "label", "cm", "hami-scheduler-device", "-n", "kube-system", "owner=ops"
            )
        calls.append(seen)
        return seen

    monkeypatch.setattr(guarded_write, "live_device_config_read", read_then_label)
    operator_client.patch(
        f"/api/templates/{_template(cluster, 'vir01').pk}/", {"memory": 4096}
    )
    # when the portal publishes
    answer = operator_client.post(
        url("publish"), {"reason": "retry", "confirm_breaking": [POD_310P]}
    )
    # then the text did not change under it, so the write is retried and keeps the label
    assert answer.status_code == 201, answer.json()
    cm = live_cm()
    assert cm["metadata"]["labels"]["owner"] == "ops"
    assert _memory(cm["data"]["device-config.yaml"], "Ascend310P", "vir01") == 4096
    assert len(calls) == 2


def test_force_needs_admin_and_publishes_over_drift(
    cluster, live_text, hand_edit, operator_client, admin_client_api, url
):
    # given drift
    hand = live_text().replace("memory: 12288", "memory: 12000")
    hand_edit(hand)
    operator_client.patch(
        f"/api/templates/{_template(cluster, 'vir01').pk}/", {"memory": 4096}
    )
    # when an operator forces, then 403 and nothing is written
    refused = operator_client.post(
        url("publish"),
        {"reason": "mine", "force": True, "confirm_breaking": [POD_310P]},
    )
    assert refused.status_code == 403
    assert live_text() == hand
    # when an admin forces, then the portal's config lands over the hand edit
    answer = admin_client_api.post(
        url("publish"),
        {"reason": "deliberate", "force": True, "confirm_breaking": [POD_310P]},
    )
    assert answer.status_code == 201, answer.json()
    assert answer.json()["forced"] is True
    text = live_text()
    assert _memory(text, "Ascend310P", "vir01") == 4096
    assert _memory(text, "Ascend310P", "vir04") == 12288


def test_roles_viewer_cannot_publish(
    cluster, live_text, viewer_client, api_client, url
):
    before = live_text()
    assert viewer_client.post(url("publish"), {"reason": "x"}).status_code == 403
    assert api_client.post(url("publish"), {"reason": "x"}).status_code in (401, 403)
    for action in ("drift", "restarts", "what-if", "health"):
        assert viewer_client.get(url(action)).status_code == 200, action
    assert live_text() == before


def test_invalid_config_is_never_published(cluster, live_text, operator_client, url):
    # given the portal's copy was made invalid behind the validator's back
    before = live_text()
    Template.objects.filter(chip_type__cluster=cluster, name="vir04").update(
        memory=30000
    )
    # when published, then 400 naming the field, and nothing reaches the cluster
    answer = operator_client.post(url("publish"), {"reason": "oops"})
    assert answer.status_code == 400
    errors = answer.json()["errors"]
    assert any(
        "memoryAllocatable" in m for messages in errors.values() for m in messages
    )
    assert live_text() == before
    assert DeviceConfigVersion.objects.filter(cluster=cluster).count() == 1


def test_no_op_and_missing_reason_are_refused(cluster, operator_client, url):
    nothing = operator_client.post(url("publish"), {"reason": "again"})
    assert nothing.status_code == 400
    assert nothing.json()["code"] == "no_change"
    blank = operator_client.post(url("publish"), {"reason": "  "})
    assert blank.status_code == 400
    assert "reason" in blank.json()["errors"]
    missing = operator_client.post(url("publish"), {})
    assert missing.status_code == 400
    assert "reason" in missing.json()["errors"]
    assert DeviceConfigVersion.objects.filter(cluster=cluster).count() == 1


def test_unreachable_cluster_is_503_naming_it(
    cluster, sim, operator_client, viewer_client, url
):
    # given the portal has an edit and the cluster goes away
    operator_client.patch(
        f"/api/templates/{_template(cluster, 'vir01').pk}/", {"memory": 4096}
    )
    sim.stop()
    # when publishing or reading live state, then 503 naming the cluster and nothing written
    answer = operator_client.post(
        url("publish"), {"reason": "down", "confirm_breaking": [POD_310P]}
    )
    assert answer.status_code == 503
    assert answer.json()["code"] == "cluster_unavailable"
    assert "'sim'" in answer.json()["message"]
    assert viewer_client.get(url("drift")).status_code == 503
    assert viewer_client.get(url("restarts")).status_code == 503
    assert DeviceConfigVersion.objects.filter(cluster=cluster).count() == 1


def test_a_shape_a_running_component_cannot_parse_needs_confirm_shape(
    cluster, set_images, resync, live_text, operator_client, url
):
    # given the guide's list shape and a HAMi scheduler v2.10.0 running, which
    # reads only the wrapper (it parsed its config before; it crashes at its
    # next start)
    hami = ("deployment/hami-scheduler", "hami-scheduler", "projecthami/hami:v2.10.0")
    set_images((hami,))
    resync()
    edited = operator_client.patch(
        f"/api/templates/{_template(cluster, 'vir01').pk}/", {"memory": 4096}
    )
    assert edited.status_code == 200, edited.json()
    before = live_text()
    # then the preview says so before anything is written
    preview = operator_client.get(f"/api/clusters/{cluster.pk}/device-config/").json()
    (warning,) = preview["shape_warnings"]
    assert warning["component"] == "hami"
    assert warning["version"] == "v2.10.0"
    assert (warning["shape"], warning["effect"]) == ("list", "crash")
    assert "write the wrapper shape" in warning["fix"]
    # when an operator publishes without confirming: 400 naming confirm_shape
    answer = operator_client.post(
        url("publish"), {"reason": "bigger vir01", "confirm_breaking": [POD_310P]}
    )
    assert answer.status_code == 400, answer.json()
    body = answer.json()
    assert body["code"] == "unreadable_shape"
    assert (
        "HAMi scheduler v2.10.0 cannot parse the list shape"
        in (body["errors"]["confirm_shape"][0])
    )
    assert live_text() == before  # nothing was written
    # when confirmed, it is written and the result repeats the warning
    answer = operator_client.post(
        url("publish"),
        {
            "reason": "bigger vir01",
            "confirm_shape": True,
            "confirm_breaking": [POD_310P],
        },
        format="json",
    )
    assert answer.status_code == 201, answer.json()
    assert [w["effect"] for w in answer.json()["shape_warnings"]] == ["crash"]
    assert _memory(live_text(), "Ascend310P", "vir01") == 4096


def test_a_silent_fallback_or_an_unknown_version_is_only_a_warning(
    cluster, kubectl, resync, operator_client, url, live_text
):
    # given a Volcano whose version cannot be read from its image
    kubectl(
        "set",
        "image",
        "deployment/volcano-scheduler",
        "-n",
        "volcano-system",
        "volcano-scheduler=volcanosh/vc-scheduler:latest",
    )
    resync()
    operator_client.patch(
        f"/api/templates/{_template(cluster, 'vir01').pk}/", {"memory": 4096}
    )
    # when an operator publishes: written, with the warning
    answer = operator_client.post(
        url("publish"), {"reason": "bigger vir01", "confirm_breaking": [POD_310P]}
    )
    assert answer.status_code == 201, answer.json()
    (warning,) = answer.json()["shape_warnings"]
    assert (warning["component"], warning["effect"]) == ("volcano", "unknown")
    assert warning["version"] is None
    assert "version unknown: image volcanosh/vc-scheduler:latest" in warning["message"]
