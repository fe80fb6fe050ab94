"""Writing derived cluster state into the database, and telling browsers about it.

A ClusterWriter applies either a full list (replace everything of one kind) or
a batch of watch events, in one transaction each, then recomputes the usage of
the chips those changes touched with one aggregate query, and broadcasts small
deltas on commit. Full lists diff against what is stored, so a relist after a
410 or an outage converges without duplicates.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from django.db import connection, transaction
from django.db.models import OuterRef, Subquery
from django.dispatch import Signal
from django.utils import timezone

from apps.inventory.hami.deviceconfig import (
    DeviceConfigError,
    DeviceConfigLimitError,
    parse_device_config,
)
from apps.inventory.models import (
    Chip,
    ChipEvent,
    ChipType,
    Cluster,
    Node,
    PendingPod,
    Slice,
)
from apps.inventory.selectors import CHIP_USAGE_FIELDS
from apps.inventory.sync.bulk import insert_rows
from apps.inventory.sync.derive import (
    NodeState,
    PendingState,
    SliceState,
    node_state,
    pod_pending,
    pod_slices,
)
from apps.live.events import (
    Event,
    chips_payloads,
    node_removed_payload,
    nodes_payloads,
    object_payload,
    object_removed_payload,
    pending_payload,
    pending_reason_payload,
    slices_payload,
    slices_removed_payload,
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

SLICE_FIELDS = (
    "pod_uid",
    "node_name",
    "common_word",
    "template",
    "memory",
    "aicore",
    "aicpu",
    "priority",
    "priority_class",
    "preemptable",
    "volcano_queue",
    "phase",
    "started_at",
)
CHIP_FIELDS = (
    "common_word",
    "index",
    "slots",
    "memory",
    "aicore",
    "aicpu",
    "healthy",
    "network_id",
    "handshake",
    "handshake_at",
)
NODE_FIELDS = (
    "uid",
    "labels",
    "ready",
    "ascend_enabled",
    "hami_vnpu_core",
    "unschedulable",
    "resource_version",
)


class UnreadableObject(Exception):
    """A watched object the portal refuses to read; sync skips and records it."""


class _PodsAndNodesWriter:
    """Nodes, chips, slices, pending pods and usage of one cluster."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self._shapes: dict[str, dict[str, tuple[int, int]]] = {}
        self._chip_aicpu: dict[str, int] = {}
        self.refresh_chip_types()

    def refresh_chip_types(self) -> None:
        """Reload template shapes (AICore/AICPU per template) after a config change."""
        self._shapes.clear()
        self._chip_aicpu.clear()
        for chip_type in ChipType.objects.filter(cluster=self.cluster).prefetch_related(
            "templates"
        ):
            self._chip_aicpu[chip_type.common_word] = chip_type.ai_cpu or 0
            self._shapes[chip_type.common_word] = {
                t.name: (t.ai_core or 0, t.ai_cpu or 0)
                for t in chip_type.templates.all()
            }

    # --- nodes -------------------------------------------------------------------

    def replace_nodes(self, nodes: Sequence[Mapping[str, Any]]) -> None:
        """Make the stored nodes and chips equal to a full list."""
        states = [node_state(n) for n in nodes]
        self.refresh_chip_types()
        with transaction.atomic():
            self._serialize()
            names = {s.name for s in states}
            gone = list(
                Node.objects.order_by()
                .filter(cluster=self.cluster)
                .exclude(name__in_array=names)
                .values_list("name", flat=True)
            )
            self._upsert_nodes(states)
            if gone:
                Node.objects.order_by().filter(
                    cluster=self.cluster, name__in_array=gone
                ).delete()
            self._after_node_change(None, gone)

    def apply_node_events(
        self, events: Iterable[tuple[str, Mapping[str, Any]]]
    ) -> None:
        """Apply ADDED/MODIFIED/DELETED node events (the last event per node wins)."""
        latest: dict[str, tuple[str, Mapping[str, Any]]] = {}
        for kind, obj in events:
            latest[(obj.get("metadata") or {}).get("name", "")] = (kind, obj)
        upserts = [
            node_state(obj) for kind, obj in latest.values() if kind != "DELETED"
        ]
        deletes = [name for name, (kind, _) in latest.items() if kind == "DELETED"]
        with transaction.atomic():
            self._serialize()
            touched = self._upsert_nodes(upserts)
            if deletes:
                Node.objects.order_by().filter(
                    cluster=self.cluster, name__in_array=deletes
                ).delete()
            self._after_node_change(touched, deletes)

    def _upsert_nodes(self, states: Sequence[NodeState]) -> set[str]:
        """Write nodes and their chips; returns the uuids of the chips touched."""
        if not states:
            return set()
        now = timezone.now()
        existing = {
            n.name: n
            for n in Node.objects.order_by().filter(
                cluster=self.cluster, name__in_array=[s.name for s in states]
            )
        }
        new_nodes, changed_nodes = [], []
        for state in states:
            values = {
                "uid": state.uid,
                "labels": dict(state.labels),
                "ready": state.ready,
                "ascend_enabled": state.ascend_enabled,
                "hami_vnpu_core": state.hami_vnpu_core,
                "unschedulable": state.unschedulable,
                "resource_version": state.resource_version,
            }
            node = existing.get(state.name)
            if node is None:
                new_nodes.append(
                    {
                        "cluster_id": self.cluster.pk,
                        "name": state.name,
                        "synced_at": now,
                        **values,
                    }
                )
            elif any(
                getattr(node, k) != v
                for k, v in values.items()
                if k != "resource_version"
            ):
                for key, value in values.items():
                    setattr(node, key, value)
                node.synced_at = now
                changed_nodes.append(node)
        insert_rows(Node, new_nodes)
        Node.objects.bulk_update(
            changed_nodes, [*NODE_FIELDS, "synced_at"], batch_size=1000
        )
        node_ids = dict(
            Node.objects.order_by()
            .filter(cluster=self.cluster, name__in_array=[s.name for s in states])
            .values_list("name", "id")
        )
        touched = self._upsert_chips(states, node_ids)
        # One delta for many nodes: a full list of 1,000 nodes is one message, not 1,000.
        changed = [
            *((n["name"], n["ready"]) for n in new_nodes),
            *((n.name, n.ready) for n in changed_nodes),
        ]
        for payload in nodes_payloads(changed):
            broadcast_on_commit(cluster_group(self.cluster.pk), Event.NODES, payload)
        return touched

    def _upsert_chips(
        self, states: Sequence[NodeState], node_ids: Mapping[str, int]
    ) -> set[str]:
        """Write the chips of these nodes; returns the uuids of chips that changed.

        The device plugin re-registers every node every 30 s, which moves only
        the handshake time. That is written with one UPDATE per node and chip
        type and does not count as a change, so a quiet cluster of 8,000 chips
        sends nobody 8,000 rows every 30 seconds.
        """
        stored = {
            c.uuid: c
            for c in Chip.objects.order_by().filter(
                cluster=self.cluster, node_id__in_array=list(node_ids.values())
            )
        }
        wanted_uuids: set[str] = set()
        new_chips, changed = [], []
        handshakes: dict[tuple[int, str], tuple[str, Any]] = {}
        for state in states:
            node_id = node_ids[state.name]
            for chip in state.chips:
                wanted_uuids.add(chip.uuid)
                values = {
                    "common_word": chip.common_word,
                    "index": chip.index,
                    "slots": chip.slots,
                    "memory": chip.memory,
                    "aicore": chip.aicore,
                    "aicpu": self._chip_aicpu.get(chip.common_word, 0),
                    "healthy": chip.healthy,
                    "network_id": chip.network_id,
                }
                handshake = {
                    "handshake": chip.handshake,
                    "handshake_at": chip.handshake_at,
                }
                row = stored.get(chip.uuid)
                if row is None:
                    new_chips.append(
                        {
                            "cluster_id": self.cluster.pk,
                            "node_id": node_id,
                            "uuid": chip.uuid,
                            **values,
                            **handshake,
                        }
                    )
                    continue
                if row.node_id != node_id or any(
                    getattr(row, k) != v for k, v in values.items()
                ):
                    for key, value in {**values, **handshake}.items():
                        setattr(row, key, value)
                    row.node_id = node_id
                    changed.append(row)
                elif (row.handshake, row.handshake_at) != (
                    chip.handshake,
                    chip.handshake_at,
                ):
                    handshakes[(node_id, chip.common_word)] = (
                        chip.handshake,
                        chip.handshake_at,
                    )
        # A chip that moved from another node row is matched by uuid across the cluster.
        moved = {
            c.uuid: c
            for c in Chip.objects.order_by().filter(
                cluster=self.cluster, uuid__in_array=[c["uuid"] for c in new_chips]
            )
        }
        for chip in list(new_chips):
            if chip["uuid"] in moved:
                row = moved[chip["uuid"]]
                for key in (*CHIP_FIELDS, "node_id"):
                    setattr(row, key, chip[key])
                changed.append(row)
                new_chips.remove(chip)
        insert_rows(Chip, new_chips)
        Chip.objects.bulk_update(changed, [*CHIP_FIELDS, "node"], batch_size=2000)
        for (node_id, common_word), (kind, at) in handshakes.items():
            Chip.objects.order_by().filter(
                cluster=self.cluster, node_id=node_id, common_word=common_word
            ).update(handshake=kind, handshake_at=at)
        removed = [uuid for uuid in stored if uuid not in wanted_uuids]
        if removed:
            Chip.objects.order_by().filter(
                cluster=self.cluster, uuid__in_array=removed
            ).delete()
        return {c["uuid"] for c in new_chips} | {c.uuid for c in changed} | set(removed)

    def _after_node_change(self, touched: set[str] | None, gone: Sequence[str]) -> None:
        """Link waiting slices and recount usage of the touched chips (None: all)."""
        # Slices that arrived before their chip get linked now, in one statement.
        Slice.objects.order_by().filter(cluster=self.cluster, chip__isnull=True).update(
            chip=Subquery(
                Chip.objects.order_by()
                .filter(cluster=self.cluster, uuid=OuterRef("chip_uuid"))
                .values("id")[:1]
            )
        )
        self.recompute_usage(touched, force_broadcast=True)
        for name in gone:
            broadcast_on_commit(
                cluster_group(self.cluster.pk),
                Event.NODE_REMOVED,
                node_removed_payload(name),
            )

    # --- pods --------------------------------------------------------------------

    def _slice_row(self, state: SliceState) -> dict[str, Any]:
        shapes = self._shapes.get(state.common_word, {})
        if state.template:
            aicore, aicpu = shapes.get(state.template, (0, 0))
        else:  # a whole card holds all of the chip's cores
            aicore, aicpu = -1, self._chip_aicpu.get(state.common_word, 0)
        return {
            "pod_uid": state.pod_uid,
            "node_name": state.node_name,
            "common_word": state.common_word,
            "template": state.template,
            "memory": state.memory,
            "aicore": aicore,
            "aicpu": aicpu,
            "priority": state.priority,
            "priority_class": state.priority_class,
            "preemptable": state.preemptable,
            "volcano_queue": state.volcano_queue,
            "phase": state.phase,
            "started_at": state.started_at,
        }

    def replace_pods(self, pods: Sequence[Mapping[str, Any]]) -> None:
        """Make stored slices and pending pods equal to a full list of pods."""
        slices = [s for pod in pods for s in pod_slices(pod, self._shapes.keys())]
        pending = [p for p in (pod_pending(pod) for pod in pods) if p is not None]
        self.refresh_chip_types()
        with transaction.atomic():
            self._serialize()
            self._sync_slices(slices, scope=None)
            self._sync_pending(pending, scope=None)

    def apply_pod_events(self, events: Iterable[tuple[str, Mapping[str, Any]]]) -> None:
        """Apply a batch of pod events (the last event per pod wins)."""
        latest: dict[tuple[str, str], tuple[str, Mapping[str, Any]]] = {}
        for kind, obj in events:
            meta = obj.get("metadata") or {}
            latest[(meta.get("namespace", ""), meta.get("name", ""))] = (kind, obj)
        slices: list[SliceState] = []
        pending: list[PendingState] = []
        self.refresh_chip_types()
        for kind, obj in latest.values():
            if kind == "DELETED":
                continue
            slices.extend(pod_slices(obj, self._shapes.keys()))
            state = pod_pending(obj)
            if state is not None:
                pending.append(state)
        with transaction.atomic():
            self._serialize()
            self._sync_slices(slices, scope=set(latest))
            self._sync_pending(pending, scope=set(latest))

    def _sync_slices(
        self, wanted: Sequence[SliceState], scope: set[tuple[str, str]] | None
    ) -> None:
        """Diff ``wanted`` against stored slices (all of them, or only the pods in ``scope``)."""
        stored_qs = Slice.objects.order_by().filter(cluster=self.cluster)
        if scope is not None:
            stored_qs = stored_qs.filter(pod_name__in_array={name for _, name in scope})
        stored = {
            (s.namespace, s.pod_name, s.chip_uuid, s.container_index): s
            for s in stored_qs
            if scope is None or (s.namespace, s.pod_name) in scope
        }
        chip_ids = dict(
            Chip.objects.order_by()
            .filter(cluster=self.cluster, uuid__in_array={s.chip_uuid for s in wanted})
            .values_list("uuid", "id")
        )
        chip_aicore = dict(
            Chip.objects.order_by()
            .filter(id__in_array=chip_ids.values())
            .values_list("uuid", "aicore")
        )
        touched: set[str] = set()
        new_rows, changed, wanted_keys = [], [], set()
        for state in wanted:
            wanted_keys.add(state.key)
            values = self._slice_row(state)
            if values["aicore"] == -1:
                values["aicore"] = chip_aicore.get(state.chip_uuid, 0)
            row = stored.get(state.key)
            if row is None:
                new_rows.append(
                    {
                        "cluster_id": self.cluster.pk,
                        "chip_id": chip_ids.get(state.chip_uuid),
                        "chip_uuid": state.chip_uuid,
                        "namespace": state.namespace,
                        "pod_name": state.pod_name,
                        "container_index": state.container_index,
                        **values,
                    }
                )
                touched.add(state.chip_uuid)
            elif any(
                getattr(row, k) != v for k, v in values.items()
            ) or row.chip_id != chip_ids.get(state.chip_uuid):
                for key, value in values.items():
                    setattr(row, key, value)
                row.chip_id = chip_ids.get(state.chip_uuid)
                changed.append(row)
                touched.add(state.chip_uuid)
        removed = [row for key, row in stored.items() if key not in wanted_keys]
        self._record_history(new_rows, removed, first_list=scope is None and not stored)
        insert_rows(Slice, new_rows)
        Slice.objects.bulk_update(changed, [*SLICE_FIELDS, "chip"], batch_size=2000)
        if removed:
            Slice.objects.order_by().filter(
                id__in_array=[r.id for r in removed]
            ).delete()
            touched.update(r.chip_uuid for r in removed)
        group = cluster_group(self.cluster.pk)
        if new_rows or changed:
            broadcast_on_commit(
                group, Event.SLICES, slices_payload([*new_rows, *changed])
            )
        if removed:
            broadcast_on_commit(
                group,
                Event.SLICES_REMOVED,
                slices_removed_payload((r.namespace, r.pod_name) for r in removed),
            )
        # A full list recounts every chip: cheaper than naming 8,000 of them.
        self.recompute_usage(touched if scope is not None else None)
        if new_rows or removed:
            cluster_id = self.cluster.pk
            added = {_pod_of(r) for r in new_rows}
            gone = {_pod_of(r) for r in removed}
            transaction.on_commit(
                lambda: slices_changed.send(
                    sender=ClusterWriter,
                    cluster_id=cluster_id,
                    added=added,
                    removed=gone,
                )
            )

    def _record_history(
        self,
        placed: Sequence[Mapping[str, Any]],
        released: Sequence[Slice],
        *,
        first_list: bool,
    ) -> None:
        """Write placed/released events for the chips' history.

        The very first list of a cluster is not history (those slices were
        placed before the portal looked), so it records nothing.
        """
        if first_list:
            return
        now = timezone.now()
        events = [
            {
                "cluster_id": self.cluster.pk,
                "chip_uuid": row["chip_uuid"],
                "kind": ChipEvent.Kind.PLACED,
                "namespace": row["namespace"],
                "pod_name": row["pod_name"],
                "template": row["template"],
                "memory": row["memory"],
                "priority": row["priority"],
                "at": row["started_at"] or now,
            }
            for row in placed
        ] + [
            {
                "cluster_id": self.cluster.pk,
                "chip_uuid": row.chip_uuid,
                "kind": ChipEvent.Kind.RELEASED,
                "namespace": row.namespace,
                "pod_name": row.pod_name,
                "template": row.template,
                "memory": row.memory,
                "priority": row.priority,
                "at": now,
            }
            for row in released
        ]
        insert_rows(ChipEvent, events)

    def _sync_pending(
        self, wanted: Sequence[PendingState], scope: set[tuple[str, str]] | None
    ) -> None:
        stored_qs = PendingPod.objects.order_by().filter(cluster=self.cluster)
        stored = {
            (p.namespace, p.name): p
            for p in stored_qs
            if scope is None or (p.namespace, p.name) in scope
        }
        wanted_by_key = {(p.namespace, p.name): p for p in wanted}
        gone = [p.id for key, p in stored.items() if key not in wanted_by_key]
        if gone:
            PendingPod.objects.order_by().filter(id__in_array=gone).delete()
        for key, state in wanted_by_key.items():
            values = {
                "uid": state.uid,
                "common_word": state.common_word,
                "memory": state.memory,
                "priority": state.priority,
                "priority_class": state.priority_class,
                "created_at": state.created_at,
            }
            row = stored.get(key)
            if row is None:
                PendingPod.objects.create(
                    cluster=self.cluster,
                    namespace=state.namespace,
                    name=state.name,
                    reason=state.message,
                    **values,
                )
            else:
                for field, value in values.items():
                    setattr(row, field, value)
                if state.message:
                    row.reason = state.message
                row.save()
        if gone or wanted_by_key:
            count = PendingPod.objects.order_by().filter(cluster=self.cluster).count()
            broadcast_on_commit(
                cluster_group(self.cluster.pk), Event.PENDING, pending_payload(count)
            )

    def set_pending_reason(self, namespace: str, name: str, reason: str) -> None:
        """Record the scheduler's reason (from an Event) on a pending pod."""
        updated = (
            PendingPod.objects.order_by()
            .filter(cluster=self.cluster, namespace=namespace, name=name)
            .update(reason=reason)
        )
        if updated:
            broadcast_on_commit(
                cluster_group(self.cluster.pk),
                Event.PENDING_REASON,
                pending_reason_payload(namespace, name, reason),
            )

    def _serialize(self) -> None:
        """Lock the cluster row for the rest of the transaction.

        Node and pod streams write in separate threads (or workers). Usage is
        recounted from chips and slices, so two concurrent transactions could
        each miss the other's uncommitted rows and both write a stale count
        (PostgreSQL's READ COMMITTED). Taking this lock first makes them take
        turns, and each then sees what the other committed.
        """
        list(
            Cluster.objects.select_for_update()
            .filter(pk=self.cluster.pk)
            .values_list("pk", flat=True)
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
        chips = Chip.objects.order_by().filter(cluster=self.cluster)
        if chip_uuids is not None:
            chips = chips.filter(uuid__in_array=chip_uuids)
        usage = ("slots_used", "memory_used", "aicore_used", "aicpu_used")
        before = {row[0]: row[1:] for row in chips.values_list("id", *usage)}
        _recount(
            self.cluster.pk, sorted(chip_uuids) if chip_uuids is not None else None
        )
        after = {row[0]: row[1:] for row in chips.values_list("id", *usage)}
        changed = sorted(
            i
            for i, values in after.items()
            if force_broadcast or before.get(i) != values
        )
        if changed:
            rows = (
                Chip.objects.order_by()
                .filter(id__in_array=changed)
                .order_by("id")
                .values_list(*CHIP_USAGE_FIELDS)
            )
            for payload in chips_payloads(rows):
                broadcast_on_commit(
                    cluster_group(self.cluster.pk), Event.CHIPS, payload
                )
        return changed


def _recount(cluster_id: int, chip_uuids: list[str] | None) -> None:
    """Set the usage columns of chips (all, or these) from their slices, in two statements.

    An aggregate joined with UPDATE ... FROM (PostgreSQL and SQLite >= 3.33),
    then zero for chips with no slice left. At 8,000 chips this is one pass
    over the slices instead of four correlated subqueries per chip.
    """
    chip = connection.ops.quote_name(Chip._meta.db_table)
    slice_ = connection.ops.quote_name(Slice._meta.db_table)
    only_chip, only_slice, uuids = "", "", list(chip_uuids or [])
    params: list[Any] = []
    if chip_uuids is not None:
        if not uuids:
            return
        if connection.vendor == "postgresql":
            # One array parameter, not 8,000 placeholders (see apps.common.lookups).
            marks, params = "%s::varchar[]", [uuids]
            only_chip = f" AND {chip}.uuid = ANY({marks})"
            only_slice = f" AND chip_uuid = ANY({marks})"
        else:
            marks, params = ", ".join(["%s"] * len(uuids)), uuids
            only_chip = f" AND {chip}.uuid IN ({marks})"
            only_slice = f" AND chip_uuid IN ({marks})"
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {chip} SET slots_used = s.n, memory_used = s.mem, aicore_used = s.core, aicpu_used = s.cpu "  # noqa: S608 - table names are ours, values are parameters
            "FROM (SELECT chip_uuid, COUNT(*) AS n, SUM(memory) AS mem, SUM(aicore) AS core, SUM(aicpu) AS cpu "
            f"FROM {slice_} WHERE cluster_id = %s{only_slice} GROUP BY chip_uuid) AS s "
            f"WHERE {chip}.cluster_id = %s AND {chip}.uuid = s.chip_uuid{only_chip}",
            [cluster_id, *params, cluster_id, *params],
        )
        cursor.execute(
            f"UPDATE {chip} SET slots_used = 0, memory_used = 0, aicore_used = 0, aicpu_used = 0 "  # noqa: S608
            f"WHERE {chip}.cluster_id = %s{only_chip} AND slots_used + memory_used + aicore_used + aicpu_used > 0 "
            # NOT IN over a hashed subquery: a correlated NOT EXISTS was
            # planned as a nested loop right after a big COPY (2.7 s at 8,000 chips).
            f"AND {chip}.uuid NOT IN (SELECT chip_uuid FROM {slice_} WHERE cluster_id = %s)",
            [cluster_id, *params, cluster_id],
        )


