"""Admission: create the pod of every Reserved request whose room is ready.

Runs after the reservation transaction has committed, outside any
transaction (it talks to the cluster). It is safe to run again at any time:

- the pod name is fixed when the room is reserved (``vnpu-req-<id>``), so a
  retry after a crash finds the pod the dead worker created (409
  AlreadyExists with the request's label: adopted) instead of making a second;
- the move Reserved → Admitted is guarded, so if the request was cancelled
  while its pod was being created, the pod just created is deleted again;
- a cluster that is down leaves the request Reserved (its room held) with the
  reason, and the next pass tries again; a namespace that is gone returns
  the request to Pending (room released) with the reason; an answer that
  will never change (a pod spec the API server refuses) fails the request;
- a request whose Volcano queue is missing or not Open (as sync sees it)
  returns to Pending with the reason: its pod would never be scheduled.

The pods of one pass are POSTed together (``CREATE_CONCURRENCY`` at once);
everything before (checks, manifests) and after (each answer's meaning, the
move to Admitted) happens in this thread, highest priority first.
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from typing import Any

from django.utils import timezone

from apps.common.crashpoints import crash_point
from apps.inventory.hami.messages import N_
from apps.inventory.models import ChipType, Cluster, PriorityClass
from apps.inventory.scheduler import SchedulerInEffect, scheduler_in_effect
from apps.scheduling import states
from apps.scheduling.access import priority_refusal
from apps.scheduling.allocation import missing_namespace_reason, with_caveat
from apps.scheduling.choices import ProposalState, RequestState
from apps.scheduling.kube import ClusterOps, KubeError, PodExists
from apps.scheduling.models import Request, Reservation
from apps.scheduling.pods import (
    HOSTNAME_LABEL,
    is_pod_of,
    pod_manifest,
    vnpu_resources,
)
from apps.scheduling.selectors import (
    pod_policy_violations,
    workload_security_context,
)
from apps.scheduling.volcano import VolcanoQueues, hold_reason, volcano_queues

log = logging.getLogger(__name__)


def requests_admit(
    cluster: Cluster, *, ops: ClusterOps, now: datetime | None = None
) -> list[int]:
    """Create the pods of the cluster's Reserved requests; returns the ids admitted.

    A request reserved through a preemption gets its pod only once every
    victim is gone from the cluster, not merely terminating: Volcano counts a
    terminating pod's vNPU as free and would bind the request's pod into a
    room the victim still holds (the device plugin then fails it). Meanwhile
    the node is held for the request (``eviction``), so no other pod takes
    the freed room; the pod tolerates that hold. Highest priority first, so
    a slow cluster serves the most important requests first.
    """
    admitted: list[int] = []
    chip_types = {ct.common_word: ct for ct in ChipType.objects.filter(cluster=cluster)}
    scheduler = scheduler_in_effect(cluster)
    queues = volcano_queues(cluster.pk)
    reserved = list(
        Request.objects.filter(cluster=cluster, state=RequestState.RESERVED)
        .select_related("queue")
        .order_by("-priority", "created_at", "pk")
    )
    reservations = {
        r.request_id: r
        for r in Reservation.objects.filter(request__in=reserved).select_related(
            "chip__node", "proposal"
        )
    }
    ready: list[tuple[Request, Reservation, dict[str, Any]]] = []
    for request in reserved:
        reservation = reservations.get(request.pk)
        manifest = _ready_manifest(request, reservation, chip_types, queues, scheduler)
        if reservation is not None and manifest is not None:
            ready.append((request, reservation, manifest))
    # The POSTs go out together (a burst's pods are created in the time of a
    # few, not one after another); what each answer means is decided here,
    # one at a time, highest priority first.
    answers = _send_all(ops, ready)
    for (request, reservation, _), answer in zip(ready, answers, strict=True):
        if _created(request, answer) and _admitted(
            request, reservation, scheduler, ops, now or timezone.now()
        ):
            admitted.append(request.pk)
    return admitted


def _ready_manifest(
    request: Request,
    reservation: Reservation | None,
    chip_types: dict[str, ChipType],
    queues: VolcanoQueues,
    scheduler: SchedulerInEffect,
) -> dict[str, Any] | None:
    """The pod to create for a Reserved request, or None when it gets none now
    (moved back, failed, or its preemption's victims are not gone yet)."""
    if reservation is None:
        states.request_move(
            request.pk,
            from_states=[RequestState.RESERVED],
            to=RequestState.PENDING,
            **states.UNBOOKED,
            reason=N_(
                "its reservation disappeared (the chip was removed); waiting again"
            ),
        )
        return None
    proposal = reservation.proposal
    if proposal is not None and proposal.state != ProposalState.DONE:
        return None  # victims not gone yet; the room and the node are held
    chip_type = chip_types.get(request.common_word)
    if chip_type is None:
        _fail(
            request,
            N_(
                "chip type %(chip_type)s is no longer configured",
                chip_type=request.common_word,
            ),
        )
        return None
    why = hold_reason(request.queue.name, queues)
    if why is not None:
        # Its Volcano queue closed (or went) since the room was booked:
        # give the room back rather than send a pod that is never scheduled.
        _unbook(request, why)
        return None
    refusal = _pod_policy_refusal(request)
    if refusal is not None:
        _fail(request, refusal)
        return None
    return _manifest(request, reservation, chip_type, scheduler)


#: Pod creations sent at once by one pass (each a POST to the API server).
CREATE_CONCURRENCY = 8


def _send_all(
    ops: ClusterOps, ready: list[tuple[Request, Reservation, dict[str, Any]]]
) -> list[KubeError | PodExists | None]:
    """POST every pod, up to ``CREATE_CONCURRENCY`` at once; per pod, the error
    it met (None: created). Threads only talk to the API server: the database
    is written by the caller."""

    def send(
        item: tuple[Request, Reservation, dict[str, Any]],
    ) -> KubeError | PodExists | None:
        request, _, manifest = item
        try:
            ops.create_pod(request.namespace, manifest)
        except (KubeError, PodExists) as exc:
            return exc
        return None

    if not ready:
        return []
    # The first from this thread: the gateway opens its client once, here.
    first = send(ready[0])
    with ThreadPoolExecutor(max_workers=CREATE_CONCURRENCY) as pool:
        return [first, *pool.map(send, ready[1:])]


def _admitted(
    request: Request,
    reservation: Reservation,
    scheduler: SchedulerInEffect,
    ops: ClusterOps,
    now: datetime,
) -> bool:
    """Make the request whose pod exists now Admitted.

    Returns:
        Whether it was (False: cancelled meanwhile; its pod is deleted).
    """
    crash_point("after_pod_create")
    moved = states.request_move(
        request.pk,
        from_states=[RequestState.RESERVED],
        to=RequestState.ADMITTED,
        admitted_at=now,
        reason=with_caveat(
            _waiting_bind(request, reservation, scheduler), reservation.caveat
        ),
    )
    if not moved:
        # Cancelled while we were creating it: the pod must not outlive the request.
        try:
            ops.delete_pod(request.namespace, request.pod_name, grace_seconds=0)
        except KubeError:
            Request.objects.filter(pk=request.pk).update(pod_cleanup=True)
    return moved


def _waiting_bind(
    request: Request, reservation: Reservation, scheduler: SchedulerInEffect
) -> str:
    """Why an admitted request waits: for the scheduler to bind its pod."""
    node = reservation.chip.node
    binder = (
        N_(
            "%(scheduler)s to bind it to chip %(chip)s of %(node)s",
            scheduler=scheduler.scheduler_name,
            chip=reservation.chip.uuid,
            node=node.name,
        )
        if scheduler.honours_pins
        else N_(
            "Volcano to bind it on node %(node)s (Volcano picks the chip)",
            node=node.name,
        )
    )
    pod = f"{request.namespace}/{request.pod_name}"
    created = N_("pod %(pod)s created; waiting for %(binder)s", pod=pod, binder=binder)
    if reservation.proposal is None:
        return created
    return N_(
        "%(reason)s; the node is held for it since the preemption", reason=created
    )


def _pod_policy_refusal(request: Request) -> str | None:
    """Why the queue's pod policy (or PriorityClass ceiling) forbids the request's pod now.

    Checked again here: the queue's policy may have tightened since
    submission, and a stored request must not create a pod it now forbids.
    """
    priority = priority_refusal(request.queue, request.priority_class, request.priority)
    if priority is not None:
        return N_("the queue no longer allows its PriorityClass: %(why)s", why=priority)
    violations = pod_policy_violations(
        queue=request.queue,
        namespace=request.namespace,
        workload=request.workload or None,
        pod_template=request.pod_template,
    )
    if not violations:
        return None
    shown = "; ".join(f"{v.field}: {v.message}" for v in violations[:5])
    if len(violations) > 5:
        shown = N_(
            "%(shown)s (and %(count)s more)", shown=shown, count=len(violations) - 5
        )
    return N_(
        "the pod policy of queue %(queue)s forbids this pod: %(violations)s",
        queue=request.queue.name,
        violations=shown,
    )


def _manifest(
    request: Request,
    reservation: Reservation,
    chip_type: ChipType,
    scheduler: SchedulerInEffect,
) -> dict[str, Any]:
    """The request's pod, steered to its reserved chip for the scheduler in effect."""
    node = reservation.chip.node
    return pod_manifest(
        name=request.pod_name,
        namespace=request.namespace,
        request_id=request.pk,
        attempt=request.attempts,
        queue=request.queue.name,
        priority_class=request.priority_class,
        common_word=request.common_word,
        chip_uuid=reservation.chip.uuid,
        node_hostname=(node.labels or {}).get(HOSTNAME_LABEL) or node.name,
        # A template's memory asks HAMi for exactly that template; a whole
        # card asks without -memory, as in the guide.
        resources=vnpu_resources(
            chip_type.resource_name,
            chip_type.resource_memory_name,
            reservation.memory if reservation.template else None,
        ),
        workload=request.workload or None,
        pod_template=request.pod_template,
        security_context=workload_security_context(request.queue.pod_security),
        tolerate_hold=reservation.proposal is not None,
        scheduler_name=scheduler.scheduler_name,
        pin_chip=scheduler.honours_pins,
    )


def _created(request: Request, answer: KubeError | PodExists | None) -> bool:
    """What the pod's POST answered (``answer``: its error, None when
    created); adopt the pod if this request's pod existed already.

    Returns:
        True when the pod exists now; False when the request failed, gave its
        room back, or waits for the next pass (the reason says which).
    """
    try:
        if answer is not None:
            raise answer
    except PodExists as exists:
        if exists.pod is None:
            return False  # deleted between our POST and GET: next pass
        if not is_pod_of(exists.pod, request.pk):
            return _fail(
                request,
                N_(
                    "a pod named %(pod)s already exists in namespace "
                    "%(namespace)s and is not this request's",
                    pod=request.pod_name,
                    namespace=request.namespace,
                ),
            )
        if (exists.pod.get("metadata") or {}).get("deletionTimestamp"):
            return False  # our own pod on its way out: wait for it to go
        log.info(
            "request %s: adopting its existing pod %s", request.pk, request.pod_name
        )
    except KubeError as exc:
        if exc.transient or _admission_cache_behind(request, exc):
            reason = N_(
                "room held; the pod cannot be created yet (%(error)s); retrying",
                error=str(exc),
            )
            if request.reason != reason:
                states.request_move(
                    request.pk,
                    from_states=[RequestState.RESERVED],
                    to=RequestState.RESERVED,
                    reason=reason,
                )
            return False
        if exc.status == 404:
            # POST to a namespace's pods answers 404 only when the namespace is
            # missing (deleted since the pass listed it, or since a crashed
            # worker booked the room): give the room back and wait for it,
            # as the pass does, rather than failing for good.
            _unbook(request, missing_namespace_reason(request.namespace))
            return False
        return _fail(
            request, N_("the API server refused the pod: %(error)s", error=str(exc))
        )
    return True


def _admission_cache_behind(request: Request, exc: KubeError) -> bool:
    """A 403 from the API server's Priority admission plugin for a class the
    portal's mirror has: the plugin reads PriorityClasses from its own cache,
    which a restarted API server fills again only after it answers (seen on
    the real kube-apiserver killed mid-watch: ``no PriorityClass with name
    batch-medium was found`` a moment after it came back). Retried like a
    transient error; once sync has seen the class deleted, the refusal
    stands and the request fails."""
    if exc.status != 403:
        return False
    if "not yet ready to handle request" in exc.message:
        return True  # an admission plugin whose cache has not synced yet
    named = f"no PriorityClass with name {request.priority_class} was found"
    return named in exc.message and (
        PriorityClass.objects.filter(
            cluster_id=request.cluster_id, name=request.priority_class
        ).exists()
    )


def _unbook(request: Request, reason: str) -> None:
    """Back to Pending, its room released, waiting for ``reason`` to go away."""
    states.proposals_supersede(request.pk, reason)
    states.request_move(
        request.pk,
        from_states=[RequestState.RESERVED],
        to=RequestState.PENDING,
        drop_reservation=True,
        **states.UNBOOKED,
        reason=reason,
    )


def _fail(request: Request, reason: str) -> bool:
    states.request_move(
        request.pk,
        from_states=[RequestState.RESERVED],
        to=RequestState.FAILED,
        drop_reservation=True,
        finished_at=timezone.now(),
        reason=reason,
    )
    return False
