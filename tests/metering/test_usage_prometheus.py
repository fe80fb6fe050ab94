"""A known utilization profile, through the simulated npu-exporter and a real
Prometheus, into the portal's numbers: use now and over time, the flags, idle
detection, slice-hours and a cost split that sums to the card's cost.

A 310P3 chip (8 AICores) holds three pinned slices, and a 910B4 chip (20
AICores, 32 GB) is filled by two vir10_3c_16g:

  team-busy/busy    310P3 vir04 (4 AICores)  80% AICore
  team-other/idle   310P3 vir02 (2 AICores)   0%                      -> idle
  team-other/hog    310P3 vir01 (1 AICore)   50%, 150% of its HBM     -> over_memory
  team-busy/train   910B4 vir10 (10 AICores) 80%
  team-other/park   910B4 vir10 (10 AICores)  0%                      -> idle
"""

from __future__ import annotations

from datetime import UTC, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.utils import timezone
from kubernetes import client, config

from apps.inventory.models import Chip, Slice
from apps.metering.ledger import bookings_refresh
from apps.metering.models import ChipPrice
from simcluster.profiles import WORKLOAD_ANNOTATION
from tests.polling import wait_for
from tests.simcluster.npu_pods import CHIP2_310P, VIR01, VIR02, VIR04

pytestmark = pytest.mark.slow

VIR10 = 16384  # MB of the 910B4's vir10_3c_16g (10 AICores)
# pod: (namespace, chip type, memory MB, workload)
PROFILE = {
    "busy": ("team-busy", "Ascend310P", VIR04, "busy:80"),
    "idle": ("team-other", "Ascend310P", VIR02, "idle"),
    "hog": ("team-other", "Ascend310P", VIR01, "hog:150"),
    "train": ("team-busy", "Ascend910B4", VIR10, "busy:80"),
    "park": ("team-other", "Ascend910B4", VIR10, "idle"),
}
PRICE_910B = Decimal("360000")  # per card-hour: 10 s of the card is 1000.00
CHIP_PERCENT = (80 * 4 + 0 * 2 + 50 * 1) / 8  # the 310P3, AICore-weighted: 46.25


def pinned_pod(
    name: str, chip_type: str, memory: int, workload: str, uuid: str
) -> dict[str, Any]:
    """A slice pod pinned to one chip (HAMi's scheduler honours the pin)."""
    limits = {
        f"huawei.com/{chip_type}": "1",
        f"huawei.com/{chip_type}-memory": str(memory),
    }
    return {
        "metadata": {
            "name": name,
            "annotations": {
                f"hami.io/use-{chip_type}-uuid": uuid,
                WORKLOAD_ANNOTATION: workload,
            },
        },
        "spec": {
            "schedulerName": "hami-scheduler",
            "containers": [
                {
                    "name": "worker",
                    "image": "ascend:latest",
                    "resources": {"limits": limits},
                }
            ],
        },
    }


@pytest.fixture
def core(sim, tmp_path):
    kubeconfig = sim.write_kubeconfig(tmp_path / "profile-kubeconfig")
    return client.CoreV1Api(
        config.new_client_from_config(config_file=str(Path(kubeconfig)))
    )


