"""Chip suggestions over REST, and the isolation policy, on the guide cluster synced.

A chip made sick in the simulated hardware is registered unhealthy by the
device plugin; sync stores since when. Its wait is aged by moving that moment
back (time passing), not by sleeping.
"""

from __future__ import annotations

import logging
from datetime import timedelta

import pytest
from django.core.cache import cache
from django.core.management import call_command
from django.utils import timezone

from apps.audit.models import AuditEvent
from apps.inventory.choices import ChipIsolation
from apps.inventory.models import Chip
from apps.inventory.nodeconfig.policy import isolation_policy_run, policy_acts
from apps.inventory.nodeconfig.suggestions import ISOLATE, chip_suggestions
from simcluster import guide_data
from tests.polling import wait_for

NODE = guide_data.NODE_910B
HELD_UUID = guide_data.CHIPS_910B[6][0]  # the guide's npu-pod-910b runs on it


def _sync_until(predicate, what: str):
    def synced_and_true():
        call_command("sync", "--cluster", "sim", "--once")
        return predicate()

    return wait_for(synced_and_true, what, timeout=20)


@pytest.fixture
def sick(sim, synced, settings) -> Chip:
    """Chip 6 of the 910B4 node (holding npu-pod-910b) registered unhealthy."""
    settings.ISOLATION_SUGGEST_AFTER_SECONDS = 600
    sim.set_chip_health(NODE, 6, False)
    return _sync_until(
        lambda: Chip.objects.filter(uuid=HELD_UUID, healthy=False).first(),
        "chip 6 synced unhealthy",
    )


def _age(chip: Chip, minutes: int) -> None:
    Chip.objects.filter(pk=chip.pk).update(
        health_since=timezone.now() - timedelta(minutes=minutes)
    )


def test_a_chip_sick_past_the_setting_is_offered_with_the_slices_it_holds(
    sick, synced, viewer_client
):
    url = f"/api/clusters/{synced.pk}/chip-suggestions/"
    assert sick.health_since is not None
    first = viewer_client.get(url)
    assert first.status_code == 200, first.content
    # Sick for seconds: not yet (the guide's own sick chip, index 5, neither).
    assert [s["chip"]["uuid"] for s in first.json()["suggestions"]] == []

    _age(sick, 11)
    body = viewer_client.get(url).json()
    (offer,) = [s for s in body["suggestions"] if s["chip"]["uuid"] == HELD_UUID]
    assert offer["action"] == "isolate"
    assert offer["chip"] == {
        "id": sick.pk,
        "uuid": HELD_UUID,
        "node": NODE,
        "index": 6,
        "common_word": "Ascend910B4",
    }
    assert offer["slices"] == [
        {"namespace": "default", "pod_name": "npu-pod-910b", "request": None}
    ]
    assert "unhealthy for 11m" in offer["why"]
    assert body["rules"]["suggest_after_seconds"] == 600
    assert body["rules"]["auto_isolate"] is False


def test_without_prometheus_no_restore_is_offered_and_the_answer_says_why(
    sick, synced, viewer_client, settings
):
    settings.PROMETHEUS_URL = ""
    Chip.objects.filter(pk=sick.pk).update(
        isolation=ChipIsolation.ISOLATED, registered=False
    )
    body = viewer_client.get(f"/api/clusters/{synced.pk}/chip-suggestions/").json()
    assert body["restore_available"] is False
    assert "Prometheus" in body["restore_reason"]
    assert "PROMETHEUS_URL" in body["restore_reason"]
    assert [s for s in body["suggestions"] if s["action"] == "restore"] == []


def test_an_unknown_cluster_is_a_404(viewer_client, db):
    assert viewer_client.get("/api/clusters/999/chip-suggestions/").status_code == 404


def test_the_policy_switched_off_does_nothing(sick, synced, settings):
    _age(sick, 60)
    settings.ISOLATION_AUTO_ISOLATE = False
    settings.ISOLATION_AUTO_RESTORE = False
    report = isolation_policy_run()
    assert (report.acted, report.refused, report.failed) == ([], {}, {})
    sick.refresh_from_db()
    assert sick.isolation == ChipIsolation.NONE
    assert not AuditEvent.objects.filter(action__startswith="chip.").exists()


def test_the_policy_switched_on_acts_on_the_offered_chips(sick, synced, settings):
    """What it acts on, through the pure decision: chip_isolate itself needs the
    node config's publish (``isolation_hooks.node_filter_set``), not on this
    branch. INTEGRATOR: once it lands, extend this test to run
    ``isolation_policy_run()`` and assert the chip is ``isolating`` with an
    audit row ``chip.isolate`` by ``policy`` whose reason names
    ISOLATION_AUTO_ISOLATE."""
    _age(sick, 60)
    settings.ISOLATION_AUTO_ISOLATE = True
    acts = policy_acts(
        chip_suggestions(synced).suggestions,
        auto_isolate=settings.ISOLATION_AUTO_ISOLATE,
        auto_restore=settings.ISOLATION_AUTO_RESTORE,
    )
    assert [(a.action, a.uuid) for a in acts] == [(ISOLATE, HELD_UUID)]
    assert acts[0].reason.startswith("ISOLATION_AUTO_ISOLATE: ")
    assert "unhealthy for 1h 0m" in acts[0].reason


def test_a_refusal_is_logged_once_and_does_not_stop_the_other_chips(
    sim, sick, synced, settings, caplog
):
    # A second sick chip. The guide's device plugin (v1.1.0, no
    # --node_config_file) reads no node config: both are refused before
    # anything is written, every tick.
    sim.set_chip_health(NODE, 1, False)
    other = _sync_until(
        lambda: Chip.objects.filter(node__name=NODE, index=1, healthy=False).first(),
        "chip 1 synced unhealthy",
    )
    _age(sick, 60)
    _age(other, 60)
    cache.clear()  # what an earlier test's refusals left
    settings.ISOLATION_AUTO_ISOLATE = True
    with caplog.at_level(logging.WARNING, logger="apps.inventory.nodeconfig.policy"):
        first = isolation_policy_run()
        second = isolation_policy_run()
    assert set(first.refused) == {sick.pk, other.pk}
    assert set(second.refused) == {sick.pk, other.pk}
    assert all(
        why.startswith("invalid: ") and "does not read the node config" in why
        for why in first.refused.values()
    ), first.refused
    logged = [r.getMessage() for r in caplog.records]
    assert len(logged) == 2, logged  # once per chip, not once per tick
    assert any(
        HELD_UUID in line and "does not read the node config" in line for line in logged
    )
    for chip in (sick, other):
        chip.refresh_from_db()
        assert chip.isolation == ChipIsolation.NONE
