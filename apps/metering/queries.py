"""PromQL for the npu-exporter series, written once, with the site's label names.

Ascend's npu-exporter labels a chip by ``id`` (its physical index on the node)
and ``vdie_id`` (its die ID: the UUID HAMi registers the chip by), and a vNPU
by ``namespace``/``pod_name``/``container_name`` too; the node comes from the
site's scrape config (``node`` by default). A chip series is matched to its
chip by ``vdie_id`` where it has one: the device plugin renumbers the chips it
registers 0..n-1 once one is filtered (isolated) by the node config, while the
exporter's ``id`` stays the physical one. ``PROMETHEUS_LABELS`` maps our
names to a site's where it relabelled them, and ``PROMETHEUS_SELECTOR`` adds
matchers to every query (``{cluster}`` in it becomes the cluster's name).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from apps.metering.prometheus import Labels

# Our names for the labels the queries rely on.
LOGICAL_LABELS = (
    "node",
    "id",
    "vdie_id",
    "namespace",
    "pod_name",
    "container_name",
    "model_name",
)

CHIP_UTILIZATION = "npu_chip_info_utilization"  # %
CHIP_USED_MEMORY = "npu_chip_info_hbm_used_memory"  # MB
CHIP_HEALTH = "npu_chip_info_health_status"  # 1 healthy
SLICE_UTILIZATION = "vnpu_pod_aicore_utilization"  # % of the slice's AICores
SLICE_USED_MEMORY = "vnpu_pod_used_memory"  # KB
SLICE_TOTAL_MEMORY = "vnpu_pod_total_memory"  # KB
CHIP_LABELS = ("node", "id", "vdie_id")
SLICE_LABELS = ("node", "id", "namespace", "pod_name")


def quote(value: str) -> str:
    """A PromQL string literal (its escapes are Go's, which JSON's agree with)."""
    return json.dumps(value)


def duration(seconds: float) -> str:
    """A PromQL duration, whole seconds, at least one."""
    return f"{max(1, int(seconds))}s"


@dataclass(frozen=True)
class Vocabulary:
    """The site's label names and the matchers every query carries."""

    names: Mapping[str, str]
    selector: str = ""

    @classmethod
    def for_site(
        cls, labels: Mapping[str, str], selector: str, cluster: str
    ) -> Vocabulary:
        unknown = sorted(set(labels) - set(LOGICAL_LABELS))
        if unknown:
            # Settings are read at start-up; a typo must not silently match nothing.
            raise ValueError(
                f"PROMETHEUS_LABELS names unknown labels {unknown}; "
                f"known: {', '.join(LOGICAL_LABELS)}"
            )
        return cls(
            names={name: labels.get(name, name) for name in LOGICAL_LABELS},
            selector=selector.replace("{cluster}", cluster).strip().strip(","),
        )

    def read(self, labels: Labels, name: str) -> str:
        """Our label ``name`` from a series' labels."""
        return labels.get(self.names[name], "")

    def select(self, metric: str, **equal: str) -> str:
        """``metric{<selector>, label="value"...}`` with our names mapped."""
        matchers = [self.selector] if self.selector else []
        matchers += [f"{self.names[k]}={quote(v)}" for k, v in equal.items()]
        return f"{metric}{{{','.join(matchers)}}}"

    def by(self, *names: str) -> str:
        return ", ".join(self.names[n] for n in names)

    def per_chip(self, aggregation: str, expression: str) -> str:
        """``expression`` aggregated to one series per chip, labelled by chip only.

        Aggregating in Prometheus keeps each answer to the labels the portal
        reads: an exporter series carries a dozen.
        """
        return f"{aggregation} by ({self.by(*CHIP_LABELS)}) ({expression})"

    def per_slice(self, aggregation: str, expression: str) -> str:
        """One series per slice key (a pod's containers on one chip are one key)."""
        return f"{aggregation} by ({self.by(*SLICE_LABELS)}) ({expression})"

    # -- the queries ---------------------------------------------------------------

    def idle_slices(self, idle_percent: float, window_seconds: float) -> str:
        """The slices idle for the whole window: their AICore use never went
        over ``idle_percent`` in it, and the same series was there a window
        ago (so a slice Prometheus has seen for a minute is not idle for an
        hour), and it is there now (a pod that left is not counted)."""
        use = self.select(SLICE_UTILIZATION)
        window = duration(window_seconds)
        return (
            f"(max_over_time({use}[{window}]) <= {idle_percent:g})"
            f" and ({use} offset {window}) and {use}"
        )

    def over_memory_slices(self) -> str:
        """The vNPUs using more memory than their own total (what they booked)."""
        return f"{self.select(SLICE_USED_MEMORY)} > {self.select(SLICE_TOTAL_MEMORY)}"

    def chips_now(
        self, idle_percent: float, idle_window_seconds: float
    ) -> dict[str, str]:
        """Per chip now: AICore %, HBM used MB, hardware health, and how many of
        its slices are idle or over their memory (only chips that have some:
        the page needs no per-slice answer)."""
        return {
            "aicore_used_percent": self.per_chip("max", self.select(CHIP_UTILIZATION)),
            "memory_used_mb": self.per_chip("max", self.select(CHIP_USED_MEMORY)),
            "hardware_healthy": self.per_chip("min", self.select(CHIP_HEALTH)),
            "idle_slices": self.per_chip(
                "count", self.idle_slices(idle_percent, idle_window_seconds)
            ),
            "over_memory_slices": self.per_chip("count", self.over_memory_slices()),
        }

    def slices_now(
        self, idle_percent: float, idle_window_seconds: float
    ) -> dict[str, str]:
        """Per slice now: AICore % (a pod's containers averaged), HBM used MB,
        and whether it is idle (present only when it is)."""
        return {
            "aicore_used_percent": self.per_slice(
                "avg", self.select(SLICE_UTILIZATION)
            ),
            "memory_used_mb": self.per_slice("sum", self.select(SLICE_USED_MEMORY))
            + " / 1024",
            "idle": self.per_slice(
                "count", self.idle_slices(idle_percent, idle_window_seconds)
            ),
        }

    def slices_last_busy(
        self, idle_percent: float, window_seconds: float, step: int
    ) -> str:
        """Seconds since each slice last used more than ``idle_percent``, within the window."""
        busy = f"timestamp({self.select(SLICE_UTILIZATION)} > {idle_percent:g})"
        last = f"max_over_time(({busy})[{duration(window_seconds)}:{duration(step)}])"
        return f"time() - {self.per_slice('max', last)}"

    def period_sums(self, expression: str, period_seconds: float, step: int) -> str:
        """Per slice key, the sum over the period of ``expression`` sampled every step."""
        return self.per_slice(
            "sum",
            f"sum_over_time(({expression})[{duration(period_seconds)}:{duration(step)}])",
        )

    def present(self) -> str:
        """1 wherever a slice has a sample (its hours seen by Prometheus)."""
        return f"{self.select(SLICE_UTILIZATION)} * 0 + 1"

    def used_fraction(self) -> str:
        return f"{self.select(SLICE_UTILIZATION)} / 100"

    def idle_indicator(self, idle_percent: float) -> str:
        return f"{self.select(SLICE_UTILIZATION)} <= bool {idle_percent:g}"

    def one_chip(self, aggregation: str, metric: str, chip: ChipIdentity) -> str:
        """``metric`` of one chip: the series with its UUID as ``vdie_id``, or
        else (an exporter without the label) the one at its node and index."""
        node, index, uuid = chip
        by_uuid = self.select(metric, vdie_id=uuid)
        by_index = self.select(metric, node=node, id=str(index), vdie_id="")
        return f"{aggregation}({by_uuid}) or {aggregation}({by_index})"

    def chip_history(self, chip: ChipIdentity) -> dict[str, str]:
        return {
            "aicore_used_percent": self.one_chip("max", CHIP_UTILIZATION, chip),
            "memory_used_mb": self.one_chip("max", CHIP_USED_MEMORY, chip),
        }

    def chip_health_over(self, window_seconds: float, step: int) -> dict[str, str]:
        """Per chip (node, vdie_id): its health now, its first sample within the
        window and its last unhealthy one (epoch seconds; absent when none)."""
        health = self.select(CHIP_HEALTH)
        by = self.by("node", "vdie_id")
        span = f"[{duration(window_seconds)}:{duration(step)}]"
        return {
            "healthy": f"min by ({by}) ({health})",
            "first_seen": f"min by ({by}) (min_over_time(timestamp({health}){span}))",
            "last_unhealthy": (
                f"max by ({by}) (max_over_time(timestamp({health} < 1){span}))"
            ),
        }

    def slice_history(
        self, node: str, index: int, namespace: str, pod: str
    ) -> dict[str, str]:
        where = {
            "node": node,
            "id": str(index),
            "namespace": namespace,
            "pod_name": pod,
        }
        return {
            "aicore_used_percent": f"avg({self.select(SLICE_UTILIZATION, **where)})",
            "memory_used_mb": f"sum({self.select(SLICE_USED_MEMORY, **where)}) / 1024",
        }


