"""The booking ledger: opened and closed from the synced slices.

A refresh compares the cluster's current ``Slice`` rows with its open
bookings: a slice without one opens a booking, an open booking whose slice is
gone is closed now. So a booking's end is known to within one refresh
(``METERING_REFRESH_SECONDS``).

A new booking starts when its pod did (sync knows the pod's start), so a
slice the ledger first sees late (the worker was down) is still booked from
its start; but never before the end of an earlier booking of the same pod
and container, so hours are not booked twice when a slice's key changes (its
pod's uid became known, it moved chips) or a pod is recreated under its name.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from datetime import datetime

from django.db import transaction
from django.db.models import Max

from apps.inventory.models import Cluster, Slice
from apps.metering.models import Booking

FINISHED_PHASES = ("Succeeded", "Failed")
KEY_LENGTH = 200


def slice_booking_key(slice_: Slice) -> str:
    """One slice, whatever its pod is named: pod uid, container, chip."""
    pod = slice_.pod_uid or f"{slice_.namespace}/{slice_.pod_name}"
    key = f"{pod}:{slice_.container_index}:{slice_.chip_uuid}"
    if len(key) > KEY_LENGTH:
        # A long namespace/name (no uid yet): its digest is as unique.
        key = "sha256:" + hashlib.sha256(key.encode()).hexdigest()
    return key


def bookings_refresh(cluster: Cluster, *, now: datetime) -> tuple[int, int]:
    """Open bookings for new slices and close those whose slice is gone.

    Returns (opened, closed). Idempotent: a second run with nothing changed
    writes nothing. Two runs for one cluster take turns (a row lock on the
    cluster), and each reads the slices inside its turn.
    """
    with transaction.atomic():
        Cluster.objects.select_for_update().filter(pk=cluster.pk).first()
        slices = {
            slice_booking_key(s): s
            for s in Slice.objects.filter(cluster=cluster)
            # A finished pod's devices are free again (HAMi releases them).
            .exclude(phase__in=FINISHED_PHASES)
            .select_related("chip", "chip__node")
        }
        open_keys = dict(
            Booking.objects.filter(cluster=cluster, ended_at__isnull=True).values_list(
                "key", "id"
            )
        )
        gone = [pk for key, pk in open_keys.items() if key not in slices]
        closed = Booking.objects.filter(id__in=gone).update(ended_at=now)
        new = {key: s for key, s in slices.items() if key not in open_keys}
        ended = _last_ends(cluster, new.values())
        Booking.objects.bulk_create(
            [
                _booking(cluster, key, s, now, ended.get(_pod_container(s)))
                for key, s in new.items()
            ],
            ignore_conflicts=True,
        )
    return len(new), closed


def _pod_container(s: Slice) -> tuple[str, str, int]:
    return s.namespace, s.pod_name, s.container_index


def _last_ends(
    cluster: Cluster, slices: Iterable[Slice]
) -> dict[tuple[str, str, int], datetime]:
    """When the last closed booking of each new slice's pod and container ended."""
    pods = {_pod_container(s) for s in slices}  # type: ignore[attr-defined]
    if not pods:
        return {}
    rows = (
        Booking.objects.filter(
            cluster=cluster,
            ended_at__isnull=False,
            pod_name__in={name for _, name, _ in pods},
        )
        .values("namespace", "pod_name", "container_index")
        .annotate(last=Max("ended_at"))
    )
    return {
        (r["namespace"], r["pod_name"], r["container_index"]): r["last"]
        for r in rows
        if (r["namespace"], r["pod_name"], r["container_index"]) in pods
    }


def _booking(
    cluster: Cluster, key: str, s: Slice, now: datetime, earlier_end: datetime | None
) -> Booking:
    chip = s.chip
    start = min(s.started_at, now) if s.started_at else now
    if earlier_end is not None:
        start = min(max(start, earlier_end), now)
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
        started_at=start,
    )
