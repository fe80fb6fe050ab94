"""Which scheduler a cluster's vNPU pods go to, and what it can promise.

The two schedulers place vNPUs differently (docs/scheduler-behaviour.md, "Choosing
the chip"):

- **Volcano** (deviceshare; the guide's setup) picks any fitting chip of the
  node: it never reads ``hami.io/use-<cw>-uuid`` and does not check chip
  health. The portal can steer the node only, so a request is reported on a
  chip only once it is bound.
- **HAMi's scheduler** honours the pin: the chip the portal reserved is the
  chip the pod gets, and it may be reported before the bind. It does not
  check chip health for Ascend chips (v2.9.0, measured in kubestack): the
  portal reserves healthy chips only, and the pin keeps the pod there.

An admin sets it per cluster (``Cluster.scheduler``); ``auto`` follows what
sync sees: a running Volcano scheduler means Volcano (the guide installs
HAMi's scheduler beside it, unused), else a running HAMi scheduler means
HAMi, else Volcano, the guide's, with that said.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from apps.inventory.choices import SchedulerSetting
from apps.inventory.deviceconfig.versions import cluster_components
from apps.inventory.models import Cluster

VOLCANO_SCHEDULER_NAME = "volcano"


@dataclass(frozen=True)
class SchedulerInEffect:
    """The scheduler the portal submits to, and why it is that one.

    Attributes:
        kind: ``volcano`` or ``hami``.
        scheduler_name: The pods' ``schedulerName``.
        honours_pins: The chip the portal reserves is the chip the pod gets.
        why: How it was chosen (set by an admin, or what sync saw).
    """

    kind: str
    scheduler_name: str
    honours_pins: bool
    why: str

    def as_dict(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "scheduler_name": self.scheduler_name,
            "honours_pins": self.honours_pins,
            "why": self.why,
        }


def _of(kind: str, why: str) -> SchedulerInEffect:
    if kind == SchedulerSetting.HAMI:
        return SchedulerInEffect(kind, settings.HAMI_SCHEDULER_NAME, True, why)
    return SchedulerInEffect(
        SchedulerSetting.VOLCANO, VOLCANO_SCHEDULER_NAME, False, why
    )


def scheduler_in_effect(cluster: Cluster) -> SchedulerInEffect:
    """The cluster's scheduler (see the module doc)."""
    if cluster.scheduler != SchedulerSetting.AUTO:
        return _of(cluster.scheduler, "set by an admin")
    running = [c for c in cluster_components(cluster) if c.running]
    for kind in ("volcano", "hami"):
        found = next((c for c in running if c.kind == kind), None)
        if found is not None:
            return _of(kind, f"detected: {found.workload} runs")
    return _of(
        SchedulerSetting.VOLCANO,
        "no scheduler seen by sync yet; Volcano, as in the guide",
    )
