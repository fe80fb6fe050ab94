"""Measured slice-hours over a period: whole past days from the daily rollup,
the rest asked of Prometheus.

Asking Prometheus for a month at once would evaluate a month of subquery
steps for every slice (some 45,000 points each): beyond its per-query sample
limit at a few thousand slices, and beyond its retention for last month. So
once a UTC day is over its figures are stored (``UsageDay``), and a report
asks Prometheus only for what is not stored: today so far, and the partial
days at the edges of a custom period.

Subquery ranges are evaluated 1 ms before the end of a segment, so the step
at its end (the next segment's first) is counted once, in the next, on every
Prometheus version (2.x includes a range's start, 3.x does not).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterator
from datetime import UTC, date, datetime, time, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Min, Sum

from apps.inventory.models import Cluster
from apps.metering.models import Booking, RolledDay, UsageDay
from apps.metering.prometheus import MetricsUnavailable, Prometheus
from apps.metering.queries import SliceKey, Vocabulary, slice_key
from apps.metering.report import Measured

MILLISECOND = timedelta(milliseconds=1)
DAY = timedelta(days=1)


def measure_period(
    prom: Prometheus, vocabulary: Vocabulary, start: datetime, end: datetime
) -> dict[SliceKey, Measured]:
    """Slice-hours seen, used and idle per slice key over [start, end), each
    sampled every PROMETHEUS_STEP_SECONDS, asked of Prometheus at once."""
    step = settings.PROMETHEUS_STEP_SECONDS
    period = (end - start).total_seconds()
    if period < step:
        return {}
    queries = {
        "seen": vocabulary.period_sums(vocabulary.present(), period, step),
        "used": vocabulary.period_sums(vocabulary.used_fraction(), period, step),
        "idle": vocabulary.period_sums(
            vocabulary.idle_indicator(settings.IDLE_SLICE_PERCENT), period, step
        ),
    }
    found: dict[SliceKey, dict[str, float]] = defaultdict(dict)
    for field, samples in prom.query_many(queries, at=end - MILLISECOND).items():
        for sample in samples:
            key = slice_key(vocabulary, sample.labels)
            if key is not None and math.isfinite(sample.value):
                found[key][field] = sample.value * step / 3600
    return {key: Measured(**figures) for key, figures in found.items()}


def _midnight(day: date) -> datetime:
    return datetime.combine(day, time(0), tzinfo=UTC)


def _days(first: date, last: date) -> Iterator[date]:
    day = first
    while day <= last:
        yield day
        day += DAY


def days_roll(
    cluster: Cluster,
    prom: Prometheus,
    vocabulary: Vocabulary,
    *,
    now: datetime,
    most: int = 3,
) -> int:
    """Store the usage of up to ``most`` finished days not yet stored (oldest
    first, back to METERING_BACKFILL_DAYS ago or the first booking); returns
    how many. A failure of Prometheus stops here: the next refresh goes on."""
    yesterday = now.astimezone(UTC).date() - DAY
    first_booking = Booking.objects.filter(cluster=cluster).aggregate(
        first=Min("started_at")
    )["first"]
    if first_booking is None:
        return 0
    earliest = max(
        first_booking.astimezone(UTC).date(),
        now.astimezone(UTC).date() - timedelta(days=settings.METERING_BACKFILL_DAYS),
    )
    rolled = set(
        RolledDay.objects.filter(cluster=cluster, day__gte=earliest).values_list(
            "day", flat=True
        )
    )
    done = 0
    for day in _days(earliest, yesterday):
        if day in rolled:
            continue
        if done >= most:
            break
        measured = measure_period(
            prom, vocabulary, _midnight(day), _midnight(day + DAY)
        )
        with transaction.atomic():
            UsageDay.objects.bulk_create(
                [
                    UsageDay(
                        cluster=cluster,
                        day=day,
                        node_name=node,
                        chip_index=index,
                        namespace=namespace,
                        pod_name=pod,
                        seen_hours=m.seen or 0.0,
                        used_hours=m.used or 0.0,
                        idle_hours=m.idle or 0.0,
                    )
                    for (node, index, namespace, pod), m in measured.items()
                ],
                ignore_conflicts=True,
            )
            RolledDay.objects.get_or_create(cluster=cluster, day=day)
        done += 1
    return done


def _stored(cluster: Cluster, days: list[date]) -> dict[SliceKey, Measured]:
    rows = (
        UsageDay.objects.filter(cluster=cluster, day__in=days)
        .values("node_name", "chip_index", "namespace", "pod_name")
        .annotate(
            seen=Sum("seen_hours"), used=Sum("used_hours"), idle=Sum("idle_hours")
        )
    )
    return {
        (r["node_name"], r["chip_index"], r["namespace"], r["pod_name"]): Measured(
            r["seen"], r["used"], r["idle"]
        )
        for r in rows
    }


def _segments(
    start: datetime, end: datetime, stored: set[date]
) -> tuple[list[date], list[tuple[datetime, datetime]]]:
    """[start, end) as stored whole days, and the spans Prometheus is asked for
    (neighbouring spans joined into one)."""
    days: list[date] = []
    spans: list[tuple[datetime, datetime]] = []
    cursor = start
    while cursor < end:
        day = cursor.astimezone(UTC).date()
        next_midnight = _midnight(day + DAY)
        piece_end = min(next_midnight, end)
        whole = cursor == _midnight(day) and piece_end == next_midnight
        if whole and day in stored:
            days.append(day)
        elif spans and spans[-1][1] == cursor:
            spans[-1] = (spans[-1][0], piece_end)
        else:
            spans.append((cursor, piece_end))
        cursor = piece_end
    return days, spans


def measured_over(
    cluster: Cluster,
    prom: Prometheus | None,
    vocabulary: Vocabulary | None,
    start: datetime,
    end: datetime,
) -> tuple[dict[SliceKey, Measured] | None, MetricsUnavailable | None]:
    """Measured slice-hours per key over [start, end): stored days, plus what
    Prometheus says of the rest. Without Prometheus (``prom`` None, or it
    fails), the stored days alone and the error; None when nothing at all
    could be measured."""
    stored_days = set(
        RolledDay.objects.filter(
            cluster=cluster,
            day__gte=start.astimezone(UTC).date(),
            day__lte=end.astimezone(UTC).date(),
        ).values_list("day", flat=True)
    )
    days, spans = _segments(start, end, stored_days)
    total: dict[SliceKey, Measured] = dict(_stored(cluster, days)) if days else {}
    error: MetricsUnavailable | None = None
    if spans and (prom is None or vocabulary is None):
        error = MetricsUnavailable("not configured", configured=False)
    elif spans:
        try:
            for span_start, span_end in spans:
                for key, m in measure_period(
                    prom, vocabulary, span_start, span_end
                ).items():
                    total[key] = _add(total.get(key), m)
        except MetricsUnavailable as failed:
            error = failed
            total = dict(_stored(cluster, days)) if days else {}
    if error is not None and not days:
        return None, error
    return total, error


def _add(a: Measured | None, b: Measured) -> Measured:
    if a is None:
        return b
    return Measured(
        (a.seen or 0.0) + (b.seen or 0.0),
        (a.used or 0.0) + (b.used or 0.0),
        (a.idle or 0.0) + (b.idle or 0.0),
    )
