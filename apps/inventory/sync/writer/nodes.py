"""Nodes and their chips: registrations read from node annotations, diffed and
written, and the chips whose capacity changed recounted."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.db.models import OuterRef, Subquery
from django.utils import timezone

from apps.inventory.models import (
    Chip,
    Node,
    Slice,
)
from apps.inventory.nodeconfig.proof import ISOLATION_KEEPS_ROW, settle_isolations
from apps.inventory.sync.bulk import insert_rows
from apps.inventory.sync.derive import (
    NodeState,
    node_state,
)
from apps.inventory.sync.writer.base import WriterBase
from apps.live.events import (
    Event,
    node_removed_payload,
    nodes_payloads,
)
from apps.live.realtime import broadcast_on_commit, cluster_group

CHIP_FIELDS = (
    "common_word",
    "index",
    "slots",
    "memory",
    "aicore",
    "aicpu",
    "healthy",
    "registered",
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
    "vnpu_allocatable",
    "resource_version",
)


@dataclass
class _ChipPlan:
    """What writing some nodes' chips does to the stored rows."""

    wanted: set[str] = field(default_factory=set)  # uuids the nodes report
    new: list[dict[str, Any]] = field(default_factory=list)  # rows to insert
    changed: list[Chip] = field(default_factory=list)  # rows to update
    # (node id, chip type) -> (handshake, at): only the handshake moved
    handshakes: dict[tuple[int, str], tuple[str, Any]] = field(default_factory=dict)


class NodesMixin(WriterBase):
    """Nodes and chips of one cluster."""

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
                "vnpu_allocatable": dict(state.vnpu_allocatable),
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
        plan = self._chip_plan(states, node_ids, stored)
        self._adopt_moved_chips(plan)
        insert_rows(Chip, plan.new)
        Chip.objects.bulk_update(
            plan.changed, [*CHIP_FIELDS, "health_since", "node"], batch_size=2000
        )
        for (node_id, common_word), (kind, at) in plan.handshakes.items():
            Chip.objects.order_by().filter(
                cluster=self.cluster, node_id=node_id, common_word=common_word
            ).update(handshake=kind, handshake_at=at)
        removed = [uuid for uuid in stored if uuid not in plan.wanted]
        # A chip taken out by its isolation keeps its row, unregistered: it is
        # the proof the isolation waits for, and the chip is restored by it.
        kept = {
            uuid for uuid in removed if stored[uuid].isolation in ISOLATION_KEEPS_ROW
        }
        gone = [uuid for uuid in removed if uuid not in kept]
        if gone:
            Chip.objects.order_by().filter(
                cluster=self.cluster, uuid__in_array=gone
            ).delete()
        unregistered = [uuid for uuid in kept if stored[uuid].registered]
        if unregistered:
            Chip.objects.order_by().filter(
                cluster=self.cluster, uuid__in_array=unregistered
            ).update(registered=False)
        settle_isolations(self.cluster, states)
        return (
            {c["uuid"] for c in plan.new}
            | {c.uuid for c in plan.changed}
            | set(removed)
        )

    def _chip_plan(
        self,
        states: Sequence[NodeState],
        node_ids: Mapping[str, int],
        stored: Mapping[str, Chip],
    ) -> _ChipPlan:
        """Compare the nodes' chips with the stored rows of those nodes."""
        plan = _ChipPlan()
        now = timezone.now()
        for state in states:
            node_id = node_ids[state.name]
            for chip in state.chips:
                plan.wanted.add(chip.uuid)
                values = {
                    "common_word": chip.common_word,
                    "index": chip.index,
                    "slots": chip.slots,
                    "memory": chip.memory,
                    "aicore": chip.aicore,
                    "aicpu": self._chip_aicpu.get(chip.common_word, 0),
                    "healthy": chip.healthy,
                    "registered": True,
                    "network_id": chip.network_id,
                }
                handshake = {
                    "handshake": chip.handshake,
                    "handshake_at": chip.handshake_at,
                }
                row = stored.get(chip.uuid)
                if row is None:
                    plan.new.append(
                        {
                            "cluster_id": self.cluster.pk,
                            "node_id": node_id,
                            "uuid": chip.uuid,
                            "health_since": now,
                            **values,
                            **handshake,
                        }
                    )
                elif row.node_id != node_id or any(
                    getattr(row, k) != v for k, v in values.items()
                ):
                    if row.healthy != chip.healthy:
                        row.health_since = now
                    for key, value in {**values, **handshake}.items():
                        setattr(row, key, value)
                    row.node_id = node_id
                    plan.changed.append(row)
                elif (row.handshake, row.handshake_at) != (
                    chip.handshake,
                    chip.handshake_at,
                ):
                    plan.handshakes[(node_id, chip.common_word)] = (
                        chip.handshake,
                        chip.handshake_at,
                    )
        return plan

    def _adopt_moved_chips(self, plan: _ChipPlan) -> None:
        """A "new" chip that moved from another node row is matched by uuid
        across the cluster, and updated instead of inserted."""
        moved = {
            c.uuid: c
            for c in Chip.objects.order_by().filter(
                cluster=self.cluster, uuid__in_array=[c["uuid"] for c in plan.new]
            )
        }
        for chip in list(plan.new):
            if chip["uuid"] in moved:
                row = moved[chip["uuid"]]
                for key in (*CHIP_FIELDS, "node_id"):
                    setattr(row, key, chip[key])
                plan.changed.append(row)
                plan.new.remove(chip)

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
