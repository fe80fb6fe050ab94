"""The sync hooks: when sync changes the slices of the portal's pods, reconcile soon;
when it sees Volcano Queues change, keep the portal's in step and serve their waiters.

Sync sends ``apps.inventory.sync.writer.slices_changed`` after each committed
batch that added or removed slices. Only batches that concern scheduling
(a pod named ``vnpu-req-*``, or any removal while a preemption is being carried
out) enqueue ``reconcile_requests_task``: a request becomes Running as soon as
its pod's Slice appears, and a waiting request is admitted as soon as its
victims' Slices are gone, instead of at the next beat.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from typing import Any

from apps.scheduling import triggers
from apps.scheduling.choices import CARRIED_OUT_STATES
from apps.scheduling.models import PreemptionProposal
from apps.scheduling.pods import POD_PREFIX
from apps.scheduling.tasks import ensure_volcano_queues_task

log = logging.getLogger(__name__)


def on_slices_changed(
    sender: Any,
    *,
    cluster_id: int,
    added: Collection[tuple[str, str]] = (),
    removed: Collection[tuple[str, str]] = (),
    **kwargs: Any,
) -> None:
    """Enqueue a reconciliation of the cluster when the change concerns scheduling."""
    ours = any(name.startswith(POD_PREFIX) for _, name in (*added, *removed))
    try:
        if not ours and not (
            removed
            and PreemptionProposal.objects.filter(
                cluster_id=cluster_id, state__in=CARRIED_OUT_STATES
            ).exists()
        ):
            return
        triggers.run("reconcile", cluster_id)
    except Exception:
        # Runs in sync's thread when tasks are eager: never break sync for this;
        # the periodic pass reconciles anyway.
        log.exception("cluster %s: reconciling after a sync batch failed", cluster_id)


def on_volcano_queues_changed(sender: Any, *, cluster_id: int, **kwargs: Any) -> None:
    """Volcano Queues changed in the cluster: put the portal's back in step, serve waiters.

    A queue opened lets the requests waiting for it proceed at once; a managed
    queue deleted or edited by hand is recreated or corrected.
    """
    try:
        ensure_volcano_queues_task.delay(cluster_id)
    except Exception:
        # As above: never break sync; the periodic pass does the same work.
        log.exception(
            "cluster %s: Volcano queues after a sync batch failed", cluster_id
        )
