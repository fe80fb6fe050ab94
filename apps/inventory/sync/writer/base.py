"""What every part of the writer shares: the cluster, its template shapes, the
row lock that makes concurrent streams take turns, and the usage recount."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from django.db import connection, transaction
from django.db.models import OuterRef, Subquery
from django.dispatch import Signal

from apps.inventory.models import (
    Chip,
    ChipType,
    Cluster,
    Slice,
)
from apps.inventory.selectors import chip_row_values
from apps.live.events import (
    Event,
    chips_payloads,
)
from apps.live.realtime import broadcast_on_commit, cluster_group

log = logging.getLogger(__name__)
Events = Sequence[tuple[str, Mapping[str, Any]]]
# Sent on commit after a batch that added or removed slices, with ``cluster_id``,
# ``added`` and ``removed`` (sets of (namespace, pod)); scheduling listens.
slices_changed = Signal()
# Sent on commit after Volcano Queues changed (``cluster_id``); scheduling listens.
volcano_queues_changed = Signal()
#: ClusterObject.kind of the mirrored Volcano Queues (namespace "").
VOLCANO_QUEUE_KIND = "Queue"


class UnreadableObject(Exception):
    """A watched object the portal refuses to read; sync skips and records it."""


class WriterBase:
    """The cluster, its chip types' shapes, the row lock and the usage recount."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self._shapes: dict[str, dict[str, tuple[int, int]]] = {}
        self._chip_aicpu: dict[str, int] = {}
        self.refresh_chip_types()

    def refresh_chip_types(self) -> None:
        """Reload template shapes (AICore/AICPU per template) after a config change."""
        # One query (chip types left-joined to their templates), not a
        # prefetch's two: every watch batch calls this, and each round trip
        # made while the stream's thread parses waits for the interpreter.
        rows = (
            ChipType.objects.filter(cluster=self.cluster)
            .order_by()
            .values_list(
                "common_word",
                "ai_cpu",
                "templates__name",
                "templates__ai_core",
                "templates__ai_cpu",
            )
        )
        self._shapes.clear()
        self._chip_aicpu.clear()
        for common_word, chip_aicpu, name, t_aicore, t_aicpu in rows:
            self._chip_aicpu[common_word] = chip_aicpu or 0
            shapes = self._shapes.setdefault(common_word, {})
            if name is not None:  # a chip type without templates joins to one null row
                shapes[name] = (t_aicore or 0, t_aicpu or 0)

    def _serialize(self) -> None:
        """Lock the cluster row for the rest of the transaction.

        Node and pod streams write in separate threads (or workers). Usage is
        recounted from chips and slices, so two concurrent transactions could
        each miss the other's uncommitted rows and both write a stale count
        (PostgreSQL's READ COMMITTED). Taking this lock first makes them take
        turns, and each then sees what the other committed.

        On PostgreSQL the transaction also commits without waiting for its WAL
        to reach the disk (``synchronous_commit = off``, this transaction
        only). What sync writes is a mirror of the cluster: a database crash
        can lose at most the last few hundred milliseconds of it, never leave
        it half-written, and the stream's cursor (committed after, and
        waiting for the disk) is then older than what was lost, so the next
        watch or list brings it back. A first list no longer waits for
        megabytes of WAL to be flushed. Both go in one statement: a watch
        batch is a handful of round trips, and each one, made while the
        stream's thread parses, waits its turn for the interpreter.
        """
        if connection.vendor != "postgresql":
            list(
                Cluster.objects.select_for_update()
                .filter(pk=self.cluster.pk)
                .values_list("pk", flat=True)
            )
            return
        table = connection.ops.quote_name(Cluster._meta.db_table)
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT set_config('synchronous_commit', 'off', true) "  # noqa: S608 - our table name
                f"FROM {table} WHERE id = %s FOR UPDATE",
                [self.cluster.pk],
            )

    @transaction.atomic
    def reapply_chip_types(self) -> None:
        """After the chip types changed: new AICPU per chip, AICore/AICPU per slice, usage."""
        self._serialize()
        self.refresh_chip_types()
        for common_word, aicpu in self._chip_aicpu.items():
            Chip.objects.order_by().filter(
                cluster=self.cluster, common_word=common_word
            ).exclude(aicpu=aicpu).update(aicpu=aicpu)
            for template, (aicore, t_aicpu) in self._shapes.get(
                common_word, {}
            ).items():
                Slice.objects.order_by().filter(
                    cluster=self.cluster, common_word=common_word, template=template
                ).exclude(aicore=aicore, aicpu=t_aicpu).update(
                    aicore=aicore, aicpu=t_aicpu
                )
            # a whole card holds all of the chip's cores
            Slice.objects.order_by().filter(
                cluster=self.cluster, common_word=common_word, template=""
            ).update(
                aicore=Subquery(
                    Chip.objects.order_by()
                    .filter(cluster=self.cluster, uuid=OuterRef("chip_uuid"))
                    .values("aicore")[:1]
                ),
                aicpu=aicpu,
            )
        self.recompute_usage(None)

    # --- usage ---------------------------------------------------------------------

    def recompute_usage(
        self, chip_uuids: set[str] | None, *, force_broadcast: bool = False
    ) -> list[int]:
        """Recount the usage columns of these chips (all when None) from their slices.

        The database does the counting (no slice rows travel); the chips whose
        numbers changed are then broadcast.
        Returns the ids of those chips.
        """
        if chip_uuids is not None and not chip_uuids:
            return []
        recounted = _recount(
            self.cluster.pk, sorted(chip_uuids) if chip_uuids is not None else None
        )
        chips = Chip.objects.filter(cluster=self.cluster)
        if not force_broadcast:
            if not recounted:
                return []
            chips = chips.filter(id__in_array=recounted)
        elif chip_uuids is not None:
            chips = chips.filter(uuid__in_array=chip_uuids)
        rows = list(chip_row_values(chips.order_by("id"), "id"))
        for payload in chips_payloads(row[1:] for row in rows):
            broadcast_on_commit(cluster_group(self.cluster.pk), Event.CHIPS, payload)
        return [row[0] for row in rows]


