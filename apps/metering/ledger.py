"""The booking ledger: opened and closed from the synced slices.

A refresh compares the cluster's current ``Slice`` rows with its open
bookings: a slice without one opens a booking (from the slice's start when
sync knows it), an open booking whose slice is gone is closed now. So a
booking's end is known to within one refresh (``METERING_REFRESH_SECONDS``).
"""

from __future__ import annotations

from datetime import datetime

from django.db import transaction

from apps.inventory.models import Cluster, Slice
from apps.metering.models import Booking

FINISHED_PHASES = ("Succeeded", "Failed")


def slice_booking_key(slice_: Slice) -> str:
    """One slice, whatever its pod is named: pod uid, container, chip."""
    pod = slice_.pod_uid or f"{slice_.namespace}/{slice_.pod_name}"
    return f"{pod}:{slice_.container_index}:{slice_.chip_uuid}"


def bookings_refresh(cluster: Cluster, *, now: datetime) -> tuple[int, int]:
    """Open bookings for new slices and close those whose slice is gone.

    Returns (opened, closed). Idempotent: a second run with nothing changed
    writes nothing.
    """
    slices = {
        slice_booking_key(s): s
        for s in Slice.objects.filter(cluster=cluster)
        # A finished pod's devices are free again (HAMi releases them).
        .exclude(phase__in=FINISHED_PHASES)
        .select_related("chip", "chip__node")
    }
    with transaction.atomic():
        open_keys = dict(
            Booking.objects.select_for_update()
            .filter(cluster=cluster, ended_at__isnull=True)
            .values_list("key", "id")
        )
        gone = [pk for key, pk in open_keys.items() if key not in slices]
        closed = Booking.objects.filter(id__in=gone).update(ended_at=now)
        new = [
            _booking(cluster, key, s, now)
            for key, s in slices.items()
            if key not in open_keys
        ]
        Booking.objects.bulk_create(new)
    return len(new), closed


def _booking(cluster: Cluster, key: str, s: Slice, now: datetime) -> Booking:
    chip = s.chip
    return Booking(
        cluster=cluster,
        key=key,
        namespace=s.namespace,
        pod_name=s.pod_name,
        container_index=s.container_index,
        queue=s.volcano_queue or "default",
        node_name=s.node_name or (chip.node.name if chip else ""),
        chip_index=chip.index if chip else 0,
        common_word=s.common_word,
        template=s.template or "",
        aicore=s.aicore,
        chip_aicore=chip.aicore if chip else 0,
        memory=s.memory,
        # A slice seen late (the worker was down) still books from its start.
        started_at=min(s.started_at, now) if s.started_at else now,
    )
