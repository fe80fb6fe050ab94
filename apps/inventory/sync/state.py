"""A cluster's sync state, derived from the cursors its watchers keep.

Every stream (one resource of one cluster) records its last success and last
error on its ``SyncCursor``; the cluster is ``ok`` while every served stream
succeeded recently, ``stale`` when one lags or fails, ``error`` when none ever
succeeded. Watchers call this after each change of their cursor.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from apps.inventory.choices import SyncState
from apps.inventory.models import Cluster, SyncCursor
from apps.live.events import Event, cluster_payload
from apps.live.realtime import broadcast, cluster_group


def refresh_cluster_state(cluster_id: int) -> None:
    """Derive the cluster's sync state from its cursors, and broadcast it when it changes."""
    cluster = Cluster.objects.filter(pk=cluster_id).first()
    if cluster is None:
        return
    # A resource the cluster does not serve is neither an error nor stale.
    cursors = list(SyncCursor.objects.filter(cluster_id=cluster_id, served=True))
    now = timezone.now()
    stale_after = timedelta(seconds=settings.SYNC_STALE_AFTER_SECONDS)
    successes = [c.last_success_at for c in cursors if c.last_success_at]
    errors = [
        c
        for c in cursors
        if c.last_error
        and (
            not c.last_success_at
            or (c.last_error_at and c.last_error_at > c.last_success_at)
        )
    ]
    if not successes:
        state = SyncState.ERROR if errors else SyncState.NEVER
    elif errors or any(
        not c.last_success_at or now - c.last_success_at > stale_after for c in cursors
    ):
        state = SyncState.STALE
    else:
        state = SyncState.OK
    last_success = max(successes) if successes else None
    lag = (now - min(successes)).total_seconds() if successes else None
    # Skipped objects do not make the cluster stale (their streams go on), but
    # the admin must see them: the last error used to stay empty.
    skipped = [
        f"{c.resource}: skipped {e.get('kind')} "
        f"{'/'.join(filter(None, (e.get('namespace'), e.get('name'))))}"
        f" (resourceVersion {e.get('resource_version') or '?'}): {e.get('reason')}"
        for c in cursors
        for e in c.skipped_objects or []
        if isinstance(e, dict)
    ]
    error_text = "; ".join(
        [*(f"{c.resource}: {c.last_error}" for c in errors), *skipped]
    )[:2000]
    changed = (cluster.sync_state, cluster.last_sync_error) != (state, error_text)
    Cluster.objects.filter(pk=cluster_id).update(
        sync_state=state,
        last_sync_at=last_success,
        last_sync_error=error_text,
        sync_lag_seconds=lag,
    )
    if changed:
        broadcast(
            cluster_group(cluster_id),
            Event.CLUSTER,
            cluster_payload(cluster_id, state, error_text, last_success),
        )