def _recount(cluster_id: int, chip_uuids: list[str] | None) -> list[int]:
    """Set the usage columns of chips (all, or these) from their slices, in one
    statement; returns the ids of the chips whose numbers changed.

    Each chip joined (LEFT JOIN) to its slices' aggregate, zero where it has
    none, and only the chips whose numbers differ are written. At 8,000 chips
    this is one pass over the slices instead of four correlated subqueries per
    chip. The zeroing was a ``NOT IN`` over the slices, planned as a hashed
    subquery only while the slices' chip ids fit in ``work_mem``: at 200,000
    slices (ten times the reference scale) it became a scan of every slice
    per chip and one recount ran for over seven minutes; a join spills to disk
    instead. Rewriting only what changed also spares the table's bloat, and
    the statement names those chips itself (RETURNING), where reading every
    chip's numbers before and after cost two more passes.
    """
    chip = connection.ops.quote_name(Chip._meta.db_table)
    slice_ = connection.ops.quote_name(Slice._meta.db_table)
    only_chip, only_slice, uuids = "", "", list(chip_uuids or [])
    params: list[Any] = []
    if chip_uuids is not None:
        if not uuids:
            return []
        if connection.vendor == "postgresql":
            # One array parameter, not 8,000 placeholders (see apps.common.lookups).
            marks, params = "%s::varchar[]", [uuids]
            only_chip = f" AND c.uuid = ANY({marks})"
            only_slice = f" AND chip_uuid = ANY({marks})"
        else:
            marks, params = ", ".join(["%s"] * len(uuids)), uuids
            only_chip = f" AND c.uuid IN ({marks})"
            only_slice = f" AND chip_uuid IN ({marks})"
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {chip} SET slots_used = u.n, memory_used = u.mem, "  # noqa: S608 - table names are ours, values are parameters
            "aicore_used = u.core, aicpu_used = u.cpu FROM ("
            "SELECT c.id, COALESCE(s.n, 0) AS n, COALESCE(s.mem, 0) AS mem, "
            "COALESCE(s.core, 0) AS core, COALESCE(s.cpu, 0) AS cpu "
            f"FROM {chip} AS c LEFT JOIN ("
            "SELECT chip_uuid, COUNT(*) AS n, SUM(memory) AS mem, SUM(aicore) AS core, "
            f"SUM(aicpu) AS cpu FROM {slice_} WHERE cluster_id = %s{only_slice} "
            "GROUP BY chip_uuid) AS s ON s.chip_uuid = c.uuid "
            f"WHERE c.cluster_id = %s{only_chip}) AS u "
            f"WHERE {chip}.id = u.id AND ({chip}.slots_used <> u.n "
            f"OR {chip}.memory_used <> u.mem OR {chip}.aicore_used <> u.core "
            f"OR {chip}.aicpu_used <> u.cpu) RETURNING {chip}.id",
            [cluster_id, *params, cluster_id, *params],
        )
        return [row[0] for row in cursor.fetchall()]


def pod_of(row: Any) -> tuple[str, str]:
    if isinstance(row, Mapping):
        return (row["namespace"], row["pod_name"])
    return (row.namespace, row.pod_name)
