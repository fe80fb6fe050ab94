"""Configuration health on good and broken Volcano scheduler configs and deployments."""

from __future__ import annotations

import json

import pytest

from apps.inventory.models import Chip
from simcluster import guide_data
from tests.inventory.health_ids import ALL_CHECKS

pytestmark = pytest.mark.django_db

GOOD = guide_data.VOLCANO_SCHEDULER_CONF_UPSTREAM


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


def test_the_demo_is_healthy(cluster, viewer_client, url):
    # given simcluster's guide scenario as the demo runs it: the guide corrected
    # as these checks ask, on the real stack's images
    overall, checks = _checks(viewer_client, url)
    assert overall == "ok", checks
    assert set(checks) == set(ALL_CHECKS)
    assert checks["component_versions"]["message"] == (
        "Volcano scheduler v1.15.1; HAMi scheduler v2.5.0; "
        "HAMi Ascend device plugin v1.1.0"
    )
    # preempt is not in its actions, and that is no longer a failure
    assert "have no preempt" in checks["preempt_action"]["message"]


def test_guide_config(cluster, set_volcano_conf, viewer_client, url):
    # given the guide's scheduler config verbatim: its enable names, no node lock
    set_volcano_conf(guide_data.VOLCANO_SCHEDULER_CONF)
    overall, checks = _checks(viewer_client, url)
    assert overall == "fail"
    assert checks["volcano_config"]["check_status"] == "ok"
    enabled = checks["deviceshare_enabled"]
    assert enabled["check_status"] == "fail"
    assert "no Volcano release reads" in enabled["message"]
    assert "deviceshare.AscendHAMiVNPUEnable: true" in enabled["fix"]
    assert checks["node_lock"]["check_status"] == "warn"
    assert checks["known_geometries"]["check_status"] == "ok"
    assert checks["predicates_plugin"]["check_status"] == "ok"
    assert checks["preempt_action"]["check_status"] == "ok"


def test_the_guide_config_on_the_guides_fork(
    cluster, kubectl, set_volcano_conf, viewer_client, url
):
    # given the guide's own image and config
    kubectl(
        "set",
        "image",
        "deployment/volcano-scheduler",
        "-n",
        "volcano-system",
        "volcano-scheduler=swr.cn-east-3.myhuaweicloud.com/lomtom-common/"
        "vc-scheduler:v1.13.0-11-07",
    )
    set_volcano_conf(guide_data.VOLCANO_SCHEDULER_CONF)
    checks = _checks(viewer_client, url)[1]
    # then its enable names count there
    assert checks["deviceshare_enabled"]["check_status"] == "ok"
    assert "fork" in checks["component_versions"]["message"]


def test_a_plugin_that_cannot_parse_the_shape_fails_health(
    cluster, set_images, resync, viewer_client, url
):
    # when the device plugin is upgraded to v1.3.0 under the guide's list shape
    plugin = "projecthami/ascend-device-plugin:v1.3.0"
    set_images((("daemonset/hami-ascend-device-plugin", "device-plugin", plugin),))
    resync()
    check = _checks(viewer_client, url)[1]["device_config_shape"]
    assert check["check_status"] == "fail"
    assert "device plugin v1.3.0 cannot parse the list shape" in check["message"]
    assert "write the wrapper shape" in check["fix"]


def test_preempt_is_a_warning_only_where_volcano_evicts_vnpu_pods(
    cluster, kubectl, set_volcano_conf, viewer_client, url
):
    preempt = GOOD.replace(
        "enqueue, allocate, backfill", "enqueue, allocate, preempt, backfill"
    )
    set_volcano_conf(preempt)
    assert _checks(viewer_client, url)[1]["preempt_action"]["check_status"] == "ok"
    kubectl(
        "set",
        "image",
        "deployment/volcano-scheduler",
        "-n",
        "volcano-system",
        "volcano-scheduler=volcanosh/vc-scheduler:v1.16.0",
    )
    set_volcano_conf(preempt)  # and resync
    check = _checks(viewer_client, url)[1]["preempt_action"]
    assert check["check_status"] == "warn"
    assert "without the portal's approval" in check["message"]


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
        (
            GOOD.replace("  - name: predicates\n", ""),
            "predicates_plugin",
            "no predicates plugin",
        ),
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


def test_hami_core_chips_that_register_their_aicore_are_warned(
    cluster, viewer_client, url
):
    # given the 310P node in hami-core mode, its chips registered by a v1.3.0
    # plugin: devcore is the template aiCore (8), not the 100 a -core percent needs
    from apps.inventory.models import Node

    node = Node.objects.get(cluster=cluster, name=guide_data.NODE_310P)
    Node.objects.filter(pk=node.pk).update(hami_vnpu_core=True)
    chips = Chip.objects.filter(node=node)
    aicore = chips.first().aicore
    assert 0 < aicore < 100
    check = _checks(viewer_client, url)[1]["registrations"]
    assert check["check_status"] == "warn"
    assert (
        f"Ascend310P chips on hami-core nodes register {chips.count()} with "
        f"devcore {aicore}, not 100"
    ) in check["message"]
    assert "v1.4.0" in check["fix"]
    # when a v1.4.0 plugin registers 100, then the registrations agree again
    chips.update(aicore=100)
    check = _checks(viewer_client, url)[1]["registrations"]
    assert check["check_status"] == "ok", check
