"""The chips' hardware health over time, read from the npu-exporter through Prometheus.

Registered with inventory (``register_hardware_health``, in
``MeteringConfig.ready``) for the restore suggestions: an isolated chip is no
longer registered by the device plugin, so only the exporter (dcmi) still
says whether it is healthy. Chips are matched by their UUID, the exporter's
``vdie_id``: an exporter without that label cannot tell which chip a series
is once the plugin renumbered them, so the reading is then unavailable, with
the reason.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime

from apps.inventory.models import Cluster
from apps.inventory.nodeconfig.health_sources import ChipHardware, HardwareReading
from apps.metering.prometheus import MetricsUnavailable, Sample
from apps.metering.selectors import connect

#: Steps per window: a subquery's cost is its steps times the chips.
_STEPS = 120


def _by_uuid(samples: list[Sample], uuid_label: str) -> dict[str, float]:
    return {
        uuid: sample.value
        for sample in samples
        if (uuid := sample.labels.get(uuid_label, "")) and math.isfinite(sample.value)
    }


def _moment(epoch: float | None) -> datetime | None:
    return None if epoch is None else datetime.fromtimestamp(epoch, tz=UTC)


def hardware_health_read(cluster: Cluster, window_seconds: int) -> HardwareReading:
    """Per chip UUID: healthy now, first sample and last unhealthy one in the window."""
    try:
        prom, vocabulary = connect(cluster)
        step = max(1, window_seconds // _STEPS)
        answers = prom.query_many(vocabulary.chip_health_over(window_seconds, step))
    except MetricsUnavailable as error:
        return HardwareReading.unavailable(
            f"the chips' hardware health comes from Prometheus: {error.reason}"
        )
    label = vocabulary.names["vdie_id"]
    healthy = _by_uuid(answers["healthy"], label)
    if not healthy and answers["healthy"]:
        return HardwareReading.unavailable(
            f"the npu-exporter's series carry no {label!r} label (the chip's UUID):"
            " an isolated chip cannot be told apart (PROMETHEUS_LABELS names it"
            " where a site relabelled it)"
        )
    first = _by_uuid(answers["first_seen"], label)
    last_bad = _by_uuid(answers["last_unhealthy"], label)
    chips = {
        uuid: ChipHardware(
            healthy=value >= 1,
            first_seen=datetime.fromtimestamp(first[uuid], tz=UTC),
            last_unhealthy=_moment(last_bad.get(uuid)),
        )
        for uuid, value in healthy.items()
        if uuid in first
    }
    return HardwareReading(available=True, chips=chips)
