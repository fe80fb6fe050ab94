"""Portal queues as Volcano Queues: the manifest, what sync sees of them, keeping them in step.

Volcano serves a pod only through its Queue (``scheduling.volcano.sh/v1beta1``,
cluster-scoped): vc-controller-manager makes a PodGroup in the queue named by
the pod's ``scheduling.volcano.sh/queue-name`` annotation, and with Volcano's
admission webhook a PodGroup whose Queue is missing or not ``Open`` is
refused, so the pod never schedules (without the webhook the scheduler skips
a job whose queue is missing). So:

- each portal queue has a Volcano Queue of the same name, created by the
  portal and labelled ``vnpu-portal.io/managed: "true"``; its
  ``spec.capability`` follows the portal queue's quotas (``capability``).
  A Volcano Queue the portal did not create (Volcano's own ``default``, or
  one an admin made) is used as it is: never changed, never deleted;
- sync mirrors every Volcano Queue (``ClusterObject`` kind ``Queue``), so a
  pass can tell "missing", "not Open" and "Open" without an API call; a
  request whose queue is not Open waits with that reason (``hold_reason``)
  and no pod is created until it is;
- a cluster that does not serve the Queue API (no Volcano CRDs: HAMi's own
  scheduler) is skipped: sync records the resource as not served and health
  says so; nothing waits for a queue there.

Opening and closing stay Volcano's: an admin closes a queue with
``vcctl queue operate -n <name> -a close`` (a ``bus.volcano.sh`` Command that
vc-controller-manager turns into ``status.state``); the portal never reopens it.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from django.db import IntegrityError, transaction

from apps.inventory.hami.messages import N_
from apps.inventory.models import ChipType, Cluster, ClusterObject, SyncCursor
from apps.inventory.sync.targets import VOLCANO_QUEUES
from apps.inventory.sync.writer import VOLCANO_QUEUE_KIND
from apps.scheduling.kube import ClusterOps, KubeError
from apps.scheduling.models import Queue, QueueQuota
from apps.scheduling.pods import LABEL_MANAGED_BY, MANAGED_BY

log = logging.getLogger(__name__)

API_VERSION = "scheduling.volcano.sh/v1beta1"
MANAGED_LABEL = "vnpu-portal.io/managed"
OPEN = "Open"
#: What the API and UI say of a portal queue with no Volcano Queue.
MISSING = "Missing"


# --- pure: the manifest ----------------------------------------------------------------


def capability(
    quotas: Iterable[QueueQuota], chip_types: Mapping[str, ChipType]
) -> dict[str, str]:
    """The Volcano ``spec.capability`` of a portal queue's quotas.

    A slots limit caps the device plugin's slot resource (``huawei.com/<chip
    type>``, one per vNPU); a memory limit caps ``huawei.com/<chip
    type>-memory`` (MB, as the pods ask). An unlimited quota adds nothing, and
    a queue with no limits has no capability (Volcano: unlimited). cpu and
    memory are left out: Volcano reads them as unlimited.
    """
    result: dict[str, str] = {}
    for quota in quotas:
        chip_type = chip_types.get(quota.common_word)
        if chip_type is None:
            continue
        if quota.slots_limit is not None:
            result[chip_type.resource_name] = str(quota.slots_limit)
        if quota.memory_limit is not None and chip_type.resource_memory_name:
            result[chip_type.resource_memory_name] = str(quota.memory_limit)
    return dict(sorted(result.items()))


def queue_manifest(name: str, cap: Mapping[str, str]) -> dict[str, Any]:
    """The Volcano Queue the portal creates for portal queue ``name``."""
    spec: dict[str, Any] = {"weight": 1}
    if cap:
        spec["capability"] = dict(cap)
    return {
        "apiVersion": API_VERSION,
        "kind": "Queue",
        "metadata": {
            "name": name,
            "labels": {MANAGED_LABEL: "true", LABEL_MANAGED_BY: MANAGED_BY},
        },
        "spec": spec,
    }


def is_managed(obj: Mapping[str, Any]) -> bool:
    """True when the portal created this Volcano Queue (its label says so)."""
    labels = (obj.get("metadata") or {}).get("labels") or {}
    return labels.get(MANAGED_LABEL) == "true"


def capability_of(obj: Mapping[str, Any]) -> dict[str, str]:
    """A Volcano Queue's ``spec.capability``, values as strings."""
    cap = (obj.get("spec") or {}).get("capability") or {}
    return {str(k): str(v) for k, v in sorted(cap.items())}


