"""Cordoning chips: the allocator places nothing on a cordoned chip.

Only a drain cordons (``apps.scheduling.drain``), and it records who and why
in the audit log with the drain; these writes are its inventory half. Each
change is broadcast on the cluster's live group as the chip rows sync sends
(``chips``), so the heat map and the chips table follow at once.
"""

from __future__ import annotations

from collections.abc import Iterable

from apps.inventory.models import Chip
from apps.inventory.selectors import chip_row_values
from apps.live.events import Event, chips_payloads
from apps.live.realtime import broadcast_on_commit, cluster_group


def chips_cordon(cluster_id: int, chip_ids: Iterable[int], *, drain_id: int) -> int:
    """Cordon these chips for drain ``drain_id``; returns how many changed."""
    ids = sorted(chip_ids)
    changed = Chip.objects.filter(cluster_id=cluster_id, pk__in=ids).update(
        cordoned=True, active_drain=drain_id
    )
    chips_broadcast(cluster_id, ids)
    return changed


def chips_drain_release(cluster_id: int, drain_id: int) -> list[int]:
    """The drain ended without an uncordon (rejected, failed): its chips stay
    cordoned but no longer show it. Returns their ids."""
    ids = list(
        Chip.objects.filter(cluster_id=cluster_id, active_drain=drain_id).values_list(
            "pk", flat=True
        )
    )
    Chip.objects.filter(pk__in=ids).update(active_drain=None)
    chips_broadcast(cluster_id, ids)
    return ids


def chips_uncordon(cluster_id: int, chip_ids: Iterable[int]) -> int:
    """Put these chips back in service (and forget any drain on them)."""
    ids = sorted(chip_ids)
    changed = Chip.objects.filter(cluster_id=cluster_id, pk__in=ids).update(
        cordoned=False, active_drain=None
    )
    chips_broadcast(cluster_id, ids)
    return changed


def chips_broadcast(cluster_id: int, chip_ids: list[int]) -> None:
    """Send these chips' live rows (after the commit): their state changed."""
    rows = chip_row_values(Chip.objects.filter(pk__in=chip_ids).order_by("id"))
    for payload in chips_payloads(rows):
        broadcast_on_commit(cluster_group(cluster_id), Event.CHIPS, payload)
