"""What the chip suggestions read from the apps above inventory, registered by them.

Inventory stands below metering and scheduling (``tests/test_layers.py``), so
it never imports them. Two facts the suggestions need live up there:

- a chip's **hardware** health over time, from the npu-exporter that
  Prometheus scrapes (metering). An isolated chip is no longer registered by
  the device plugin, so the registration's health flag of that chip is frozen
  at what it was when it left; only the exporter (dcmi) still sees it;
- which portal request holds a pod's slice (scheduling).

Each app registers its reader in its ``AppConfig.ready``; without one the
suggestions say why they cannot offer what depends on it.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from apps.inventory.models import Cluster


@dataclass(frozen=True)
class ChipHardware:
    """What the exporter said of one chip within the window looked at.

    Attributes:
        healthy: Its health now (the latest sample).
        first_seen: Its earliest sample within the window.
        last_unhealthy: Its latest unhealthy sample within the window (None:
            healthy in every sample of it).
    """

    healthy: bool
    first_seen: datetime
    last_unhealthy: datetime | None = None


@dataclass(frozen=True)
class HardwareReading:
    """Per chip UUID, its hardware health; or why it could not be read."""

    available: bool
    reason: str = ""
    chips: Mapping[str, ChipHardware] = field(default_factory=dict)

    @classmethod
    def unavailable(cls, reason: str) -> HardwareReading:
        return cls(available=False, reason=reason)


#: ``reader(cluster, window_seconds)``: the hardware health of the cluster's
#: chips over the last ``window_seconds``.
HardwareHealthReader = Callable[[Cluster, int], HardwareReading]
#: ``reader(cluster, {(namespace, pod)...})``: the portal request id per pod.
SliceRequestsReader = Callable[
    [Cluster, Collection[tuple[str, str]]], dict[tuple[str, str], int]
]

_hardware: HardwareHealthReader | None = None
_requests: SliceRequestsReader | None = None


def register_hardware_health(reader: HardwareHealthReader) -> None:
    """Say how a chip's hardware health is read (metering does, from Prometheus)."""
    global _hardware
    _hardware = reader


def register_slice_requests(reader: SliceRequestsReader) -> None:
    """Say how a pod's portal request is found (scheduling does)."""
    global _requests
    _requests = reader


def hardware_health(cluster: Cluster, window_seconds: int) -> HardwareReading:
    """The registered reader's answer, or why there is none."""
    if _hardware is None:
        return HardwareReading.unavailable(
            "no reader of the chips' hardware health is installed (apps.metering)"
        )
    return _hardware(cluster, window_seconds)


def slice_requests(
    cluster: Cluster, pods: Collection[tuple[str, str]]
) -> dict[tuple[str, str], int]:
    """The portal request of each of these pods that has one."""
    if _requests is None or not pods:
        return {}
    return _requests(cluster, pods)