def state_of(obj: Mapping[str, Any]) -> str:
    """A Volcano Queue's ``status.state`` ("" before vc-controller-manager sets it)."""
    return str((obj.get("status") or {}).get("state") or "")


def with_capability(obj: Mapping[str, Any], cap: Mapping[str, str]) -> dict[str, Any]:
    """``obj`` (as sync saw it, resourceVersion included) with ``cap`` as its capability."""
    body = copy.deepcopy(dict(obj))
    body["apiVersion"], body["kind"] = API_VERSION, "Queue"
    body.pop("status", None)  # a subresource: PUT ignores it anyway
    spec = body.setdefault("spec", {})
    if cap:
        spec["capability"] = dict(cap)
    else:
        spec.pop("capability", None)
    return body


# --- selectors: what sync sees ---------------------------------------------------------


@dataclass(frozen=True)
class VolcanoQueues:
    """A cluster's Volcano Queues as sync mirrored them.

    ``watched`` is False when nothing can be said: sync has not listed them
    yet, or the cluster does not serve the Queue API (``served`` False, with
    ``why``). Requests are held for their queue only when ``watched``.
    """

    watched: bool
    served: bool
    why: str
    queues: dict[str, dict[str, Any]] = field(default_factory=dict)


NOT_SERVED = (
    "the cluster serves no Volcano Queue API (no Volcano CRDs, as with HAMi's own "
    "scheduler): portal queues are not mirrored as Volcano Queues there"
)


def volcano_queues(cluster_id: int) -> VolcanoQueues:
    """What sync knows of the cluster's Volcano Queues (no API call)."""
    cursor = SyncCursor.objects.filter(
        cluster_id=cluster_id, resource=VOLCANO_QUEUES
    ).first()
    if cursor is not None and not cursor.served:
        return VolcanoQueues(False, False, NOT_SERVED)
    if cursor is None or cursor.last_list_at is None:
        return VolcanoQueues(
            False, True, "sync has not listed the cluster's Volcano Queues yet"
        )
    rows = ClusterObject.objects.filter(
        cluster_id=cluster_id, kind=VOLCANO_QUEUE_KIND
    ).values_list("name", "data")
    return VolcanoQueues(True, True, "", dict(rows))


def hold_reason(queue_name: str, mirror: VolcanoQueues) -> str | None:
    """Why a request of ``queue_name`` must wait for its Volcano Queue (None: it need not)."""
    if not mirror.watched:
        return None
    obj = mirror.queues.get(queue_name)
    if obj is None:
        return N_(
            'Volcano queue "%(queue)s" does not exist in the cluster; waiting '
            "for it (the portal creates it; a pod sent now would never be scheduled)",
            queue=queue_name,
        )
    state = state_of(obj)
    if state == OPEN:
        return None
    if not state:
        return N_(
            'Volcano queue "%(queue)s" has no state yet; waiting for '
            "vc-controller-manager to open it",
            queue=queue_name,
        )
    return N_(
        'Volcano queue "%(queue)s" is %(state)s in the cluster; waiting until it '
        "is Open again (vcctl queue operate -n %(queue)s -a open)",
        queue=queue_name,
        state=state,
    )