def _pod_of(row: Any) -> tuple[str, str]:
    if isinstance(row, Mapping):
        return (row["namespace"], row["pod_name"])
    return (row.namespace, row.pod_name)


class ControlPlaneMixin:
    """Handlers for the whole objects sync keeps: ConfigMaps, DaemonSets, Deployments,
    PriorityClasses, and scheduling Events (the reasons of pending pods)."""

    cluster: Cluster

    def replace_objects(
        self, kind: str, namespace: str, name: str, items: Sequence[Mapping[str, Any]]
    ) -> None:
        from apps.inventory.models import ClusterObject

        with transaction.atomic():
            if not items:
                ClusterObject.objects.filter(
                    cluster=self.cluster, kind=kind, namespace=namespace, name=name
                ).delete()
                broadcast_on_commit(
                    cluster_group(self.cluster.pk),
                    Event.OBJECT_REMOVED,
                    object_removed_payload(kind, name),
                )
            for obj in items:
                self._store_object(kind, obj)

    def apply_object_events(self, kind: str, events: Events) -> None:
        from apps.inventory.models import ClusterObject

        with transaction.atomic():
            for event_type, obj in events:
                meta = obj.get("metadata") or {}
                if event_type == "DELETED":
                    ClusterObject.objects.filter(
                        cluster=self.cluster,
                        kind=kind,
                        namespace=meta.get("namespace", ""),
                        name=meta.get("name", ""),
                    ).delete()
                else:
                    self._store_object(kind, obj)
            if kind == "Deployment" and events:
                # A watched Deployment is a scheduler: a rollout moves its
                # status as pods start and go, so the config it placed by
                # may have changed (apps.inventory.in_effect).
                from apps.inventory.in_effect import config_loaded_refresh_soon

                config_loaded_refresh_soon(self.cluster.pk)

    def replace_volcano_queues(self, items: Sequence[Mapping[str, Any]]) -> None:
        """Mirror every Volcano Queue (cluster-scoped), dropping the ones gone."""
        from apps.inventory.models import ClusterObject

        with transaction.atomic():
            names = [(i.get("metadata") or {}).get("name", "") for i in items]
            gone = ClusterObject.objects.filter(
                cluster=self.cluster, kind=VOLCANO_QUEUE_KIND
            ).exclude(name__in=names)
            changed = gone.delete()[0] > 0
            for item in items:
                changed |= self._store_object(VOLCANO_QUEUE_KIND, item)
            if changed:
                self._volcano_queues_changed()

    def apply_volcano_queue_events(self, events: Events) -> None:
        """Apply watch events of Volcano Queues."""
        self.apply_object_events(VOLCANO_QUEUE_KIND, events)
        if events:
            self._volcano_queues_changed()

    def _volcano_queues_changed(self) -> None:
        cluster_id = self.cluster.pk
        transaction.on_commit(
            lambda: volcano_queues_changed.send(
                sender=ClusterWriter, cluster_id=cluster_id
            )
        )

    def _store_object(self, kind: str, obj: Mapping[str, Any]) -> bool:
        """Store one object; True when it is new or changed."""
        from apps.inventory.models import ClusterObject

        meta = obj.get("metadata") or {}
        namespace, name = meta.get("namespace", ""), meta.get("name", "")
        rv = meta.get("resourceVersion", "")
        is_device_config = (
            kind == "ConfigMap"
            and namespace == self.cluster.device_config_namespace
            and name == self.cluster.device_config_name
        )
        text = (obj.get("data") or {}).get("device-config.yaml")
        if is_device_config and isinstance(text, str):
            _check_readable(text)
        row, created = ClusterObject.objects.get_or_create(
            cluster=self.cluster,
            kind=kind,
            namespace=namespace,
            name=name,
            defaults={"resource_version": rv, "data": dict(obj)},
        )
        changed = not created and row.resource_version != rv
        if changed:
            row.resource_version, row.data = rv, dict(obj)
            row.save()
        if created or changed:
            broadcast_on_commit(
                cluster_group(self.cluster.pk),
                Event.OBJECT,
                object_payload(kind, namespace, name, rv),
            )
        if is_device_config:
            from apps.inventory.services import deviceconfig_observe

            if text is not None and deviceconfig_observe(
                cluster=self.cluster, text=text, resource_version=rv
            ):
                self.reapply_chip_types()
        return created or changed

    def replace_priority_classes(self, items: Sequence[Mapping[str, Any]]) -> None:
        from apps.inventory.models import PriorityClass

        with transaction.atomic():
            names = {(i.get("metadata") or {}).get("name") for i in items}
            PriorityClass.objects.filter(cluster=self.cluster).exclude(
                name__in_array=names
            ).delete()
            for item in items:
                self._store_priority_class(item)

    def apply_priority_class_events(self, events: Events) -> None:
        from apps.inventory.models import PriorityClass

        with transaction.atomic():
            for event_type, obj in events:
                name = (obj.get("metadata") or {}).get("name", "")
                if event_type == "DELETED":
                    PriorityClass.objects.filter(
                        cluster=self.cluster, name=name
                    ).delete()
                else:
                    self._store_priority_class(obj)

    def _store_priority_class(self, obj: Mapping[str, Any]) -> None:
        from apps.inventory.models import PriorityClass

        PriorityClass.objects.update_or_create(
            cluster=self.cluster,
            name=(obj.get("metadata") or {}).get("name", ""),
            defaults={
                "value": int(obj.get("value") or 0),
                "global_default": bool(obj.get("globalDefault")),
                "preemption_policy": obj.get("preemptionPolicy") or "",
                "description": obj.get("description") or "",
            },
        )

    def apply_scheduling_events(self, events: Events) -> None:
        """Keep the latest FailedScheduling message of each pending pod as its reason."""
        latest: dict[tuple[str, str], str] = {}
        for event_type, obj in events:
            involved = obj.get("involvedObject") or {}
            if (
                event_type == "DELETED"
                or involved.get("kind") != "Pod"
                or obj.get("reason") != "FailedScheduling"
            ):
                continue
            latest[(involved.get("namespace", ""), involved.get("name", ""))] = obj.get(
                "message", ""
            )
        if not latest:
            return
        with transaction.atomic():
            for (namespace, name), message in latest.items():
                self.set_pending_reason(namespace, name, message)


class ClusterWriter(ControlPlaneMixin, _PodsAndNodesWriter):
    """Applies one cluster's list and watch results to the database."""


def _check_readable(text: str) -> None:
    """Refuse a device config beyond the reader's limits, before anything is stored.

    An invalid but readable text is kept as an ``observed`` version (drift
    shows it); one that is too large or nested too deep is not read at all:
    sync records it as skipped and keeps the last good one.
    """
    try:
        parse_device_config(text)
    except DeviceConfigLimitError as exc:
        raise UnreadableObject(f"device-config.yaml: {exc.message}") from exc
    except DeviceConfigError:
        pass  # readable, only invalid: stored as an observed version
