"""Health-driven suggestions: which chips to isolate, which to restore.

Two rules, both on figures the portal already has:

- **isolate** a chip in service (registered, not isolated) that the device
  plugin has registered as unhealthy for longer than
  ``ISOLATION_SUGGEST_AFTER_SECONDS`` (``Chip.health_since``, set by sync when
  the flag flips). The slices it holds come with it: isolating stops new work
  landing there, it does not move what runs (draining does);
- **restore** an isolated chip whose *hardware* health has been good for
  ``ISOLATION_RESTORE_AFTER_SECONDS``. The plugin no longer registers an
  isolated chip, so its registration flag is frozen; the health comes from
  the npu-exporter through Prometheus (``health_sources``), matched by UUID.
  Without that reader (no Prometheus), no restore is offered and the answer
  says why.

The rules are pure (:func:`isolation_suggestions`, :func:`restore_suggestions`)
over plain data; :func:`chip_suggestions` reads that data for one cluster.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from apps.common.alerting.evaluate import humanize_duration
from apps.inventory.choices import ChipIsolation
from apps.inventory.models import Chip, Cluster, Slice
from apps.inventory.nodeconfig.health_sources import (
    ChipHardware,
    HardwareReading,
    hardware_health,
    slice_requests,
)

ISOLATE = "isolate"
RESTORE = "restore"


@dataclass(frozen=True)
class ChipFacts:
    """A chip as the rules read it."""

    id: int
    uuid: str
    node: str
    index: int
    common_word: str
    registered: bool
    healthy: bool
    health_since: datetime | None
    isolation: str


@dataclass(frozen=True)
class HeldSlice:
    """A slice on the chip: its pod, and the portal request behind it if any."""

    namespace: str
    pod_name: str
    request: int | None = None


@dataclass(frozen=True)
class Suggestion:
    """One chip to act on, with why and since when."""

    action: str  # ISOLATE or RESTORE
    chip: ChipFacts
    why: str
    since: datetime
    slices: tuple[HeldSlice, ...] = ()


@dataclass(frozen=True)
class ChipSuggestions:
    """A cluster's suggestions; ``restore_reason`` says why none can be offered."""

    suggestions: tuple[Suggestion, ...]
    restore_available: bool
    restore_reason: str = ""


def _span(delta: timedelta) -> str:
    """``11m 0s``-style, for the reasons people and the audit read."""
    return humanize_duration(max(0, int(delta.total_seconds())))


def isolation_suggestions(
    chips: Iterable[ChipFacts],
    slices: Mapping[int, Sequence[HeldSlice]],
    *,
    now: datetime,
    after: timedelta,
) -> list[Suggestion]:
    """The chips in service that have been registered unhealthy for longer than ``after``.

    A chip whose ``health_since`` is unknown is not offered: how long it has
    been sick cannot be told.
    """
    found = []
    for chip in chips:
        if not chip.registered or chip.isolation or chip.healthy:
            continue
        if chip.health_since is None or now - chip.health_since <= after:
            continue
        sick = now - chip.health_since
        found.append(
            Suggestion(
                action=ISOLATE,
                chip=chip,
                why=(
                    f"the device plugin has registered the chip unhealthy for"
                    f" {_span(sick)} (more than {_span(after)},"
                    " ISOLATION_SUGGEST_AFTER_SECONDS)"
                ),
                since=chip.health_since,
                slices=tuple(slices.get(chip.id, ())),
            )
        )
    return found


def healthy_since(hardware: ChipHardware) -> datetime | None:
    """Since when the chip's hardware has been healthy in every sample seen
    (None: unhealthy now). Never bad within the window: since its first sample."""
    if not hardware.healthy:
        return None
    return hardware.last_unhealthy or hardware.first_seen


