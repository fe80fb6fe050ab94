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

from django.db import transaction
from django.db.models import Count, OuterRef, Subquery, Sum
from django.utils import timezone

from apps.common.realtime import broadcast_on_commit, cluster_group
from apps.inventory.models import Chip, ChipType, Cluster, Node, PendingPod, Slice
from apps.inventory.selectors import CHIP_USAGE_COLUMNS
from apps.inventory.sync.derive import (
    NodeState,
    PendingState,
    SliceState,
    node_state,
    pod_pending,
    pod_slices,
)

log = logging.getLogger(__name__)
Events = Sequence[tuple[str, Mapping[str, Any]]]

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
            names = {s.name for s in states}
            gone = list(
                Node.objects.filter(cluster=self.cluster)
                .exclude(name__in=names)
                .values_list("name", flat=True)
            )
            self._upsert_nodes(states)
            if gone:
                Node.objects.filter(cluster=self.cluster, name__in=gone).delete()
            self._after_node_change(states, gone)

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
            self._upsert_nodes(upserts)
            if deletes:
                Node.objects.filter(cluster=self.cluster, name__in=deletes).delete()
            self._after_node_change(upserts, deletes)

    def _upsert_nodes(self, states: Sequence[NodeState]) -> None:
        if not states:
            return
        now = timezone.now()
        existing = {
            n.name: n
            for n in Node.objects.filter(
                cluster=self.cluster, name__in=[s.name for s in states]
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
                    Node(cluster=self.cluster, name=state.name, synced_at=now, **values)
                )
            elif any(getattr(node, k) != v for k, v in values.items()):
                for key, value in values.items():
                    setattr(node, key, value)
                node.synced_at = now
                changed_nodes.append(node)
        Node.objects.bulk_create(new_nodes, batch_size=1000)
        Node.objects.bulk_update(
            changed_nodes, [*NODE_FIELDS, "synced_at"], batch_size=1000
        )
        node_ids = dict(
            Node.objects.filter(
                cluster=self.cluster, name__in=[s.name for s in states]
            ).values_list("name", "id")
        )
        self._upsert_chips(states, node_ids)
        for node in [*new_nodes, *changed_nodes]:
            broadcast_on_commit(
                cluster_group(self.cluster.pk),
                "node",
                {"name": node.name, "ready": node.ready},
            )

    def _upsert_chips(
        self, states: Sequence[NodeState], node_ids: Mapping[str, int]
    ) -> None:
        stored = {
            c.uuid: c
            for c in Chip.objects.filter(
                cluster=self.cluster, node_id__in=list(node_ids.values())
            )
        }
        wanted_uuids: set[str] = set()
        new_chips, changed = [], []
        for state in states:
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
                    "handshake": chip.handshake,
                    "handshake_at": chip.handshake_at,
                }
                row = stored.get(chip.uuid)
                if row is None:
                    new_chips.append(
                        Chip(
                            cluster=self.cluster,
                            node_id=node_ids[state.name],
                            uuid=chip.uuid,
                            **values,
                        )
                    )
                elif row.node_id != node_ids[state.name] or any(
                    getattr(row, k) != v for k, v in values.items()
                ):
                    for key, value in values.items():
                        setattr(row, key, value)
                    row.node_id = node_ids[state.name]
                    changed.append(row)
        # A chip that moved from another node row is matched by uuid across the cluster.
        moved = {
            c.uuid: c
            for c in Chip.objects.filter(
                cluster=self.cluster, uuid__in=[c.uuid for c in new_chips]
            )
        }
        for chip in list(new_chips):
            if chip.uuid in moved:
                row = moved[chip.uuid]
                for key in (*CHIP_FIELDS, "node_id"):
                    setattr(row, key, getattr(chip, key))
                changed.append(row)
                new_chips.remove(chip)
        Chip.objects.bulk_create(new_chips, batch_size=2000)
        Chip.objects.bulk_update(changed, [*CHIP_FIELDS, "node"], batch_size=2000)
        removed = [uuid for uuid in stored if uuid not in wanted_uuids]
        if removed:
            Chip.objects.filter(cluster=self.cluster, uuid__in=removed).delete()
        self._touched_chips = wanted_uuids | set(removed)

    def _after_node_change(
        self, states: Sequence[NodeState], gone: Sequence[str]
    ) -> None:
        # Slices that arrived before their chip get linked now, in one statement.
        Slice.objects.filter(cluster=self.cluster, chip__isnull=True).update(
            chip=Subquery(
                Chip.objects.filter(
                    cluster=self.cluster, uuid=OuterRef("chip_uuid")
                ).values("id")[:1]
            )
        )
        self.recompute_usage(
            getattr(self, "_touched_chips", set()), force_broadcast=True
        )
        for name in gone:
            broadcast_on_commit(
                cluster_group(self.cluster.pk), "node_removed", {"name": name}
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
            "phase": state.phase,
            "started_at": state.started_at,
        }

    def replace_pods(self, pods: Sequence[Mapping[str, Any]]) -> None:
        """Make stored slices and pending pods equal to a full list of pods."""
        slices = [s for pod in pods for s in pod_slices(pod)]
        pending = [p for p in (pod_pending(pod) for pod in pods) if p is not None]
        self.refresh_chip_types()
        with transaction.atomic():
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
            slices.extend(pod_slices(obj))
            state = pod_pending(obj)
            if state is not None:
                pending.append(state)
        with transaction.atomic():
            self._sync_slices(slices, scope=set(latest))
            self._sync_pending(pending, scope=set(latest))

    def _sync_slices(
        self, wanted: Sequence[SliceState], scope: set[tuple[str, str]] | None
    ) -> None:
        """Diff ``wanted`` against stored slices (all of them, or only the pods in ``scope``)."""
        stored_qs = Slice.objects.filter(cluster=self.cluster)
        if scope is not None:
            stored_qs = stored_qs.filter(pod_name__in={name for _, name in scope})
        stored = {
            (s.namespace, s.pod_name, s.chip_uuid, s.container_index): s
            for s in stored_qs
            if scope is None or (s.namespace, s.pod_name) in scope
        }
        chip_ids = dict(
            Chip.objects.filter(
                cluster=self.cluster, uuid__in={s.chip_uuid for s in wanted}
            ).values_list("uuid", "id")
        )
        chip_aicore = dict(
            Chip.objects.filter(id__in=chip_ids.values()).values_list("uuid", "aicore")
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
                    Slice(
                        cluster=self.cluster,
                        chip_id=chip_ids.get(state.chip_uuid),
                        chip_uuid=state.chip_uuid,
                        namespace=state.namespace,
                        pod_name=state.pod_name,
                        container_index=state.container_index,
                        **values,
                    )
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
        Slice.objects.bulk_create(new_rows, batch_size=2000)
        Slice.objects.bulk_update(changed, [*SLICE_FIELDS, "chip"], batch_size=2000)
        if removed:
            Slice.objects.filter(id__in=[r.id for r in removed]).delete()
            touched.update(r.chip_uuid for r in removed)
        group = cluster_group(self.cluster.pk)
        if new_rows or changed:
            broadcast_on_commit(
                group,
                "slices",
                {"upserted": [_slice_payload(r) for r in [*new_rows, *changed]][:500]},
            )
        if removed:
            broadcast_on_commit(
                group,
                "slices_removed",
                {
                    "pods": sorted({f"{r.namespace}/{r.pod_name}" for r in removed})[
                        :500
                    ]
                },
            )
        self.recompute_usage(touched)

    def _sync_pending(
        self, wanted: Sequence[PendingState], scope: set[tuple[str, str]] | None
    ) -> None:
        stored_qs = PendingPod.objects.filter(cluster=self.cluster)
        stored = {
            (p.namespace, p.name): p
            for p in stored_qs
            if scope is None or (p.namespace, p.name) in scope
        }
        wanted_by_key = {(p.namespace, p.name): p for p in wanted}
        gone = [p.id for key, p in stored.items() if key not in wanted_by_key]
        if gone:
            PendingPod.objects.filter(id__in=gone).delete()
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
            broadcast_on_commit(
                cluster_group(self.cluster.pk),
                "pending",
                {"count": PendingPod.objects.filter(cluster=self.cluster).count()},
            )

    def set_pending_reason(self, namespace: str, name: str, reason: str) -> None:
        """Record the scheduler's reason (from an Event) on a pending pod."""
        updated = PendingPod.objects.filter(
            cluster=self.cluster, namespace=namespace, name=name
        ).update(reason=reason)
        if updated:
            broadcast_on_commit(
                cluster_group(self.cluster.pk),
                "pending_reason",
                {"pod": f"{namespace}/{name}", "reason": reason},
            )

    def reapply_chip_types(self) -> None:
        """After the chip types changed: new AICPU per chip, AICore/AICPU per slice, usage."""
        self.refresh_chip_types()
        for common_word, aicpu in self._chip_aicpu.items():
            Chip.objects.filter(cluster=self.cluster, common_word=common_word).exclude(
                aicpu=aicpu
            ).update(aicpu=aicpu)
            for template, (aicore, t_aicpu) in self._shapes.get(
                common_word, {}
            ).items():
                Slice.objects.filter(
                    cluster=self.cluster, common_word=common_word, template=template
                ).exclude(aicore=aicore, aicpu=t_aicpu).update(
                    aicore=aicore, aicpu=t_aicpu
                )
            # a whole card holds all of the chip's cores
            Slice.objects.filter(
                cluster=self.cluster, common_word=common_word, template=""
            ).update(
                aicore=Subquery(
                    Chip.objects.filter(
                        cluster=self.cluster, uuid=OuterRef("chip_uuid")
                    ).values("aicore")[:1]
                ),
                aicpu=aicpu,
            )
        self.recompute_usage(None)

    # --- usage ---------------------------------------------------------------------

    def recompute_usage(
        self, chip_uuids: set[str] | None, *, force_broadcast: bool = False
    ) -> list[Chip]:
        """Recount the usage columns of these chips (all when None) from their slices."""
        if chip_uuids is not None and not chip_uuids:
            return []
        slices = Slice.objects.filter(cluster=self.cluster)
        chips = Chip.objects.filter(cluster=self.cluster)
        if chip_uuids is not None:
            slices = slices.filter(chip_uuid__in=chip_uuids)
            chips = chips.filter(uuid__in=chip_uuids)
        sums = {
            row["chip_uuid"]: row
            for row in slices.values("chip_uuid").annotate(
                n=Count("id"), mem=Sum("memory"), core=Sum("aicore"), cpu=Sum("aicpu")
            )
        }
        changed = []
        for chip in chips:
            row = sums.get(chip.uuid) or {"n": 0, "mem": 0, "core": 0, "cpu": 0}
            values = (row["n"], row["mem"] or 0, row["core"] or 0, row["cpu"] or 0)
            if force_broadcast or values != (
                chip.slots_used,
                chip.memory_used,
                chip.aicore_used,
                chip.aicpu_used,
            ):
                chip.slots_used, chip.memory_used, chip.aicore_used, chip.aicpu_used = (
                    values
                )
                changed.append(chip)
        Chip.objects.bulk_update(
            changed,
            ["slots_used", "memory_used", "aicore_used", "aicpu_used"],
            batch_size=2000,
        )
        if changed:
            rows = (
                Chip.objects.filter(id__in=[c.id for c in changed])
                .order_by("id")
                .values_list(*CHIP_USAGE_COLUMNS)
            )
            payload_rows = [list(r) for r in rows]
            for start in range(0, len(payload_rows), 1000):
                broadcast_on_commit(
                    cluster_group(self.cluster.pk),
                    "chips",
                    {"rows": payload_rows[start : start + 1000]},
                )
        return changed


def _slice_payload(row: Slice) -> dict[str, Any]:
    return {
        "namespace": row.namespace,
        "pod_name": row.pod_name,
        "chip_uuid": row.chip_uuid,
        "template": row.template,
        "memory": row.memory,
        "priority": row.priority,
        "phase": row.phase,
        "node_name": row.node_name,
        "common_word": row.common_word,
    }


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
                    "object_removed",
                    {"kind": kind, "name": name},
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

    def _store_object(self, kind: str, obj: Mapping[str, Any]) -> None:
        from apps.inventory.models import ClusterObject

        meta = obj.get("metadata") or {}
        namespace, name = meta.get("namespace", ""), meta.get("name", "")
        rv = meta.get("resourceVersion", "")
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
                "object",
                {
                    "kind": kind,
                    "namespace": namespace,
                    "name": name,
                    "resource_version": rv,
                },
            )
        if (
            kind == "ConfigMap"
            and namespace == self.cluster.device_config_namespace
            and name == self.cluster.device_config_name
        ):
            from apps.inventory.services import deviceconfig_observe

            text = (obj.get("data") or {}).get("device-config.yaml")
            if text is not None and deviceconfig_observe(
                cluster=self.cluster, text=text, resource_version=rv
            ):
                self.reapply_chip_types()

    def replace_priority_classes(self, items: Sequence[Mapping[str, Any]]) -> None:
        from apps.inventory.models import PriorityClass

        with transaction.atomic():
            names = {(i.get("metadata") or {}).get("name") for i in items}
            PriorityClass.objects.filter(cluster=self.cluster).exclude(
                name__in=names
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
