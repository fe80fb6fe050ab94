"""What the slices use and what they cost: bookings joined with Prometheus.

Every reader returns a ``MetricsStatus`` beside its rows: when Prometheus is
not configured, slow or refusing, the booked figures are still answered and
the used ones are None, with the reason.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db.models import Count, Q
from django.utils import timezone

from apps.inventory.models import Chip, Cluster, Slice
from apps.metering.models import Booking, ChipPrice
from apps.metering.prometheus import (
    MetricsStatus,
    MetricsUnavailable,
    Prometheus,
    prometheus,
)
from apps.metering.queries import (
    ChipRef,
    SliceKey,
    Vocabulary,
    chip_key,
    chip_measured,
    physical_chips,
    slice_key,
)
from apps.metering.report import Report, build_report
from apps.metering.rollup import measured_over

#: Prometheus refuses a range query of more points than this.
MAX_POINTS = 11_000
#: A history chart's default number of points.
CHART_POINTS = 300


def vocabulary_for(cluster: Cluster) -> Vocabulary:
    try:
        return Vocabulary.for_site(
            settings.PROMETHEUS_LABELS, settings.PROMETHEUS_SELECTOR, cluster.name
        )
    except ValueError as error:
        raise MetricsUnavailable(str(error)) from None


def connect(cluster: Cluster) -> tuple[Prometheus, Vocabulary]:
    """The configured Prometheus and this cluster's label vocabulary
    (MetricsUnavailable when there is none, or the label map is wrong)."""
    return prometheus(), vocabulary_for(cluster)


# -- now: per slice and per chip ------------------------------------------------------


@dataclass
class SliceSignal:
    """What Prometheus says of one slice key now."""

    aicore_used_percent: float | None = None
    memory_used_mb: float | None = None
    idle: float | None = None  # idle containers: present only when some are
    idle_seconds: float | None = None


def _slice_signals(
    prom: Prometheus, vocabulary: Vocabulary
) -> dict[SliceKey, SliceSignal]:
    queries = vocabulary.slices_now(
        settings.IDLE_SLICE_PERCENT, settings.IDLE_SLICE_AFTER_SECONDS
    )
    window = idle_lookback()
    # 120 steps: a subquery's cost is its steps times the slices (20,000).
    step = max(1, window // 120)
    queries["idle_seconds"] = vocabulary.slices_last_busy(
        settings.IDLE_SLICE_PERCENT, window, step
    )
    signals: dict[SliceKey, SliceSignal] = defaultdict(SliceSignal)
    for field, samples in prom.query_many(queries).items():
        for sample in samples:
            key = slice_key(vocabulary, sample.labels)
            if key is not None and math.isfinite(sample.value):
                setattr(signals[key], field, sample.value)
    return signals


def _slice_flags(signal: SliceSignal | None, *, memory_booked_mb: float) -> list[str]:
    if signal is None:
        return []
    flags = []
    if signal.idle:
        flags.append("idle")
    if signal.memory_used_mb is not None and signal.memory_used_mb > memory_booked_mb:
        flags.append("over_memory")
    return flags


def _slice_rows(cluster: Cluster) -> list[dict[str, Any]]:
    return list(
        Slice.objects.filter(cluster=cluster)
        .order_by("namespace", "pod_name", "container_index")
        .values(
            "id",
            "namespace",
            "pod_name",
            "container_index",
            "volcano_queue",
            "node_name",
            "chip_id",
            "chip__index",
            "common_word",
            "template",
            "aicore",
            "memory",
            "started_at",
        )
    )


def _row_key(row: dict[str, Any]) -> SliceKey:
    return row["node_name"], row["chip__index"] or 0, row["namespace"], row["pod_name"]


def _measured_slices(
    cluster: Cluster,
) -> tuple[MetricsStatus, dict[SliceKey, SliceSignal] | None]:
    try:
        prom, vocabulary = connect(cluster)
        return MetricsStatus.ok(), _slice_signals(prom, vocabulary)
    except MetricsUnavailable as error:
        return MetricsStatus.failed(error), None


def slices_usage(
    cluster: Cluster, *, flag: str | None = None
) -> tuple[MetricsStatus, list[dict[str, Any]]]:
    """Every slice of the cluster: booked, used now, idle for, flags."""
    now = timezone.now()
    status, signals = _measured_slices(cluster)
    results = []
    rows = _slice_rows(cluster)
    booked_per_key = _booked_per_key(rows)
    for row in rows:
        key = _row_key(row)
        signal = signals.get(key) if signals is not None else None
        flags = _slice_flags(signal, memory_booked_mb=booked_per_key[key])
        if flag and flag not in flags:
            continue
        idle_seconds = _idle_seconds(signal, row["started_at"], now)
        results.append(
            {
                "slice": row["id"],
                "namespace": row["namespace"],
                "pod_name": row["pod_name"],
                "container_index": row["container_index"],
                "queue": row["volcano_queue"],
                "node": row["node_name"],
                "chip": row["chip_id"],
                "chip_index": row["chip__index"],
                "common_word": row["common_word"],
                "template": row["template"],
                "aicore": row["aicore"],
                "memory_mb": row["memory"],
                "aicore_used_percent": signal.aicore_used_percent if signal else None,
                "memory_used_mb": signal.memory_used_mb if signal else None,
                "idle_seconds": idle_seconds,
                "flags": flags,
            }
        )
    return status, results


def idle_lookback() -> int:
    """How far back "idle for" looks: twice the idle threshold, an hour at least."""
    return max(3600, 2 * settings.IDLE_SLICE_AFTER_SECONDS)


def _idle_seconds(
    signal: SliceSignal | None, started_at: datetime | None, now: datetime
) -> float | None:
    """How long a slice has been idle: 0 while it is busy now; since its last
    busy moment (to the query's step) when it is idle; when it was not busy
    at all within the lookback, the lookback or its age, whichever is less
    (idle at least that long)."""
    if signal is None or signal.aicore_used_percent is None:
        return None
    if signal.aicore_used_percent > settings.IDLE_SLICE_PERCENT:
        return 0.0
    if signal.idle_seconds is not None:
        return min(signal.idle_seconds, idle_lookback())
    age = (now - started_at).total_seconds() if started_at else math.inf
    return float(min(age, idle_lookback()))


def _booked_per_key(rows: list[dict[str, Any]]) -> dict[SliceKey, float]:
    """Booked MB per slice key: a pod's containers on one chip are one key."""
    booked: dict[SliceKey, float] = defaultdict(float)
    for row in rows:
        booked[_row_key(row)] += row["memory"]
    return booked


def slice_counts(cluster: Cluster) -> tuple[MetricsStatus, dict[str, int]]:
    """How many slices are idle and over their memory now (two numbers from
    Prometheus, for the /metrics gauges: no per-slice answer)."""
    try:
        prom, vocabulary = connect(cluster)
        answers = prom.query_many(
            {
                "idle": f"count({vocabulary.idle_slices(settings.IDLE_SLICE_PERCENT, settings.IDLE_SLICE_AFTER_SECONDS)})",
                "over_memory": f"count({vocabulary.over_memory_slices()})",
            }
        )
    except MetricsUnavailable as error:
        return MetricsStatus.failed(error), {}
    # count() of nothing is an empty vector, not 0.
    return MetricsStatus.ok(), {
        name: int(samples[0].value) if samples else 0
        for name, samples in answers.items()
    }


def _measured_chips(
    cluster: Cluster,
) -> tuple[MetricsStatus, dict[ChipRef, dict[str, float]]]:
    """Prometheus' figures per chip, kept for USAGE_CACHE_SECONDS.

    They cannot change faster than Prometheus scrapes (15 s or more at most
    sites), while asking for 8,000 chips costs Prometheus most of a second:
    page loads and refreshes within the window share one answer (in the
    shared cache, so every web replica does). Failures are not kept.
    """
    key = f"vnpu:usage:chips:{cluster.pk}"
    if settings.USAGE_CACHE_SECONDS > 0:
        kept = cache.get(key)
        if kept is not None:
            return kept
    chip_now: dict[ChipRef, dict[str, float]] = defaultdict(dict)
    try:
        prom, vocabulary = connect(cluster)
        queries = vocabulary.chips_now(
            settings.IDLE_SLICE_PERCENT, settings.IDLE_SLICE_AFTER_SECONDS
        )
        answers = prom.query_many(queries)
    except MetricsUnavailable as error:
        return MetricsStatus.failed(error), {}
    # The slice counts come from vNPU series, which name the chip by its
    # exporter id only: put them on the UUID the chip series give that id.
    physical = physical_chips(
        vocabulary, (s.labels for samples in answers.values() for s in samples)
    )
    for field, samples in answers.items():
        for sample in samples:
            chip = chip_key(vocabulary, sample.labels)
            if chip is not None and math.isfinite(sample.value):
                chip = physical.get(chip, chip) if isinstance(chip, tuple) else chip
                chip_now[chip][field] = sample.value
    answer = (MetricsStatus.ok(), dict(chip_now))
    if settings.USAGE_CACHE_SECONDS > 0:
        cache.set(key, answer, timeout=settings.USAGE_CACHE_SECONDS)
    return answer


def chips_usage(cluster: Cluster) -> tuple[MetricsStatus, list[dict[str, Any]]]:
    """Every chip of the cluster: booked and used AICore and HBM, health, flags."""
    status, chip_now = _measured_chips(cluster)
    slices_per_chip = dict(
        Slice.objects.filter(cluster=cluster, chip__isnull=False)
        .values("chip_id")
        .annotate(n=Count("id"))
        .values_list("chip_id", "n")
    )

    results = []
    chips = (
        Chip.objects.filter(cluster=cluster)
        .order_by("node__name", "index")
        .values_list(
            "id",
            "node__name",
            "index",
            "uuid",
            "common_word",
            "healthy",
            "aicore",
            "aicore_used",
            "memory",
            "memory_used",
        )
    )
    for (
        chip_id,
        node,
        index,
        uuid,
        word,
        healthy,
        aicore,
        aicore_used,
        memory,
        memory_used,
    ) in chips:
        measured = chip_measured(chip_now, (node, index, uuid))
        hardware = measured.get("hardware_healthy")
        hardware_healthy = None if hardware is None else hardware >= 1
        flags = []
        if hardware_healthy is not None and hardware_healthy != healthy:
            flags.append("health_mismatch")
        if measured.get("idle_slices"):
            flags.append("idle_slices")
        if measured.get("over_memory_slices"):
            flags.append("over_memory")
        results.append(
            {
                "chip": chip_id,
                "node": node,
                "index": index,
                "common_word": word,
                "healthy": healthy,
                "hardware_healthy": hardware_healthy,
                "aicore": aicore,
                "aicore_booked": aicore_used,
                "aicore_used_percent": measured.get("aicore_used_percent"),
                "memory_mb": memory,
                "memory_booked_mb": memory_used,
                "memory_used_mb": measured.get("memory_used_mb"),
                "slices": slices_per_chip.get(chip_id, 0),
                "flags": flags,
            }
        )
    return status, results


# -- over time ------------------------------------------------------------------------


@dataclass(frozen=True)
class Window:
    start: datetime
    end: datetime
    step: int


def window_for(
    start: datetime | None, end: datetime | None, step: int | None
) -> Window:
    """The chart's window: the last hour by default, about CHART_POINTS points."""
    end = end or timezone.now()
    start = start or end - timedelta(hours=1)
    seconds = (end - start).total_seconds()
    return Window(start, end, step or max(1, math.ceil(seconds / CHART_POINTS)))


def _series_points(prom: Prometheus, query: str, window: Window) -> list[list[float]]:
    series = prom.query_range(
        query, start=window.start, end=window.end, step=window.step
    )
    points = series[0].points if series else []
    return [[t, round(v, 3)] for t, v in points if math.isfinite(v)]


def _measured_series(
    prom: Prometheus, queries: dict[str, str], window: Window
) -> list[dict[str, Any]]:
    """The range queries of a chart, asked at once within one timeout."""
    points = prom.gather(
        {
            name: (lambda q=q: _series_points(prom, q, window))
            for name, q in queries.items()
        }
    )
    return [
        {"name": name, "unit": "%" if name.endswith("percent") else "MB", "points": p}
        for name, p in points.items()
    ]


def _booked_steps(
    bookings: list[Booking], window: Window, value: Any
) -> list[list[float]]:
    """A series from the ledger: ``value(bookings held at t)`` at every step."""
    points = []
    t = math.ceil(window.start.timestamp() / window.step) * window.step
    end = window.end.timestamp()
    spans = [
        (
            b.started_at.timestamp(),
            b.ended_at.timestamp() if b.ended_at else math.inf,
            b,
        )
        for b in bookings
    ]
    while t <= end:
        held = [b for since, until, b in spans if since <= t < until]
        points.append([float(t), value(held)])
        t += window.step
    return points


def _overlapping(bookings: Any, window: Window) -> list[Booking]:
    return list(
        bookings.filter(started_at__lt=window.end).filter(
            Q(ended_at__isnull=True) | Q(ended_at__gt=window.start)
        )
    )


def chip_history(
    chip: Chip, window: Window
) -> tuple[MetricsStatus, list[dict[str, Any]]]:
    """Used (Prometheus) and booked (ledger) AICore % and HBM of one chip.

    Both by the chip's UUID (a booking's key ends with it; the exporter's
    ``vdie_id``), not its registered index, which shifts when a chip of its
    node is isolated.
    """
    bookings = _overlapping(
        Booking.objects.filter(cluster=chip.cluster, key__endswith=f":{chip.uuid}"),
        window,
    )
    aicore = chip.aicore or 1
    series = [
        {
            "name": "aicore_booked_percent",
            "unit": "%",
            "points": _booked_steps(
                bookings,
                window,
                lambda held: round(100 * sum(b.aicore for b in held) / aicore, 3),
            ),
        },
        {
            "name": "memory_booked_mb",
            "unit": "MB",
            "points": _booked_steps(
                bookings, window, lambda held: float(sum(b.memory for b in held))
            ),
        },
    ]
    status = MetricsStatus.ok()
    try:
        prom, vocabulary = connect(chip.cluster)
        queries = vocabulary.chip_history((chip.node.name, chip.index, chip.uuid))
        series = _measured_series(prom, queries, window) + series
    except MetricsUnavailable as error:
        status = MetricsStatus.failed(error)
    return status, series


def slice_history(
    slice_: Slice, window: Window
) -> tuple[MetricsStatus, list[dict[str, Any]]]:
    """Used AICore % of its own AICores, and HBM used vs booked, of one slice."""
    booked = [
        {
            "name": "memory_booked_mb",
            "unit": "MB",
            "points": _booked_steps([], window, lambda _: float(slice_.memory)),
        },
    ]
    series: list[dict[str, Any]] = []
    status = MetricsStatus.ok()
    try:
        prom, vocabulary = connect(slice_.cluster)
        chip_index = slice_.chip.index if slice_.chip else 0
        queries = vocabulary.slice_history(
            slice_.node_name, chip_index, slice_.namespace, slice_.pod_name
        )
        series = _measured_series(prom, queries, window)
    except MetricsUnavailable as error:
        status = MetricsStatus.failed(error)
    return status, series + booked


# -- over a period: the report ---------------------------------------------------------


def prices() -> dict[str, Decimal]:
    return dict(ChipPrice.objects.values_list("common_word", "price_per_hour"))


def usage_report(
    cluster: Cluster,
    *,
    start: datetime,
    end: datetime,
    group_by: str,
    measure: bool = True,
) -> tuple[MetricsStatus, Report]:
    """Slice-hours booked, used and idle and their cost over [start, end), grouped.

    ``measure=False``: booked figures and cost only, Prometheus not asked.
    """
    measured_until = min(end, timezone.now())
    bookings = Booking.objects.filter(cluster=cluster, started_at__lt=end).filter(
        Q(ended_at__isnull=True) | Q(ended_at__gt=start)
    )
    status = MetricsStatus.ok()
    measured = None
    if measure:
        prom = vocabulary = None
        try:
            prom, vocabulary = connect(cluster)
        except MetricsUnavailable as error:
            status = MetricsStatus.failed(error)
        measured, failed = measured_over(
            cluster, prom, vocabulary, start, measured_until
        )
        if failed is not None and status.available:
            status = MetricsStatus.failed(failed)
    report = build_report(
        bookings.iterator(),
        start=start,
        end=measured_until,
        group_by=group_by,
        prices=prices(),
        measured=measured,
    )
    return status, report