@pytest.fixture
def profile(synced, core, prometheus, settings):
    """The five slices running, synced, booked, and scraped by Prometheus."""
    settings.PROMETHEUS_URL = prometheus.url
    settings.PROMETHEUS_STEP_SECONDS = 1
    settings.IDLE_SLICE_AFTER_SECONDS = 4
    empty_910b = Chip.objects.filter(
        cluster=synced, common_word="Ascend910B4", slots_used=0
    ).first()
    chips = {"Ascend310P": CHIP2_310P, "Ascend910B4": empty_910b.uuid}
    for namespace in {ns for ns, *_ in PROFILE.values()}:
        core.create_namespace({"metadata": {"name": namespace}})
    for name, (namespace, chip_type, memory, workload) in PROFILE.items():
        core.create_namespaced_pod(
            namespace, pinned_pod(name, chip_type, memory, workload, chips[chip_type])
        )

    def bound() -> bool:
        """the five pods running on their slices"""
        pods = [core.read_namespaced_pod(n, ns) for n, (ns, *_) in PROFILE.items()]
        return all(
            p.status.phase == "Running"
            and (p.metadata.annotations or {}).get("hami.io/bind-phase") == "success"
            for p in pods
        )

    wait_for(bound, timeout=30)
    call_command("sync", "--cluster", "sim", "--once")
    chip_310p = Chip.objects.get(cluster=synced, uuid=CHIP2_310P)
    chip_910b = Chip.objects.get(pk=empty_910b.pk)
    assert Slice.objects.filter(chip=chip_310p).count() == 3
    assert chip_910b.aicore_used == chip_910b.aicore == 20  # full
    opened, _ = bookings_refresh(synced, now=timezone.now())
    assert opened >= 5
    # Every series of the five in Prometheus before a measured window starts.
    wait_for(
        lambda: (
            len(
                prometheus.query(
                    f'vnpu_pod_aicore_utilization{{pod_name=~"{"|".join(PROFILE)}"}}'
                )
            )
            == 5
        ),
        "the five vNPU series in Prometheus",
        timeout=30,
    )
    # Only the 910B4 has a price: its card-hour is the cost checked below.
    ChipPrice.objects.create(common_word="Ascend910B4", price_per_hour=PRICE_910B)
    ChipPrice.objects.create(common_word="Ascend310P", price_per_hour=Decimal(0))
    return chip_310p


def _samples_since(prometheus, start) -> int:
    seconds = max(1, int((timezone.now() - start).total_seconds()))
    rows = prometheus.query(
        f'count_over_time(vnpu_pod_aicore_utilization{{pod_name="busy"}}[{seconds}s])'
    )
    return int(float(rows[0]["value"][1])) if rows else 0


def test_the_portal_reports_what_the_profile_did(
    profile, prometheus, viewer_client, synced
):
    start = timezone.now().replace(microsecond=0) + timedelta(seconds=1)
    # Twelve scrapes (one a second) inside the window: a condition, not a sleep.
    wait_for(
        lambda: _samples_since(prometheus, start) >= 12,
        "12 scrapes in the window",
        timeout=40,
    )
    end = timezone.now().replace(microsecond=0)
    hours = (end - start).total_seconds() / 3600

    answer = viewer_client.get(
        "/api/usage/report/",
        {
            "cluster": synced.id,
            "group_by": "namespace",
            "start": start.isoformat(),
            "end": end.isoformat(),
        },
    )
    assert answer.status_code == 200, answer.content
    report = answer.json()
    assert report["metrics"]["available"] is True, report["metrics"]
    rows = {r["group"]: r for r in report["rows"]}
    busy, other = rows["team-busy"], rows["team-other"]
    # Booked time is the ledger's: exact.
    assert busy["slices"] == 2
    assert busy["slice_hours"] == pytest.approx(2 * hours, rel=1e-6)
    assert other["slice_hours"] == pytest.approx(3 * hours, rel=1e-6)
    assert busy["card_hours"] == pytest.approx(hours * (4 / 8 + 10 / 20), rel=1e-6)
    assert other["card_hours"] == pytest.approx(
        hours * (2 / 8 + 1 / 8 + 10 / 20), rel=1e-6
    )
    # Used and idle are Prometheus' samples, one a second: within two steps.
    step_hours = 2 / 3600
    assert busy["used_slice_hours"] == pytest.approx(1.6 * hours, abs=1.6 * step_hours)
    assert busy["idle_slice_hours"] == pytest.approx(0, abs=1e-9)
    # Prometheus saw the whole window (within a step): used is of all of it.
    assert busy["measured_slice_hours"] == pytest.approx(2 * hours, abs=2 * step_hours)
    assert other["used_slice_hours"] == pytest.approx(0.5 * hours, abs=0.5 * step_hours)
    assert other["idle_slice_hours"] == pytest.approx(2 * hours, abs=2 * step_hours)
    # The 910B4 was full: its two slices' costs add up to exactly the card's.
    card_cost = (PRICE_910B * Decimal(repr(hours))).quantize(Decimal("0.01"))
    assert Decimal(busy["cost"]) == pytest.approx(card_cost / 2, abs=Decimal("0.01"))
    assert Decimal(busy["cost"]) + Decimal(other["cost"]) == pytest.approx(
        card_cost, abs=Decimal("0.01")
    )
    assert report["unpriced"] == []


