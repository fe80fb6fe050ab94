"""The pieces that let kubestack hold the reference scale (1,000 nodes, 30,000
pods) on two cores, checked without starting a stack."""

from __future__ import annotations

import json

from kubestack import kwok
from kubestack.deviceplugin import ALLOCATING, RESOURCE_VERSION
from kubestack.scenarios import (
    SCENARIOS,
    Scale,
    Scenario,
    running_status,
    scale_pod_ip,
    slice_pod,
)


def _heartbeat_delay(*args: float) -> dict:
    stage = {"metadata": {"name": "node-heartbeat"}, "spec": {}}
    return kwok._adjust(stage, *args)["spec"]["delay"]


def test_the_guides_heartbeat_is_kwoks_3_s_and_the_scales_2_to_3_min():
    # KWOK takes a jitter below the duration as the delay itself (kwok.py).
    assert _heartbeat_delay() == {
        "durationMilliseconds": 10_000,
        "jitterDurationMilliseconds": 3_000,
    }
    assert _heartbeat_delay(
        Scale.heartbeat_seconds, Scale.heartbeat_jitter_seconds
    ) == {
        "durationMilliseconds": 120_000,
        "jitterDurationMilliseconds": 180_000,
    }


def test_only_the_scale_scenario_slows_its_cluster_down():
    for name, scenario in SCENARIOS.items():
        if name == "scale":
            continue
        assert scenario.heartbeat_seconds == Scenario.heartbeat_seconds
        assert scenario.plugin_report_seconds == Scenario.plugin_report_seconds
        assert scenario.schedule_period_seconds == 1
        assert scenario.plugin_daemonset
    assert Scale.plugin_report_seconds == 0
    assert not Scale.plugin_daemonset


def _go_line(event_type: str, phase: str) -> str:
    """A watch event as the API server writes it: compact JSON, metadata
    fields in Go's order (the resourceVersion before the annotations)."""
    pod = {
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {
            "name": "p",
            "namespace": "default",
            "uid": "u",
            "resourceVersion": "4711",
            "annotations": {
                "hami.io/bind-phase": phase,
                "note": json.dumps({"resourceVersion": "1"}),
            },
        },
        "spec": {"nodeName": "n"},
    }
    return json.dumps({"type": event_type, "object": pod}, separators=(",", ":"))


def test_the_plugins_watch_parses_only_the_pods_waiting_for_it():
    assert ALLOCATING in _go_line("MODIFIED", "allocating")
    assert ALLOCATING not in _go_line("MODIFIED", "success")
    found = RESOURCE_VERSION.search(_go_line("MODIFIED", "success"))
    assert found is not None
    assert found.group(1) == "4711"


def test_scale_pods_start_with_ips_of_their_own():
    ips = [scale_pod_ip(index) for index in range(70_000)]
    assert len(set(ips)) == len(ips)
    assert not any(ip.startswith("172.16.") for ip in ips)  # KWOK's --cidr
    pod = slice_pod("p", "Ascend310P", 3072)
    status = running_status(pod, ips[0])
    assert status["phase"] == "Running"
    assert status["podIPs"] == [{"ip": ips[0]}]
    assert [c["name"] for c in status["containerStatuses"]] == ["npu-container"]
    assert all(c["status"] == "True" for c in status["conditions"])
