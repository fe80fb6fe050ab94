"""Leaked scheduler node locks: released once the portal saw them unchanged long enough.

Volcano leaves its node lock behind when a device write fails and then binds
nothing on that node for five minutes; reconciliation
(``apps.scheduling.reconcile``) calls :func:`leaked_node_locks_release` on
each run.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from datetime import datetime, timedelta

from django.conf import settings
from django.core.cache import cache

from apps.audit.services import audit_record
from apps.inventory.hami.annotations import NODE_LOCK
from apps.inventory.kube import KubeError
from apps.inventory.models import Cluster
from apps.scheduling.choices import RequestState
from apps.scheduling.kube import ClusterOps
from apps.scheduling.models import Request

log = logging.getLogger(__name__)

#: The audit action of a released leaked lock (counted: vnpu_node_lock_releases).
LOCK_RELEASE_ACTION = "node.lock_release"
#: A pod normally binds within this long; only nodes where one waits longer are read.
LOCK_CHECK_AFTER_SECONDS = 5


def _lock_seen_long_enough(
    cluster: Cluster, node: str, now: datetime, stale_seconds: int
) -> Callable[[str, str], bool]:
    """Whether the portal has seen this exact lock for ``stale_seconds``.

    Aged by the portal's own clock from when it first saw the value (in the
    shared cache), never by the time written in it: the scheduler's clock may
    be off. HAMi's own lock is left to its five-minute expiry: HAMi holds it
    until the device plugin allocates, which may legitimately take a while.
    """

    def stale(key: str, value: str) -> bool:
        if key == NODE_LOCK:
            return False
        digest = hashlib.sha256(value.encode()).hexdigest()[:16]
        seen_key = f"vnpu:node-lock:{cluster.pk}:{node}:{key}:{digest}"
        try:
            cache.add(seen_key, now.timestamp(), timeout=3600)
            first = float(cache.get(seen_key, now.timestamp()))
        except Exception:  # the cache is down: release nothing rather than guess
            log.warning("node %s: lock age unknown (cache failed)", node, exc_info=True)
            return False
        return now.timestamp() - first >= stale_seconds

    return stale


def leaked_node_locks_release(
    cluster: Cluster, ops: ClusterOps, now: datetime
) -> list[str]:
    """Release the stale scheduler locks of nodes where our admitted pods wait.

    Only nodes where one of the portal's pods has waited to be bound for more
    than a few seconds are read, so a quiet cluster costs nothing. A lock is
    released once the portal has seen it unchanged for
    ``NODE_LOCK_STALE_SECONDS``; the release tests each lock's value, so a
    lock a scheduler took again meanwhile stays (``ClusterOps.node_locks_release``).
    """
    stale_seconds = settings.NODE_LOCK_STALE_SECONDS
    if stale_seconds <= 0:
        return []
    nodes = set(
        Request.objects.filter(
            cluster=cluster,
            state=RequestState.ADMITTED,
            admitted_at__lt=now - timedelta(seconds=LOCK_CHECK_AFTER_SECONDS),
        )
        .exclude(node="")
        .values_list("node", flat=True)
    )
    released = []
    for node in sorted(nodes):
        stale = _lock_seen_long_enough(cluster, node, now, stale_seconds)
        try:
            locks = ops.node_locks_release(node, stale)
        except KubeError as exc:
            log.info("node %s: stale lock not released yet: %s", node, exc)
            continue
        if not locks:
            continue
        taken = ", ".join(f"{key} at {at.isoformat()}" for key, at in locks.items())
        log.warning("node %s: released a leaked scheduler node lock (%s)", node, taken)
        audit_record(
            actor=None,
            actor_name="reconcile",
            action=LOCK_RELEASE_ACTION,
            cluster=cluster,
            after={
                "node": node,
                "locks": {k: at.isoformat() for k, at in locks.items()},
            },
            reason=(
                f"node lock taken {taken}, seen unchanged for NODE_LOCK_STALE_SECONDS "
                f"({stale_seconds} s) while admitted pods waited on {node}: "
                "left behind by a failed allocation"
            ),
        )
        released.append(node)
    return released
