"""Writing derived cluster state into the database, and telling browsers about it.

A ClusterWriter applies either a full list (replace everything of one kind) or
a batch of watch events, in one transaction each, then recomputes the usage of
the chips those changes touched with one aggregate query, and broadcasts small
deltas on commit. Full lists diff against what is stored, so a relist after a
410 or an outage converges without duplicates.

One class, carved by what it writes: ``nodes`` (nodes and chips), ``pods``
(slices, chip history, pending pods), ``control_plane`` (whole objects: the
device config, DaemonSets, Deployments, PriorityClasses, Volcano Queues), on
``base`` (the cluster, template shapes, the row lock, the usage recount).
"""

from __future__ import annotations

from apps.inventory.sync.writer.base import (
    VOLCANO_QUEUE_KIND,
    Events,
    UnreadableObject,
    slices_changed,
    volcano_queues_changed,
)
from apps.inventory.sync.writer.control_plane import ControlPlaneMixin
from apps.inventory.sync.writer.nodes import NodesMixin
from apps.inventory.sync.writer.pods import PodsMixin

__all__ = [
    "VOLCANO_QUEUE_KIND",
    "ClusterWriter",
    "Events",
    "UnreadableObject",
    "slices_changed",
    "volcano_queues_changed",
]


class ClusterWriter(ControlPlaneMixin, PodsMixin, NodesMixin):
    """Applies one cluster's list and watch results to the database."""
