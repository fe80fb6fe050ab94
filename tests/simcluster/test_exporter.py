"""The simulated npu-exporter: series, units and labels as MindCluster's, values
from the pods' workload profiles, slices from the pods' HAMi allocation."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes import client

from simcluster import profiles
from simcluster.promtext import CONTENT_TYPE
from tests.simcluster.npu_pods import (
    CHIP0_310P,
    CHIP1_310P,
    CHIP2_310P,
    NODE_310P,
    NODE_910B,
    VIR01,
    VIR02,
    VIR04,
    of_chip,
    of_pod,
    run_pod,
    scrape,
    scrape_text,
    slice_pod,
)

CHIP_LABELS = {
    "id",
    "model_name",
    "vdie_id",
    "pcie_bus_info",
    "namespace",
    "pod_name",
    "container_name",
}
VNPU_LABELS = {
    "id",
    "model_name",
    "v_dev_id",
    "aicore_count",
    "namespace",
    "pod_name",
    "container_name",
    "is_virtual",
}
NOW = 1_800_000_000.0


@pytest.fixture
def frozen(sim: Any) -> Any:
    """``sim`` with the exporter's clock stopped (the default mix's wave holds)."""
    sim.exporter.clock = lambda: NOW
    return sim


def test_series_labels_and_units(frozen: Any, core: client.CoreV1Api, wait_for) -> None:
    run_pod(core, wait_for, slice_pod("trainer", "busy:80"))
    status, content_type, _ = scrape_text(
        frozen, f"/exporter/nodes/{NODE_310P}/metrics"
    )
    assert (status, content_type) == (200, CONTENT_TYPE)
    series = scrape(frozen, NODE_310P)
    chip_names = {
        "npu_chip_info_utilization",
        "npu_chip_info_hbm_used_memory",
        "npu_chip_info_hbm_total_memory",
        "npu_chip_info_health_status",
    }
    vnpu_names = {
        "vnpu_pod_aicore_utilization",
        "vnpu_pod_total_memory",
        "vnpu_pod_used_memory",
    }
    assert set(series) == chip_names | vnpu_names
    for name in chip_names:
        assert len(series[name]) == 4  # the 310P node's chips
        for labels, _ in series[name]:
            assert set(labels) == CHIP_LABELS
            assert labels["model_name"] == "Ascend310P3"
            assert labels["namespace"] == labels["pod_name"] == ""
    vdie = {labels["id"]: labels["vdie_id"] for labels, _ in series[name]}
    assert (vdie["0"], vdie["1"]) == (CHIP0_310P, CHIP1_310P)
    assert {v for _, v in series["npu_chip_info_hbm_total_memory"]} == {24576}
    for name in vnpu_names:
        assert len(series[name]) == 2  # the fixture's pod and ours
        for labels, _ in series[name]:
            assert set(labels) == VNPU_LABELS
            assert labels["is_virtual"] == "true"
    [(labels, total)] = of_pod(series["vnpu_pod_total_memory"], "trainer")
    assert labels == {
        "id": "1",
        "model_name": "Ascend310P3",
        "v_dev_id": "116",  # 100 + 16 per chip index + the first free slot
        "aicore_count": "2",  # vir02
        "namespace": "default",
        "pod_name": "trainer",
        "container_name": "worker-0",
        "is_virtual": "true",
    }
    assert total == VIR02 * 1024  # KB


def test_values_follow_the_profiles(
    frozen: Any, core: client.CoreV1Api, wait_for
) -> None:
    for name, workload, memory, chip in (
        ("busy", "busy:80", VIR02, CHIP1_310P),
        ("idle", "idle", VIR01, CHIP1_310P),
        ("hog", "hog:150", VIR02, CHIP1_310P),
        ("explicit", "aicore=30,hbm=70", VIR04, CHIP2_310P),
    ):
        run_pod(core, wait_for, slice_pod(name, workload, memory=memory, chip=chip))
    series = scrape(frozen, NODE_310P)
    util = series["vnpu_pod_aicore_utilization"]
    used = series["vnpu_pod_used_memory"]
    expected = {
        "busy": (80, 0.60 * VIR02),
        "idle": (0, 0.05 * VIR01),
        "hog": (50, 1.50 * VIR02),
        "explicit": (30, 0.70 * VIR04),
    }
    for name, (percent, used_mb) in expected.items():
        [(_, value)] = of_pod(util, name)
        assert value == percent
        [(_, kb)] = of_pod(used, name)
        assert kb == round(used_mb * 1024)


def test_chip_figures_are_the_slices_aicore_weighted(
    frozen: Any, core: client.CoreV1Api, wait_for
) -> None:
    run_pod(core, wait_for, slice_pod("a", "busy:80", memory=VIR02))  # 2 AICores
    run_pod(core, wait_for, slice_pod("b", "busy:30", memory=VIR04))  # 4 AICores
    run_pod(core, wait_for, slice_pod("c", "hog:150", memory=VIR01))  # 1 AICore
    series = scrape(frozen, NODE_310P)
    [(_, chip_util)] = of_chip(series["npu_chip_info_utilization"], 1)
    assert chip_util == pytest.approx((80 * 2 + 30 * 4 + 50 * 1) / 8, abs=0.01)
    [(_, hbm_used)] = of_chip(series["npu_chip_info_hbm_used_memory"], 1)
    vnpu_kb = sum(v for _, v in of_chip(series["vnpu_pod_used_memory"], 1))
    assert hbm_used == round(vnpu_kb / 1024)
    assert hbm_used == round(0.6 * VIR02 + 0.6 * VIR04 + 1.5 * VIR01)
    # The chip of the fixture's pod: its one AICore of eight, at its own figure.
    [(_, fixture_util)] = of_pod(series["vnpu_pod_aicore_utilization"], "npu-pod-310p")
    [(_, chip0)] = of_chip(series["npu_chip_info_utilization"], 0)
    assert chip0 == pytest.approx(fixture_util / 8, abs=0.01)
    # Idle chips are there, at zero.
    [(_, chip3)] = of_chip(series["npu_chip_info_utilization"], 3)
    assert chip3 == 0


def test_a_pod_that_ends_leaves_the_series(
    frozen: Any, core: client.CoreV1Api, wait_for
) -> None:
    def vnpus() -> dict[str, str]:
        series = scrape(frozen, NODE_310P)["vnpu_pod_aicore_utilization"]
        return {labels["pod_name"]: labels["v_dev_id"] for labels, _ in series}

    run_pod(core, wait_for, slice_pod("first", "busy:10"))
    run_pod(core, wait_for, slice_pod("second", "busy:20"))
    ids = vnpus()
    # One that finishes on its own (its containers exit), one that is deleted.
    short = slice_pod("short", "busy:90")
    short["metadata"]["annotations"]["simcluster.io/run-seconds"] = "3"
    core.create_namespaced_pod("default", short)
    wait_for(lambda: "short" in vnpus())
    core.delete_namespaced_pod("first", "default")

    def both_gone() -> dict[str, str] | None:
        found = vnpus()
        return found if {"first", "short"}.isdisjoint(found) else None

    left = wait_for(both_gone, timeout=15)
    assert core.read_namespaced_pod("short", "default").status.phase == "Succeeded"
    assert left == {"npu-pod-310p": "100", "second": ids["second"]}  # ids kept
    [(_, chip_util)] = of_chip(
        scrape(frozen, NODE_310P)["npu_chip_info_utilization"], 1
    )
    assert chip_util == pytest.approx(20 * 2 / 8)


def test_a_pod_of_two_containers_has_two_vnpus(
    frozen: Any, core: client.CoreV1Api, wait_for
) -> None:
    run_pod(core, wait_for, slice_pod("pair", "busy:40", memory=VIR01, containers=2))
    series = scrape(frozen, NODE_310P)["vnpu_pod_total_memory"]
    mine = of_pod(series, "pair")
    assert sorted(labels["container_name"] for labels, _ in mine) == [
        "worker-0",
        "worker-1",
    ]
    assert len({labels["v_dev_id"] for labels, _ in mine}) == 2


def test_targets_one_per_node_without_a_token(frozen: Any) -> None:
    status, content_type, body = scrape_text(frozen, "/exporter/targets")
    assert (status, content_type) == (200, "application/json")
    address = frozen.url.split("://", 1)[1]
    assert json.loads(body) == [
        {
            "targets": [address],
            "labels": {
                "__scheme__": "https",
                "__metrics_path__": f"/exporter/nodes/{node}/metrics",
                "node": node,
            },
        }
        for node in (NODE_310P, NODE_910B)
    ]
    assert scrape_text(frozen, "/exporter/nodes/no-such-node/metrics")[0] == 404


def test_the_exporter_is_spared_by_faults(frozen: Any) -> None:
    frozen.set_faults(error_500_rate=1.0, latency_ms=0)
    assert scrape_text(frozen, "/exporter/targets")[0] == 200
    assert scrape(frozen, NODE_910B)["npu_chip_info_health_status"]


def test_hardware_health_differs_from_the_registration(
    frozen: Any, core: client.CoreV1Api, raw
) -> None:
    def exporter_health(node: str) -> dict[str, float]:
        series = scrape(frozen, node)["npu_chip_info_health_status"]
        return {labels["id"]: value for labels, value in series}

    # The simulated hardware's sick chip: both say so.
    assert exporter_health(NODE_910B)["5"] == 0
    frozen.set_exporter_chip_health(NODE_310P, 2, False)
    assert exporter_health(NODE_310P) == {"0": 1, "1": 1, "2": 0, "3": 1}
    node = core.read_node(NODE_310P)
    registered = json.loads(
        node.metadata.annotations["hami.io/node-register-Ascend310P"]
    )
    assert registered[2]["health"] is True
    # The same through the control endpoint, and back to the hardware's view.
    status, _ = raw(
        "POST",
        "/simcluster/exporter-chips",
        {"node": NODE_310P, "index": 3, "healthy": False},
    )
    assert status == 200
    assert exporter_health(NODE_310P)["3"] == 0
    frozen.set_exporter_chip_health(NODE_310P, 2, None)
    assert exporter_health(NODE_310P)["2"] == 1
    status, _ = raw(
        "POST",
        "/simcluster/exporter-chips",
        {"node": NODE_310P, "index": 9, "healthy": False},
    )
    assert status == 404


def test_the_demo_keeps_an_idle_pod_and_a_hog(sim_factory, wait_for) -> None:
    demo = sim_factory(workload=True, workload_interval=0.2, seed=3)

    def residents() -> dict[str, tuple[float, float, float]] | None:
        found: dict[str, tuple[float, float, float]] = {}
        for node in (NODE_310P, NODE_910B):
            series = scrape(demo, node)
            for labels, util in series.get("vnpu_pod_aicore_utilization", []):
                if labels["pod_name"] in ("demo-idle", "demo-hog"):
                    [(_, used)] = of_pod(
                        series["vnpu_pod_used_memory"], labels["pod_name"]
                    )
                    [(_, total)] = of_pod(
                        series["vnpu_pod_total_memory"], labels["pod_name"]
                    )
                    found[labels["pod_name"]] = (util, used, total)
        return found if len(found) == 2 else None

    found = wait_for(residents)
    assert found["demo-idle"][0] == 0
    assert found["demo-hog"][1] == round(found["demo-hog"][2] * 1.4)


@pytest.mark.parametrize(
    ("text", "aicore", "hbm"),
    [
        ("busy:80", 80, 60),
        ("idle", 0, 5),
        ("hog:150", 50, 150),
        ("aicore=30,hbm=70", 30, 70),
        (" aicore = 12.5 , hbm = 0 ", 12.5, 0),
    ],
)
def test_profiles_parse(text: str, aicore: float, hbm: float) -> None:
    profile = profiles.parse(text)
    assert (profile.aicore_at(NOW), profile.hbm_percent) == (aicore, hbm)


@pytest.mark.parametrize("text", ["busy", "busy:x", "hog:-5", "aicore=3", "lazy"])
def test_unknown_profiles_fall_back_to_the_mix(text: str) -> None:
    with pytest.raises(ValueError, match=r"profile|percentage|could not convert"):
        profiles.parse(text)
    annotations = {profiles.WORKLOAD_ANNOTATION: text}
    assert profiles.profile_of("p", annotations) == profiles.default_for("p")


def test_the_default_mix() -> None:
    names = [f"demo-{n}" for n in range(3000)]
    mix = [profiles.default_for(name) for name in names]
    assert mix == [profiles.default_for(name) for name in names]  # deterministic
    busy = [p for p in mix if p.wave]
    idle = [p for p in mix if p.aicore_percent == 0]
    hogs = [p for p in mix if p.hbm_percent > 100]
    assert len(busy) + len(idle) + len(hogs) == len(mix)
    assert len(busy) / len(mix) == pytest.approx(1 / 2, abs=0.05)
    assert len(idle) / len(mix) == pytest.approx(1 / 3, abs=0.05)
    assert len(hogs) / len(mix) == pytest.approx(1 / 6, abs=0.05)
    assert {p.hbm_percent for p in hogs} <= set(range(110, 161))
    # The wave stays within 30-95 % and moves over a quarter of an hour.
    for profile in busy[:50]:
        seen = [profile.aicore_at(NOW + t) for t in range(0, 900, 30)]
        assert min(seen) >= 30
        assert max(seen) <= 95
        assert max(seen) - min(seen) > 15