def queue_views(queues: list[Queue]) -> dict[int, dict[str, Any]]:
    """The Volcano side of each portal queue, for the API (queue id -> view)."""
    views: dict[int, dict[str, Any]] = {}
    mirrors: dict[int, VolcanoQueues] = {}
    for queue in queues:
        mirror = mirrors.get(queue.cluster_id)
        if mirror is None:
            mirror = mirrors[queue.cluster_id] = volcano_queues(queue.cluster_id)
        obj = mirror.queues.get(queue.name)
        if not mirror.watched:
            views[queue.pk] = {
                "state": "",
                "managed": False,
                "capability": {},
                "reason": mirror.why,
            }
            continue
        views[queue.pk] = {
            "state": MISSING if obj is None else state_of(obj),
            "managed": obj is not None and is_managed(obj),
            "capability": {} if obj is None else capability_of(obj),
            "reason": hold_reason(queue.name, mirror) or "",
        }
    return views


# --- service: keep them in step -------------------------------------------------------


@dataclass
class QueueSyncReport:
    """What one ``volcano_queues_ensure`` did (queue names)."""

    skipped: str = ""
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unmanaged: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def volcano_queues_ensure(cluster: Cluster, *, ops: ClusterOps) -> QueueSyncReport:
    """Create the missing Volcano Queues of the cluster's portal queues; update their capability.

    Idempotent and cheap when in step: it compares with sync's mirror and
    calls the API only for a queue that is missing or whose capability
    differs. An update is a PUT with the resourceVersion sync saw; when the
    queue changed since (409: vc-controller-manager and the scheduler write
    its status), it is read again and the PUT retried on that version
    (``_update_capability``), so a quota change lands even while Volcano
    keeps writing. Queues the portal did not create are left as they are;
    none is deleted.
    """
    mirror = volcano_queues(cluster.pk)
    report = QueueSyncReport()
    if not mirror.watched:
        report.skipped = mirror.why
        return report
    chip_types = {ct.common_word: ct for ct in ChipType.objects.filter(cluster=cluster)}
    for queue in Queue.objects.filter(cluster=cluster).prefetch_related("quotas"):
        want = capability(queue.quotas.all(), chip_types)
        current = mirror.queues.get(queue.name)
        try:
            if current is None:
                created = ops.create_queue(queue_manifest(queue.name, want))
                _remember(cluster, created)
                report.created.append(queue.name)
            elif not is_managed(current):
                report.unmanaged.append(queue.name)
            elif capability_of(current) != want and _update_capability(
                ops, current, want
            ):
                report.updated.append(queue.name)
        except KubeError as exc:
            if exc.status == 409:
                continue  # made since sync saw the list: the next call
            report.errors.append(f"{queue.name}: {exc}")
            log.warning("cluster %s: Volcano queue %s: %s", cluster.pk, queue.name, exc)
            if exc.transient:
                break  # the cluster is away: no point trying the others now
    return report


#: PUTs of one queue's capability per call: a queue written more often than
#: a GET and a PUT take is left to the next call.
UPDATE_ATTEMPTS = 3


def _update_capability(
    ops: ClusterOps, current: Mapping[str, Any], want: dict[str, str]
) -> bool:
    """PUT ``want`` as the queue's capability, re-reading it on each 409.

    False when there is nothing to do any more (the queue is gone, no longer
    the portal's, or already has ``want``); a 409 on the last attempt is raised.
    """
    name = current["metadata"]["name"]
    attempts_left = UPDATE_ATTEMPTS
    while True:
        try:
            ops.replace_queue(name, with_capability(current, want))
            return True
        except KubeError as exc:
            attempts_left -= 1
            if exc.status != 409 or not attempts_left:
                raise
        fresh = ops.get_queue(name)
        if fresh is None or not is_managed(fresh) or capability_of(fresh) == want:
            return False
        current = fresh


def _remember(cluster: Cluster, obj: Mapping[str, Any]) -> None:
    """Mirror a queue just created, unless sync already has it (sync's copy is newer)."""
    name = (obj.get("metadata") or {}).get("name", "")
    try:
        with transaction.atomic():
            ClusterObject.objects.get_or_create(
                cluster=cluster,
                kind=VOLCANO_QUEUE_KIND,
                namespace="",
                name=name,
                defaults={
                    "resource_version": (obj.get("metadata") or {}).get(
                        "resourceVersion", ""
                    ),
                    "data": dict(obj),
                },
            )
    except IntegrityError:
        pass  # sync stored it meanwhile