def test_use_now_the_flags_and_the_history(profile, prometheus, viewer_client, synced):
    chip = profile

    # Idle for IDLE_SLICE_AFTER_SECONDS (4 s) of samples, and old enough.
    def flagged() -> dict | None:
        body = viewer_client.get("/api/usage/slices/", {"cluster": synced.id}).json()
        mine = {s["pod_name"]: s for s in body["results"] if s["pod_name"] in PROFILE}
        idle = all("idle" in mine[pod]["flags"] for pod in ("idle", "park"))
        return mine if idle else None

    slices = wait_for(flagged, "the two idle slices flagged", timeout=30)
    assert slices["busy"]["aicore_used_percent"] == pytest.approx(80)
    assert slices["busy"]["flags"] == []
    assert slices["busy"]["idle_seconds"] == 0  # busy now: not idle at all
    assert slices["hog"]["flags"] == ["over_memory"]
    assert slices["hog"]["memory_used_mb"] == pytest.approx(1.5 * VIR01, rel=0.01)
    assert slices["park"]["flags"] == ["idle"]
    assert slices["idle"]["aicore_used_percent"] == 0
    assert slices["idle"]["idle_seconds"] >= 4
    idle_only = viewer_client.get(
        "/api/usage/slices/", {"cluster": synced.id, "flag": "idle"}
    ).json()
    assert "idle" in {s["pod_name"] for s in idle_only["results"]}
    assert "busy" not in {s["pod_name"] for s in idle_only["results"]}

    chips = viewer_client.get("/api/usage/chips/", {"cluster": synced.id}).json()
    row = next(c for c in chips["results"] if c["chip"] == chip.id)
    assert row["aicore_used_percent"] == pytest.approx(CHIP_PERCENT)
    assert row["aicore_booked"] == 7
    assert row["hardware_healthy"] is True
    assert row["flags"] == ["idle_slices", "over_memory"]
    assert row["slices"] == 3

    # One point a second: the slices began seconds ago.
    history = viewer_client.get(
        f"/api/usage/chips/{chip.id}/history/", {"step": 1}
    ).json()
    assert history["step"] == 1
    series = {s["name"]: s["points"] for s in history["series"]}
    assert {v for _, v in series["aicore_used_percent"][-3:]} == {CHIP_PERCENT}
    assert series["aicore_booked_percent"][-1][1] == pytest.approx(100 * 7 / 8)
    hog = Slice.objects.get(chip=chip, pod_name="hog")
    hog_history = viewer_client.get(
        f"/api/usage/slices/{hog.id}/history/", {"step": 1}
    ).json()
    hog_series = {s["name"]: s["points"] for s in hog_history["series"]}
    assert hog_series["memory_used_mb"][-1][1] > hog_series["memory_booked_mb"][-1][1]


def test_a_chip_whose_hardware_disagrees_with_its_registration_is_flagged(
    profile, sim, viewer_client, synced
):
    chip = profile
    assert chip.healthy is True  # HAMi's registration
    sim.set_exporter_chip_health(chip.node.name, chip.index, False)

    def mismatch() -> dict | None:
        """the chip flagged health_mismatch"""
        rows = viewer_client.get("/api/usage/chips/", {"cluster": synced.id}).json()[
            "results"
        ]
        row = next(c for c in rows if c["chip"] == chip.id)
        return row if "health_mismatch" in row["flags"] else None

    row = wait_for(mismatch, timeout=20)
    assert row["hardware_healthy"] is False
    assert row["healthy"] is True
    others = viewer_client.get("/api/usage/chips/", {"cluster": synced.id}).json()[
        "results"
    ]
    assert [c["chip"] for c in others if "health_mismatch" in c["flags"]] == [chip.id]