SliceKey = tuple[str, int, str, str]  # node, chip index, namespace, pod name
ChipKey = tuple[str, int]  # node, chip index
#: A chip series' key: the chip's UUID (its ``vdie_id``) where the series has
#: one, else (node, index).
ChipRef = str | ChipKey
ChipIdentity = tuple[str, int, str]  # node, registered index, UUID


def chip_index_key(vocabulary: Vocabulary, labels: Labels) -> ChipKey | None:
    """(node, index) of a series, or None when its ``id`` is not an index."""
    index = vocabulary.read(labels, "id")
    if not index.isdigit():
        return None
    return vocabulary.read(labels, "node"), int(index)


def chip_key(vocabulary: Vocabulary, labels: Labels) -> ChipRef | None:
    """The chip a series is about: its UUID when the series carries ``vdie_id``,
    else (node, index); None when it has neither."""
    return vocabulary.read(labels, "vdie_id") or chip_index_key(vocabulary, labels)


def physical_chips(
    vocabulary: Vocabulary, labelled: Iterable[Labels]
) -> dict[ChipKey, str]:
    """(node, exporter ``id``) -> UUID, from the series that carry both.

    The vNPU series name their chip by ``id`` alone; with this map, what they
    say is put on the chip by UUID too, whatever index the plugin gives it.
    """
    found: dict[ChipKey, str] = {}
    for labels in labelled:
        uuid = vocabulary.read(labels, "vdie_id")
        key = chip_index_key(vocabulary, labels)
        if uuid and key is not None:
            found[key] = uuid
    return found


def chip_measured(
    measured: Mapping[ChipRef, dict[str, float]], chip: ChipIdentity
) -> dict[str, float]:
    """What was measured of ``chip``: by its UUID, or by (node, index) from
    series without ``vdie_id``. Only one of the two can match: a series is
    keyed by one or the other, so a chip the plugin renumbered is never given
    the series of the physical chip at its new index."""
    node, index, uuid = chip
    return measured.get(uuid) or measured.get((node, index)) or {}


def slice_key(vocabulary: Vocabulary, labels: Labels) -> SliceKey | None:
    chip = chip_index_key(vocabulary, labels)
    if chip is None:
        return None
    return (
        *chip,
        vocabulary.read(labels, "namespace"),
        vocabulary.read(labels, "pod_name"),
    )
