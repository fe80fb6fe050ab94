"""Pods as slices (what HAMi allocated on which chip), their history, and the
pending vNPU pods."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.utils import timezone

from apps.common.lookups import PairIn
from apps.inventory.models import (
    Chip,
    ChipEvent,
    PendingPod,
    Slice,
)
from apps.inventory.sync.bulk import insert_rows
from apps.inventory.sync.derive import (
    PendingState,
    SliceState,
    pod_pending,
    pod_slices,
)
from apps.inventory.sync.writer.base import WriterBase, pod_of, slices_changed
from apps.live.events import (
    Event,
    pending_payload,
    pending_reason_payload,
    slices_payload,
    slices_removed_payload,
)
from apps.live.realtime import broadcast_on_commit, cluster_group

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

# What the diff reads of a stored slice: its key, its id and chip, and the
# columns sync writes.
STORED_FIELDS = (
    "id",
    "namespace",
    "pod_name",
    "chip_uuid",
    "container_index",
    "chip_id",
    *SLICE_FIELDS,
)


@dataclass
class _SlicePlan:
    """What writing some pods' slices does to the stored rows."""

    wanted: set[tuple[str, str, str, int]] = field(default_factory=set)
    new: list[dict[str, Any]] = field(default_factory=list)  # rows to insert
    changed: list[Slice] = field(default_factory=list)  # rows to update
    updated: list[dict[str, Any]] = field(default_factory=list)  # them, as stored
    touched: set[str] = field(default_factory=set)  # chips whose usage moves


class PodsMixin(WriterBase):
    """Slices, chip history and pending pods of one cluster."""

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
        stored = self._stored_slices(scope)
        plan = self._slice_plan(wanted, stored, self._chips_of(wanted, scope))
        removed = [row for key, row in stored.items() if key not in plan.wanted]
        self._record_history(plan.new, removed, first_list=scope is None and not stored)
        insert_rows(Slice, plan.new)
        Slice.objects.bulk_update(
            plan.changed, [*SLICE_FIELDS, "chip"], batch_size=2000
        )
        if removed:
            Slice.objects.order_by().filter(
                id__in_array=[r["id"] for r in removed]
            ).delete()
            plan.touched.update(r["chip_uuid"] for r in removed)
        self._announce_slices(plan, removed)
        # A full list recounts every chip: cheaper than naming 8,000 of them.
        self.recompute_usage(plan.touched if scope is not None else None)

    def _stored_slices(
        self, scope: set[tuple[str, str]] | None
    ) -> dict[tuple[str, str, str, int], dict[str, Any]]:
        """The stored slices (of the pods in ``scope``), by slice key."""
        stored_qs = Slice.objects.order_by().filter(cluster=self.cluster)
        if scope is not None:
            # By (namespace, name) pairs, so the unique index (cluster,
            # namespace, pod_name, ...) finds exactly the batch's pods: by name
            # alone it read every slice of the cluster, and by each column's
            # set it probed every namespace x name (see PairIn).
            stored_qs = stored_qs.filter(PairIn("namespace", "pod_name", scope))
        # Plain dicts, not model instances: a batch of 2,000 pods built 2,000
        # instances to compare a dozen columns, half of a watch batch's time.
        return {
            (s["namespace"], s["pod_name"], s["chip_uuid"], s["container_index"]): s
            for s in stored_qs.values(*STORED_FIELDS)
        }

    def _chips_of(
        self, wanted: Sequence[SliceState], scope: set[tuple[str, str]] | None
    ) -> dict[str, tuple[int, int]]:
        """uuid -> (chip id, AICore) of the chips the slices name."""
        chips = Chip.objects.order_by().filter(cluster=self.cluster)
        if scope is not None:
            # A full list names nearly every chip: all of them, without an
            # array of every uuid to send and match (150 ms at 80,000 chips).
            chips = chips.filter(uuid__in_array={s.chip_uuid for s in wanted})
        return {
            uuid: (chip_id, aicore)
            for uuid, chip_id, aicore in chips.values_list("uuid", "id", "aicore")
        }

    def _slice_plan(
        self,
        wanted: Sequence[SliceState],
        stored: Mapping[tuple[str, str, str, int], dict[str, Any]],
        chips: Mapping[str, tuple[int, int]],
    ) -> _SlicePlan:
        """Compare the wanted slices with the stored rows."""
        plan = _SlicePlan()
        for state in wanted:
            plan.wanted.add(state.key)
            values = self._slice_row(state)
            chip_id, chip_aicore = chips.get(state.chip_uuid, (None, 0))
            if values["aicore"] == -1:
                values["aicore"] = chip_aicore
            row = stored.get(state.key)
            if row is None:
                plan.new.append(
                    {
                        "cluster_id": self.cluster.pk,
                        "chip_id": chip_id,
                        "chip_uuid": state.chip_uuid,
                        "namespace": state.namespace,
                        "pod_name": state.pod_name,
                        "container_index": state.container_index,
                        **values,
                    }
                )
                plan.touched.add(state.chip_uuid)
                continue
            values["chip_id"] = chip_id
            if any(row[k] != v for k, v in values.items()):
                plan.changed.append(Slice(id=row["id"], **values))
                plan.updated.append({**row, **values})
                plan.touched.add(state.chip_uuid)
        return plan

    def _announce_slices(
        self, plan: _SlicePlan, removed: Sequence[Mapping[str, Any]]
    ) -> None:
        """Deltas to the cluster's browsers, and ``slices_changed``, on commit."""
        group = cluster_group(self.cluster.pk)
        if plan.new or plan.changed:
            broadcast_on_commit(
                group, Event.SLICES, slices_payload([*plan.new, *plan.updated])
            )
        if removed:
            broadcast_on_commit(
                group,
                Event.SLICES_REMOVED,
                slices_removed_payload(pod_of(r) for r in removed),
            )
        if plan.new or removed:
            cluster_id = self.cluster.pk
            added = {pod_of(r) for r in plan.new}
            gone = {pod_of(r) for r in removed}
            transaction.on_commit(
                lambda: slices_changed.send(
                    sender=type(self),
                    cluster_id=cluster_id,
                    added=added,
                    removed=gone,
                )
            )

    def _record_history(
        self,
        placed: Sequence[Mapping[str, Any]],
        released: Sequence[Mapping[str, Any]],
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
                "chip_uuid": row["chip_uuid"],
                "kind": ChipEvent.Kind.RELEASED,
                "namespace": row["namespace"],
                "pod_name": row["pod_name"],
                "template": row["template"],
                "memory": row["memory"],
                "priority": row["priority"],
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