def test_the_derived_gauges_reach_metrics(
    profile, prometheus, client, settings, synced
):
    from apps.metering.services import metering_refresh

    settings.METRICS_TOKEN = "scrape"
    wait_for(
        lambda: _samples_since(prometheus, timezone.now() - timedelta(seconds=10)) >= 5,
        timeout=30,
    )
    metering_refresh()
    text = client.get("/metrics", HTTP_AUTHORIZATION="Bearer scrape").content.decode()
    assert 'vnpu_idle_slices{cluster="sim"}' in text
    assert 'vnpu_over_memory_slices{cluster="sim"} 1.0' in text
    assert (
        'vnpu_cost_month_to_date{cluster="sim",currency="CNY",queue="default"}' in text
    )


def test_the_chip_figures_are_kept_for_a_scrape_and_a_failure_is_not(
    synced, prometheus, viewer_client, settings
):
    from django.core.cache import cache

    settings.PROMETHEUS_URL = prometheus.url
    settings.USAGE_CACHE_SECONDS = 60
    cache.clear()
    first = viewer_client.get("/api/usage/chips/", {"cluster": synced.id}).json()
    assert first["metrics"]["available"] is True
    prometheus.stop()
    # Within the window: the same answer, without asking the stopped server.
    kept = viewer_client.get("/api/usage/chips/", {"cluster": synced.id}).json()
    assert kept["metrics"] == first["metrics"]
    assert [c["aicore_used_percent"] for c in kept["results"]] == [
        c["aicore_used_percent"] for c in first["results"]
    ]
    cache.clear()
    down = viewer_client.get("/api/usage/chips/", {"cluster": synced.id}).json()
    assert down["metrics"]["available"] is False
    # A failure is asked again next time, not kept for the window.
    assert cache.get(f"vnpu:usage:chips:{synced.pk}") is None


def test_a_past_period_is_measured_then_not_now_and_a_day_is_rolled_once(
    profile, prometheus, core, viewer_client, synced
):
    from apps.metering.models import RolledDay, UsageDay
    from apps.metering.rollup import days_roll
    from apps.metering.selectors import connect

    start = timezone.now().replace(microsecond=0) + timedelta(seconds=1)
    wait_for(lambda: _samples_since(prometheus, start) >= 6, "6 scrapes", timeout=30)
    end = timezone.now().replace(microsecond=0)
    params = {"cluster": synced.id, "group_by": "namespace"}
    window = {"start": start.isoformat(), "end": end.isoformat()}
    then = {
        r["group"]: r
        for r in viewer_client.get("/api/usage/report/", {**params, **window}).json()[
            "rows"
        ]
    }

    # The busy 910B4 pod goes; wait until a query at "now" over the window's
    # length would no longer see the window at all.
    core.delete_namespaced_pod("train", "team-busy")
    wait_for(
        lambda: (
            not prometheus.query('vnpu_pod_aicore_utilization{pod_name="train"}')
            and timezone.now() - end > (end - start) + timedelta(seconds=2)
        ),
        "train gone from Prometheus and the window a window behind",
        timeout=60,
    )
    later = {
        r["group"]: r
        for r in viewer_client.get("/api/usage/report/", {**params, **window}).json()[
            "rows"
        ]
    }
    assert later["team-busy"]["used_slice_hours"] == pytest.approx(
        then["team-busy"]["used_slice_hours"], abs=2 * 0.8 / 3600
    )
    assert later["team-busy"]["used_slice_hours"] > 0

    # Today, rolled up as if it were over: stored once, per slice key.
    prom, vocabulary = connect(synced)
    tomorrow = timezone.now() + timedelta(days=1)
    # The guide's own pods began days ago: those days are rolled too, three a run.
    rolled = [days_roll(synced, prom, vocabulary, now=tomorrow) for _ in range(6)]
    assert rolled[0] >= 1
    assert rolled[-1] == 0
    today = timezone.now().astimezone(UTC).date()
    assert RolledDay.objects.filter(cluster=synced, day=today).exists()
    stored = {u.pod_name: u for u in UsageDay.objects.filter(cluster=synced, day=today)}
    assert {"busy", "idle", "hog", "park"} <= set(stored)
    assert stored["busy"].used_hours == pytest.approx(
        0.8 * stored["busy"].seen_hours, rel=0.05
    )
    assert stored["park"].idle_hours == pytest.approx(
        stored["park"].seen_hours, rel=0.05
    )
    assert days_roll(synced, prom, vocabulary, now=tomorrow) == 0
