"""Workload profiles: how busy a pod's vNPU is, for the simulated npu-exporter.

A pod says how it behaves with the annotation ``simcluster.vnpu.io/workload``:

- ``busy:<pct>``: AICore at ``pct`` %, HBM at 60 % of what the slice booked;
- ``idle``: AICore 0 %, HBM 5 % of booked;
- ``hog:<mem_pct>``: AICore 50 %, HBM at ``mem_pct`` % of booked (over 100 is
  a job using more than it booked, which a soft-split chip lets it do);
- ``aicore=<pct>,hbm=<pct>``: both given.

Without it the profile comes from a hash of the pod's name, so that a demo
looks like a real site and looks the same on every run: about half busy
(30-95 %, on a slow wave), a third idle, the rest hogs at 110-160 % of booked.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

WORKLOAD_ANNOTATION = "simcluster.vnpu.io/workload"

BUSY_HBM_PERCENT = 60.0
IDLE_HBM_PERCENT = 5.0
HOG_AICORE_PERCENT = 50.0
# The default busy pods' wave: slow enough that a 5 s scrape sees a trend,
# short enough that a demo shows one in a quarter of an hour.
WAVE_PERIOD_SECONDS = 900.0
WAVE_AMPLITUDE = 10.0


@dataclass(frozen=True)
class Profile:
    """What a pod's vNPU does: AICore % (a base and a wave around it), HBM %.

    Attributes:
        aicore_percent: Base AICore use, % of the slice's own AICores.
        hbm_percent: HBM in use, % of the memory the slice booked.
        wave: Amplitude of a sine around the base (0: constant).
        phase: Where on the wave the pod starts, in radians.
    """

    aicore_percent: float
    hbm_percent: float
    wave: float = 0.0
    phase: float = 0.0

    def aicore_at(self, now: float) -> float:
        """AICore % at ``now`` (epoch seconds), within 0-100."""
        value = self.aicore_percent
        if self.wave:
            value += self.wave * math.sin(
                2 * math.pi * now / WAVE_PERIOD_SECONDS + self.phase
            )
        return min(100.0, max(0.0, value))


def _percent(text: str) -> float:
    value = float(text)
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{text!r} is not a percentage")
    return value


def parse(text: str) -> Profile:
    """The profile an annotation value names; ValueError when it names none."""
    text = text.strip()
    kind, _, arg = text.partition(":")
    if kind == "busy" and arg:
        return Profile(min(100.0, _percent(arg)), BUSY_HBM_PERCENT)
    if text == "idle":
        return Profile(0.0, IDLE_HBM_PERCENT)
    if kind == "hog" and arg:
        return Profile(HOG_AICORE_PERCENT, _percent(arg))
    if "=" in text:
        pairs = (part.partition("=") for part in text.split(","))
        fields = {key.strip(): value.strip() for key, _, value in pairs}
        if set(fields) == {"aicore", "hbm"}:
            return Profile(
                min(100.0, _percent(fields["aicore"])), _percent(fields["hbm"])
            )
    raise ValueError(f"unknown workload profile {text!r}")


def default_for(pod_name: str) -> Profile:
    """The demo's mix, decided by a hash of the pod's name (same on every run)."""
    digest = int.from_bytes(hashlib.sha256(pod_name.encode()).digest()[:8], "big")
    bucket = digest % 6
    spread = (digest >> 8) % 1000 / 999  # 0..1, independent of the bucket
    if bucket < 3:
        # Bases 40-85 with a wave of 10 keep the pod within 30-95 %.
        base = 40.0 + round(45 * spread)
        phase = (digest >> 24) % 628 / 100
        return Profile(base, BUSY_HBM_PERCENT, WAVE_AMPLITUDE, phase)
    if bucket < 5:
        return Profile(0.0, IDLE_HBM_PERCENT)
    return Profile(HOG_AICORE_PERCENT, 110.0 + round(50 * spread))


def profile_of(pod_name: str, annotations: dict[str, str]) -> Profile:
    """The pod's profile: its annotation when it names one, else the default mix.

    A value that names no profile falls back to the default too: a typo must
    not make the node's whole scrape fail, as a real exporter keeps reporting.
    """
    text = annotations.get(WORKLOAD_ANNOTATION)
    if text:
        try:
            return parse(text)
        except ValueError:
            pass
    return default_for(pod_name)
