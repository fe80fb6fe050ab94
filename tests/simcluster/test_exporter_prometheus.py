"""A real Prometheus (Debian's binary) scrapes the simulated npu-exporters."""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes import client

from tests.simcluster.npu_pods import CHIP0_310P, NODE_310P, VIR02, run_pod, slice_pod

pytestmark = pytest.mark.slow


def test_prometheus_scrapes_the_sim(
    sim: Any, prometheus: Any, core: client.CoreV1Api, wait_for
) -> None:
    # Next to the fixture's pod (vir01, the default mix's wave), so that the
    # chip's figure weighs two slices of different sizes.
    run_pod(
        core, wait_for, slice_pod("trainer", "busy:80", memory=VIR02, chip=CHIP0_310P)
    )
    [sample] = prometheus.wait_until('vnpu_pod_aicore_utilization{pod_name="trainer"}')
    labels = sample["metric"]
    assert float(sample["value"][1]) == 80
    assert labels["node"] == NODE_310P  # from the service discovery
    assert (labels["id"], labels["aicore_count"], labels["namespace"]) == (
        "0",
        "2",
        "default",
    )
    # One query: the chip and its slices come from the same scrape of the node.
    where = f'node="{NODE_310P}",id="0"'
    both = prometheus.query(
        f"npu_chip_info_utilization{{{where}}} or vnpu_pod_aicore_utilization{{{where}}}"
    )
    [chip] = [s for s in both if s["metric"]["__name__"] == "npu_chip_info_utilization"]
    slices = [s for s in both if s is not chip]
    assert {s["metric"]["pod_name"] for s in slices} == {"trainer", "npu-pod-310p"}
    weighted = sum(
        float(s["value"][1]) * int(s["metric"]["aicore_count"]) for s in slices
    )
    assert float(chip["value"][1]) == pytest.approx(weighted / 8, abs=0.01)
    [total] = prometheus.query('vnpu_pod_total_memory{pod_name="trainer"} / 1024')
    assert float(total["value"][1]) == VIR02
