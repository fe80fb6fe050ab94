"""PromQL for the npu-exporter series, written once, with the site's label names.

Ascend's npu-exporter labels a chip by ``id`` (its index on the node) and a
vNPU by ``namespace``/``pod_name``/``container_name`` too; the node comes from
the site's scrape config (``node`` by default). ``PROMETHEUS_LABELS`` maps our
names to a site's where it relabelled them, and ``PROMETHEUS_SELECTOR`` adds
matchers to every query (``{cluster}`` in it becomes the cluster's name).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from apps.metering.prometheus import Labels

# Our names for the labels the queries rely on.
LOGICAL_LABELS = ("node", "id", "namespace", "pod_name", "container_name", "model_name")

CHIP_UTILIZATION = "npu_chip_info_utilization"  # %
CHIP_USED_MEMORY = "npu_chip_info_hbm_used_memory"  # MB
CHIP_HEALTH = "npu_chip_info_health_status"  # 1 healthy
SLICE_UTILIZATION = "vnpu_pod_aicore_utilization"  # % of the slice's AICores
SLICE_USED_MEMORY = "vnpu_pod_used_memory"  # KB
SLICE_TOTAL_MEMORY = "vnpu_pod_total_memory"  # KB
CHIP_LABELS = ("node", "id")
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

    def chip_history(self, node: str, index: int) -> dict[str, str]:
        where = {"node": node, "id": str(index)}
        return {
            "aicore_used_percent": f"max({self.select('npu_chip_info_utilization', **where)})",
            "memory_used_mb": f"max({self.select('npu_chip_info_hbm_used_memory', **where)})",
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


def chip_key(vocabulary: Vocabulary, labels: Labels) -> ChipKey | None:
    """The chip a series is about, or None when its ``id`` is not an index."""
    index = vocabulary.read(labels, "id")
    if not index.isdigit():
        return None
    return vocabulary.read(labels, "node"), int(index)


def slice_key(vocabulary: Vocabulary, labels: Labels) -> SliceKey | None:
    chip = chip_key(vocabulary, labels)
    if chip is None:
        return None
    return (
        *chip,
        vocabulary.read(labels, "namespace"),
        vocabulary.read(labels, "pod_name"),
    )
