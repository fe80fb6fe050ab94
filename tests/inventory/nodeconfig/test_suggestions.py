"""The health rules behind the chip suggestions, and what the policy acts on (pure)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from apps.inventory.choices import ChipIsolation
from apps.inventory.nodeconfig.health_sources import ChipHardware
from apps.inventory.nodeconfig.policy import policy_acts
from apps.inventory.nodeconfig.suggestions import (
    ISOLATE,
    RESTORE,
    ChipFacts,
    HeldSlice,
    healthy_since,
    isolation_suggestions,
    restore_suggestions,
)

NOW = datetime(2026, 12, 7, 12, 0, 0, tzinfo=UTC)
TEN_MINUTES = timedelta(minutes=10)
HALF_HOUR = timedelta(minutes=30)


def chip(n: int, **facts) -> ChipFacts:
    values = {
        "id": n,
        "uuid": f"UUID-{n}",
        "node": "node-a",
        "index": n,
        "common_word": "Ascend910B4",
        "registered": True,
        "healthy": True,
        "health_since": NOW - timedelta(days=1),
        "isolation": ChipIsolation.NONE,
    }
    return ChipFacts(**{**values, **facts})


def test_a_chip_sick_longer_than_the_setting_is_offered_with_its_slices() -> None:
    sick_long = chip(1, healthy=False, health_since=NOW - timedelta(minutes=11))
    sick_short = chip(2, healthy=False, health_since=NOW - timedelta(minutes=9))
    well = chip(3)
    held = {1: [HeldSlice("team-a", "train-0", 42), HeldSlice("ops", "foreign")]}
    found = isolation_suggestions(
        [sick_long, sick_short, well], held, now=NOW, after=TEN_MINUTES
    )
    assert [(s.action, s.chip.uuid) for s in found] == [(ISOLATE, "UUID-1")]
    (offer,) = found
    assert offer.since == NOW - timedelta(minutes=11)
    assert offer.slices == (
        HeldSlice("team-a", "train-0", 42),
        HeldSlice("ops", "foreign", None),
    )
    assert "unhealthy for 11m 0s" in offer.why
    assert "more than 10m 0s" in offer.why


def test_only_a_chip_in_service_with_a_known_start_is_offered_for_isolation() -> None:
    long_ago = NOW - timedelta(hours=2)
    chips = [
        chip(1, healthy=False, health_since=long_ago, registered=False),
        chip(2, healthy=False, health_since=long_ago, isolation="isolating"),
        chip(3, healthy=False, health_since=long_ago, isolation="isolated"),
        chip(4, healthy=False, health_since=None),
        chip(5, healthy=False, health_since=NOW - TEN_MINUTES),  # not longer
        chip(6, healthy=False, health_since=long_ago),
    ]
    found = isolation_suggestions(chips, {}, now=NOW, after=TEN_MINUTES)
    assert [s.chip.id for s in found] == [6]


def test_healthy_since_is_the_last_bad_sample_or_the_first_one_seen() -> None:
    first = NOW - timedelta(hours=1)
    assert healthy_since(ChipHardware(healthy=True, first_seen=first)) == first
    bad = NOW - timedelta(minutes=5)
    assert healthy_since(ChipHardware(True, first, last_unhealthy=bad)) == bad
    assert healthy_since(ChipHardware(False, first, last_unhealthy=NOW)) is None


def test_an_isolated_chip_healthy_long_enough_in_hardware_is_offered_for_restore() -> (
    None
):
    isolated = [
        chip(n, isolation=ChipIsolation.ISOLATED, registered=False, healthy=False)
        for n in (1, 2, 3, 4)
    ]
    restoring = chip(5, isolation=ChipIsolation.RESTORING, registered=False)
    start = NOW - timedelta(hours=1)
    hardware = {
        # healthy throughout the window: since its first sample
        "UUID-1": ChipHardware(True, start),
        # bad 20 minutes ago: not yet half an hour
        "UUID-2": ChipHardware(True, start, last_unhealthy=NOW - timedelta(minutes=20)),
        # bad 40 minutes ago: good for 40 minutes
        "UUID-3": ChipHardware(True, start, last_unhealthy=NOW - timedelta(minutes=40)),
        # UUID-4: the exporter does not report it
        "UUID-5": ChipHardware(True, start),
    }
    found = restore_suggestions(
        [*isolated, restoring],
        {3: [HeldSlice("team-a", "left-behind")]},
        hardware,
        now=NOW,
        after=HALF_HOUR,
    )
    assert [(s.action, s.chip.uuid, s.since) for s in found] == [
        (RESTORE, "UUID-1", start),
        (RESTORE, "UUID-3", NOW - timedelta(minutes=40)),
    ]
    assert found[1].slices == (HeldSlice("team-a", "left-behind"),)
    assert "hardware healthy for 40m 0s" in found[1].why


def test_an_isolated_chip_sick_now_in_hardware_is_not_offered() -> None:
    isolated = chip(1, isolation=ChipIsolation.ISOLATED, registered=False)
    hardware = {"UUID-1": ChipHardware(False, NOW - timedelta(hours=2))}
    assert restore_suggestions([isolated], {}, hardware, now=NOW, after=HALF_HOUR) == []


def test_the_policy_acts_only_on_the_rules_switched_on_with_the_figures() -> None:
    sick = chip(1, healthy=False, health_since=NOW - timedelta(minutes=15))
    isolated = chip(2, isolation=ChipIsolation.ISOLATED, registered=False)
    suggestions = [
        *isolation_suggestions([sick], {}, now=NOW, after=TEN_MINUTES),
        *restore_suggestions(
            [isolated],
            {},
            {"UUID-2": ChipHardware(True, NOW - timedelta(hours=1))},
            now=NOW,
            after=HALF_HOUR,
        ),
    ]
    assert len(suggestions) == 2
    off = policy_acts(suggestions, auto_isolate=False, auto_restore=False)
    assert off == []
    only_isolate = policy_acts(suggestions, auto_isolate=True, auto_restore=False)
    assert [(a.action, a.chip_id) for a in only_isolate] == [(ISOLATE, 1)]
    (act,) = only_isolate
    assert act.reason.startswith("ISOLATION_AUTO_ISOLATE: ")
    assert "unhealthy for 15m 0s" in act.reason
    assert "since 2026-12-07 11:45:00Z" in act.reason
    both = policy_acts(suggestions, auto_isolate=True, auto_restore=True)
    assert [(a.action, a.uuid) for a in both] == [
        (ISOLATE, "UUID-1"),
        (RESTORE, "UUID-2"),
    ]
    assert both[1].reason.startswith("ISOLATION_AUTO_RESTORE: ")
