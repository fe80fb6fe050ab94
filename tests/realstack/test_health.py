"""Configuration health of the real stack: Volcano v1.15.1's own configuration.

The stack runs the guide's tiers with the arguments upstream Volcano reads
(``kubestack.volcano``), the real vc-scheduler v1.15.1 behind the Deployment
``volcano-system/volcano-scheduler``, and the guide's list-shaped device
config read by the device plugin v1.1.0 and a HAMi scheduler v2.5.0. Every
check of that configuration comes out ok, with the versions read from the
images sync mirrored.
"""

from __future__ import annotations

import pytest

from apps.inventory.sync.engine import sync_once

pytestmark = [pytest.mark.realstack, pytest.mark.slow]

CONFIG_CHECKS = (
    "volcano_config",
    "component_versions",
    "deviceshare_enabled",
    "known_geometries",
    "chip_policy",
    "node_lock",
    "predicates_plugin",
    "device_config_shape",
    "preempt_action",
)


def test_the_real_volcano_config_is_healthy(kube_stack, real_cluster, viewer_client):
    sync_once(real_cluster)
    answer = viewer_client.get(f"/api/clusters/{real_cluster.pk}/health/")
    assert answer.status_code == 200, answer.json()
    checks = {c["id"]: c for c in answer.json()["checks"]}
    assert {k: checks[k]["check_status"] for k in CONFIG_CHECKS} == dict.fromkeys(
        CONFIG_CHECKS, "ok"
    ), checks
    assert checks["component_versions"]["message"] == (
        "Volcano scheduler v1.15.1; HAMi scheduler v2.5.0; "
        "HAMi Ascend device plugin v1.1.0"
    )
    assert checks["deviceshare_enabled"]["message"] == (
        "deviceshare has deviceshare.AscendHAMiVNPUEnable: true"
    )
    # the guide's config sets no SchedulePolicy: the chip is Volcano's random pick
    assert "at random" in checks["chip_policy"]["message"]
    assert checks["device_config_shape"]["message"] == (
        "Volcano scheduler v1.15.1 reads the list shape of vnpus; "
        "HAMi scheduler v2.5.0 reads the list shape of vnpus; "
        "HAMi Ascend device plugin v1.1.0 reads the list shape of vnpus"
    )
    assert "have no preempt" in checks["preempt_action"]["message"]
