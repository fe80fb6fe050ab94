"""Configuration health on good and broken Volcano scheduler configs and deployments."""

from __future__ import annotations

import json

import pytest

from apps.inventory.models import Chip

pytestmark = pytest.mark.django_db

GOOD = """\
actions: "enqueue, allocate, preempt, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: deviceshare
    arguments:
      deviceshare.AscendHAMiVNPUEnable: true
      deviceshare.KnownGeometriesCMNamespace: kube-system
      deviceshare.KnownGeometriesCMName: hami-scheduler-device
  - name: predicates
"""


@pytest.fixture
def set_volcano_conf(kubectl, resync):
    def apply(text: str) -> None:
        patch = json.dumps({"data": {"volcano-scheduler.conf": text}})
        kubectl(
            "patch",
            "cm",
            "volcano-scheduler-configmap",
            "-n",
            "volcano-system",
            "--type",
            "merge",
            "-p",
            patch,
        )
        resync()

    return apply


def _checks(client, url) -> tuple[str, dict[str, dict]]:
    body = client.get(url("health")).json()
    return body["check_status"], {c["id"]: c for c in body["checks"]}


def test_guide_config(cluster, viewer_client, url):
    # given the guide's scheduler config: guide argument names, no preempt action
    overall, checks = _checks(viewer_client, url)
    assert checks["volcano_config"]["check_status"] == "ok"
    assert checks["deviceshare_enabled"]["check_status"] == "warn"
    assert "AscendHAMiVNPUEnable" in checks["deviceshare_enabled"]["fix"]
    assert checks["known_geometries"]["check_status"] == "ok"
    assert checks["preempt_action"]["check_status"] == "fail"
    assert "preempt" in checks["preempt_action"]["fix"]
    assert checks["device_plugin"]["check_status"] == "ok"
    assert checks["registrations"]["check_status"] == "ok"
    assert checks["device_config_drift"]["check_status"] == "ok"
    assert overall == "fail"


def test_preempt_not_needed_when_preemption_is_off(
    cluster, viewer_client, url, settings
):
    settings.PREEMPTION_ENABLED = False
    assert _checks(viewer_client, url)[1]["preempt_action"]["check_status"] == "ok"


def test_good_config_is_all_ok(cluster, set_volcano_conf, viewer_client, url):
    set_volcano_conf(GOOD)
    overall, checks = _checks(viewer_client, url)
    assert overall == "ok", checks
    assert set(checks) == {
        "volcano_config",
        "deviceshare_enabled",
        "known_geometries",
        "preempt_action",
        "device_plugin",
        "registrations",
        "device_config_drift",
        "volcano_queues",
    }


@pytest.mark.parametrize(
    ("text", "check", "words"),
    [
        (
            GOOD.replace("AscendHAMiVNPUEnable: true", "AscendHAMiVNPUEnable: false"),
            "deviceshare_enabled",
            "does not enable",
        ),
        (
            GOOD.replace(
                "KnownGeometriesCMName: hami-scheduler-device",
                "KnownGeometriesCMName: other",
            ),
            "known_geometries",
            "kube-system/other",
        ),
        (
            GOOD.replace(
                "      deviceshare.KnownGeometriesCMNamespace: kube-system\n", ""
            ).replace(
                "      deviceshare.KnownGeometriesCMName: hami-scheduler-device\n", ""
            ),
            "known_geometries",
            "volcano-vgpu-device-config",
        ),
        (
            GOOD.replace(
                "  - name: deviceshare\n    arguments:\n",
                "  - name: other\n    arguments:\n",
            ),
            "deviceshare_enabled",
            "no deviceshare plugin",
        ),
        ("actions: [unclosed\n", "volcano_config", "not valid YAML"),
    ],
)
def test_broken_configs_fail_the_right_check(
    cluster, set_volcano_conf, viewer_client, url, text, check, words
):
    set_volcano_conf(text)
    overall, checks = _checks(viewer_client, url)
    assert overall == "fail"
    assert checks[check]["check_status"] == "fail"
    assert words in checks[check]["message"]


def test_device_plugin_missing_or_not_on_every_ascend_node(
    cluster, kubectl, resync, viewer_client, url
):
    # given a third node labelled ascend=on that the DaemonSet does not cover (DB view)
    from apps.inventory.models import Node

    Node.objects.create(cluster=cluster, name="npu-node-new", ascend_enabled=True)
    check = _checks(viewer_client, url)[1]["device_plugin"]
    assert check["check_status"] == "fail"
    assert "3 are labelled ascend=on" in check["message"]
    # when the DaemonSet is deleted, then the check fails naming it
    kubectl("delete", "ds", "hami-ascend-device-plugin", "-n", "kube-system")
    resync()
    check = _checks(viewer_client, url)[1]["device_plugin"]
    assert check["check_status"] == "fail"
    assert "has not been seen" in check["message"]


def test_registrations_against_the_device_config(
    cluster, operator_client, viewer_client, url
):
    # given a chip type no chip registers as
    answer = operator_client.post(
        "/api/chip-types/",
        {
            "cluster": cluster.pk,
            "common_word": "Ascend910B3",
            "chip_name": "910B3",
            "resource_name": "huawei.com/Ascend910B3",
            "resource_memory_name": "huawei.com/Ascend910B3-memory",
            "memory_allocatable": 65536,
            "memory_capacity": 65536,
        },
        format="json",
    )
    assert answer.status_code == 201, answer.json()
    check = _checks(viewer_client, url)[1]["registrations"]
    assert check["check_status"] == "warn"
    assert "Ascend910B3 (chipName 910B3)" in check["message"]
    # and chips registering under a commonWord the config lacks
    Chip.objects.filter(cluster=cluster, common_word="Ascend910B4").update(
        common_word="Ascend910X"
    )
    check = _checks(viewer_client, url)[1]["registrations"]
    assert check["check_status"] == "fail"
    assert "8 chips register as Ascend910X" in check["message"]