def restore_suggestions(
    chips: Iterable[ChipFacts],
    slices: Mapping[int, Sequence[HeldSlice]],
    hardware: Mapping[str, ChipHardware],
    *,
    now: datetime,
    after: timedelta,
) -> list[Suggestion]:
    """The isolated chips whose hardware has been healthy for at least ``after``.

    Only a chip whose isolation is proved (``isolated``) is offered: one still
    isolating or restoring is waiting for its proof. A chip the exporter does
    not report is not offered.
    """
    found = []
    for chip in chips:
        if chip.isolation != ChipIsolation.ISOLATED:
            continue
        seen = hardware.get(chip.uuid)
        since = healthy_since(seen) if seen is not None else None
        if since is None or now - since < after:
            continue
        found.append(
            Suggestion(
                action=RESTORE,
                chip=chip,
                why=(
                    f"the npu-exporter has reported the chip's hardware healthy for"
                    f" {_span(now - since)} (at least {_span(after)},"
                    " ISOLATION_RESTORE_AFTER_SECONDS)"
                ),
                since=since,
                slices=tuple(slices.get(chip.id, ())),
            )
        )
    return found


def restore_window_seconds(after_seconds: int) -> int:
    """How far back the hardware health is read: twice the restore rule's
    span, so that a chip healthy for all of it is well past the rule."""
    return max(60, 2 * after_seconds)


# -- reading one cluster ---------------------------------------------------------------


def _chip_facts(cluster: Cluster) -> list[ChipFacts]:
    """The chips either rule may offer: sick in service, or isolated."""
    rows = (
        Chip.objects.filter(cluster=cluster)
        .filter(
            Q(registered=True, healthy=False, isolation="")
            | Q(isolation=ChipIsolation.ISOLATED)
        )
        .select_related("node")
        .order_by("node__name", "index", "uuid")
    )
    return [
        ChipFacts(
            id=c.pk,
            uuid=c.uuid,
            node=c.node.name,
            index=c.index,
            common_word=c.common_word,
            registered=c.registered,
            healthy=c.healthy,
            health_since=c.health_since,
            isolation=c.isolation,
        )
        for c in rows
    ]


def _held_slices(cluster: Cluster, chip_ids: list[int]) -> dict[int, list[HeldSlice]]:
    """The pods holding slices on these chips (a pod's containers once)."""
    pods = list(
        Slice.objects.filter(cluster=cluster, chip_id__in=chip_ids)
        .order_by("chip_id", "namespace", "pod_name")
        .values_list("chip_id", "namespace", "pod_name")
        .distinct()
    )
    requests = slice_requests(cluster, {(ns, pod) for _, ns, pod in pods})
    held: dict[int, list[HeldSlice]] = defaultdict(list)
    for chip_id, namespace, pod in pods:
        held[chip_id].append(HeldSlice(namespace, pod, requests.get((namespace, pod))))
    return held


def chip_suggestions(cluster: Cluster, now: datetime | None = None) -> ChipSuggestions:
    """The isolations and restores the rules offer for ``cluster`` now."""
    now = now or timezone.now()
    chips = _chip_facts(cluster)
    held = _held_slices(cluster, [c.id for c in chips])
    found = isolation_suggestions(
        chips,
        held,
        now=now,
        after=timedelta(seconds=settings.ISOLATION_SUGGEST_AFTER_SECONDS),
    )
    isolated = [c for c in chips if c.isolation == ChipIsolation.ISOLATED]
    restore_after = settings.ISOLATION_RESTORE_AFTER_SECONDS
    reading = (
        hardware_health(cluster, restore_window_seconds(restore_after))
        if isolated
        else HardwareReading(available=True, reason="no chip is isolated")
    )
    if reading.available:
        found += restore_suggestions(
            isolated,
            held,
            reading.chips,
            now=now,
            after=timedelta(seconds=restore_after),
        )
    return ChipSuggestions(
        suggestions=tuple(found),
        restore_available=reading.available,
        restore_reason=reading.reason,
    )
