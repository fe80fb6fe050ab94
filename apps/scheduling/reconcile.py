"""Reconciliation: bring requests and proposals in line with what the cluster shows.

Sync mirrors pods into Slice rows (a pod has Slices while it is bound and not
terminal), so most of this reads the database:

- **Running**: a Reserved/Admitted request whose pod has a Slice is bound
  (chip and template are the Slice's); its reservation goes, the Slice counts.
- **Ended**: a Running request whose Slices are gone has a terminal or deleted
  pod. The Slice cannot say which, so the pod is read from the API server:
  Succeeded, Failed (with the container's exit), or gone/terminating (Failed,
  "preempted by request N" when a proposal evicted it).
- **Ended before it ran**: a pod that never ran (refused at admission, evicted
  or deleted before starting, its vNPU not created) is deleted and its
  request gets a new pod (``retries``), whether sync saw it bound (Running,
  its Slice gone) or not (Admitted: one list of the portal's ended pods); a
  pod that ran and ended before sync saw it ends its request as it did.
- **Leaked node locks**: Volcano's node lock, seen unchanged for
  ``NODE_LOCK_STALE_SECONDS`` on a node where an Admitted pod waits, is
  released (Volcano leaves it behind when a device write fails, and binds
  nothing there for five minutes).
- **Bind timeout**: an Admitted request still unbound after
  ``REQUEST_BIND_TIMEOUT_SECONDS`` (checked on the pod itself, in case sync is
  behind) has its pod deleted and goes back to Pending for another attempt.
  Under HAMi's scheduler a pod waits as long as kube-scheduler has not found
  it unschedulable (up to HAMi's node lock expiry): HAMi's throttled client
  and its per-node bind lock make a burst queue for longer than that, and a
  queued pod is not stuck (``_hami_bind_in_progress``).
- **Expiry**: Running past ``time_limit_seconds``, or Pending past
  ``REQUEST_PENDING_TTL``: Expired (the pod is deleted).
- **Pod clean-up**: ended requests whose pod must go (cancelled, expired).
- **Proposals**: Evicting → Done once every victim is evicted and gone, in
  sync's mirror and on the API server (then the request's pod is created);
  superseded when the request is no longer waiting for them.
- **Drains**: Evicting → Drained once every pod is evicted and no slice is
  left on its chips (``drain.finish``).
- **Node holds**: the taint preemptions put on a node (``holds``) is lifted
  once no request held there waits any more (its pod is bound, or the request
  or the proposal has ended otherwise).

Every move is guarded (``states.request_move``), so this may run concurrently
with a pass or a cancel. Cluster errors leave things as they are until the
next run.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from apps.audit.services import audit_record
from apps.inventory.hami.messages import N_
from apps.inventory.models import Cluster, Slice
from apps.scheduling import notify, states
from apps.scheduling.choices import (
    CARRIED_OUT_STATES,
    ProposalState,
    RequestState,
)
from apps.scheduling.drain.finish import drains_finish
from apps.scheduling.holds import holds_release
from apps.scheduling.kube import ClusterOps, KubeError
from apps.scheduling.logs import KEEP_WINDOW, logs_keep, result_record_ended
from apps.scheduling.models import PreemptionProposal, Request, Reservation
from apps.scheduling.nodelocks import leaked_node_locks_release
from apps.scheduling.pods import (
    ANNOTATION_PREEMPTED_BY,
    LABEL_MANAGED_BY,
    MANAGED_BY,
    is_pod_of,
    never_ran,
    pod_problem,
)
from apps.scheduling.progress import progress_fields
from apps.scheduling.results import job_exit_code, state_by_exit_code
from apps.scheduling.retries import pod_failed_before_running

log = logging.getLogger(__name__)
PodKey = tuple[str, str]
#: The audit action of a pod not bound in time (its request is tried again).
BIND_TIMEOUT_ACTION = "request.bind_timeout"


@dataclass
class ReconcileReport:
    """What one reconciliation changed (request and proposal ids)."""

    running: list[int]
    ended: list[int]
    retried: list[int]
    expired: list[int]
    cleaned: list[int]
    proposals_done: list[int]
    locks_released: list[str] = field(default_factory=list)

    @property
    def freed(self) -> bool:
        """True when room may have appeared or a booked request became ready.

        A request that became Running counts: its pod is bound, and where
        Volcano picks the chips of the node the portal names, requests wait
        for a node's pods to be bound before more are sent there (the
        allocator's ``volcano_room``). Left to the beat, a burst's pods went
        out in waves SCHEDULING_PASS_SECONDS apart.
        """
        return bool(
            self.running
            or self.ended
            or self.retried
            or self.expired
            or self.cleaned
            or self.proposals_done
        )


def requests_reconcile(
    cluster: Cluster, *, ops: ClusterOps, now: datetime | None = None
) -> ReconcileReport:
    """One reconciliation of the cluster's requests and proposals (see the module doc)."""
    now = now or timezone.now()
    report = ReconcileReport([], [], [], [], [], [])
    _orphans(cluster)
    report.running = _confirm_running(cluster, now)
    report.ended = _ended(cluster, ops, now, report.retried)
    report.locks_released = leaked_node_locks_release(cluster, ops, now)
    unseen = _ended_unseen(cluster, ops, now)
    report.ended += unseen.ended
    report.retried += unseen.retried
    report.retried += _bind_timeouts(cluster, ops, now)
    report.expired = _expire(cluster, now)
    # Before any pod of an ended request is deleted: its log and result.
    logs_keep(cluster, ops, now)
    report.cleaned = _cleanup_pods(cluster, ops, now)
    report.proposals_done = _proposals(cluster, ops)
    holds_release(cluster, ops)
    drains_finish(cluster)
    return report


def _slices_by_pod(cluster: Cluster, pods: set[PodKey]) -> dict[PodKey, Any]:
    if not pods:
        return {}
    rows = Slice.objects.filter(
        cluster=cluster, pod_name__in={name for _, name in pods}
    ).values(
        "namespace",
        "pod_name",
        "chip_id",
        "chip_uuid",
        "node_name",
        "template",
        "memory",
    )
    return {
        (r["namespace"], r["pod_name"]): r
        for r in rows
        if (r["namespace"], r["pod_name"]) in pods
    }


def _orphans(cluster: Cluster) -> None:
    # Belt and braces: a reservation lives only while its request is booked.
    Reservation.objects.filter(cluster=cluster).exclude(
        request__state__in=[RequestState.RESERVED, RequestState.ADMITTED]
    ).delete()


def _confirm_running(cluster: Cluster, now: datetime) -> list[int]:
    booked = list(
        Request.objects.filter(
            cluster=cluster,
            state__in=[RequestState.RESERVED, RequestState.ADMITTED],
        ).exclude(pod_name="")
    )
    slices = _slices_by_pod(cluster, {(r.namespace, r.pod_name) for r in booked})
    running = []
    for request in booked:
        found = slices.get((request.namespace, request.pod_name))
        if found is None:
            continue
        template = found["template"] or "a whole card"
        moved = states.request_move(
            request.pk,
            from_states=[RequestState.RESERVED, RequestState.ADMITTED],
            to=RequestState.RUNNING,
            drop_reservation=True,
            running_at=now,
            admitted_at=request.admitted_at or now,
            chip_id=found["chip_id"] or request.chip_id,
            chip_uuid=found["chip_uuid"],
            node=found["node_name"],
            template_booked=found["template"],
            memory_booked=found["memory"],
            expires_at=(
                now + timedelta(seconds=request.time_limit_seconds)
                if request.time_limit_seconds
                else None
            ),
            reason=N_(
                "running: %(shape)s on chip %(chip)s of %(node)s (confirmed by sync)",
                shape=template,
                chip=found["chip_uuid"],
                node=found["node_name"],
            ),
        )
        if moved:
            running.append(request.pk)
    return running


def _preempted_by(cluster: Cluster) -> dict[PodKey, str]:
    """Victim pods of carried-out proposals → who preempted them."""
    found: dict[PodKey, str] = {}
    for proposal in PreemptionProposal.objects.filter(
        cluster=cluster,
        state__in=[*CARRIED_OUT_STATES, ProposalState.DONE],
        updated_at__gte=timezone.now() - timedelta(days=1),
    ).only("pk", "request_id", "victims"):
        for v in proposal.victims:
            found[(v["namespace"], v["pod"])] = N_(
                "preempted by request %(request)s (proposal %(proposal)s)",
                request=proposal.request_id,
                proposal=proposal.pk,
            )
    return found


def _ended_as(pod: dict[str, Any]) -> tuple[RequestState, str] | None:
    """How a request ends with its pod Succeeded or Failed (None: neither)."""
    phase = (pod.get("status") or {}).get("phase")
    if phase == "Succeeded":
        return RequestState.SUCCEEDED, N_("the pod succeeded")
    if phase == "Failed":
        return RequestState.FAILED, _pod_failed(pod)
    return None


def _pod_failed(pod: dict[str, Any]) -> str:
    """Why the pod failed: its own words (a value), if it gives any."""
    problem = pod_problem(pod)
    if not problem:
        return N_("the pod failed: no reason given")
    return N_("the pod failed: %(problem)s", problem=problem)


def _ended(
    cluster: Cluster, ops: ClusterOps, now: datetime, retried: list[int]
) -> list[int]:
    """Running requests whose pod ended; one whose pod never ran is retried
    instead (``retries``), and listed in ``retried``."""
    running = list(Request.objects.filter(cluster=cluster, state=RequestState.RUNNING))
    with_slice = _slices_by_pod(cluster, {(r.namespace, r.pod_name) for r in running})
    gone = [r for r in running if (r.namespace, r.pod_name) not in with_slice]
    if not gone:
        return []
    preempted = _preempted_by(cluster)
    ended = []
    for request in gone:
        try:
            pod = ops.get_pod(request.namespace, request.pod_name)
        except KubeError as exc:
            log.info("request %s: cannot read its pod yet: %s", request.pk, exc)
            continue
        key = (request.namespace, request.pod_name)
        meta = (pod or {}).get("metadata") or {}
        if pod is not None and never_ran(pod):
            if _retry(ops, request, pod, RequestState.RUNNING, now):
                retried.append(request.pk)
            continue
        ended_as = _ended_as(pod) if pod is not None else None
        by_exit_code = state_by_exit_code(pod)
        if ended_as is not None:
            state, reason = ended_as
        elif by_exit_code is not None and meta.get("deletionTimestamp"):
            # Deleted after its job ended: the job's code says how it went.
            state = by_exit_code
            reason = N_(
                "the job exited %(code)s; its pod is being deleted",
                code=job_exit_code(pod),
            )
        elif pod is None or meta.get("deletionTimestamp"):
            state = RequestState.FAILED
            by = preempted.get(key)
            annotations = meta.get("annotations") or {}
            if by is None and annotations.get(ANNOTATION_PREEMPTED_BY):
                by = N_(
                    "preempted by request %(request)s",
                    request=annotations[ANNOTATION_PREEMPTED_BY],
                )
            reason = (
                N_("the pod was evicted: %(by)s", by=by)
                if by
                else N_("the pod was deleted")
            )
        else:
            continue  # still shown Running by the API server: sync will catch up
        if states.request_move(
            request.pk,
            from_states=[RequestState.RUNNING],
            to=state,
            finished_at=now,
            reason=reason,
        ):
            result_record_ended(request.pk, pod)
            ended.append(request.pk)
    return ended


def _retry(
    ops: ClusterOps,
    request: Request,
    pod: dict[str, Any] | None,
    from_state: RequestState,
    now: datetime,
) -> bool:
    """Delete the pod that never ran (its reason is kept), then retry the request."""
    if pod is not None:
        try:
            ops.delete_pod(request.namespace, request.pod_name, grace_seconds=0)
        except KubeError as exc:
            log.info("request %s: failed pod not deleted yet: %s", request.pk, exc)
            return False
    return pod_failed_before_running(request, pod, from_state, now)


def _ended_unseen(cluster: Cluster, ops: ClusterOps, now: datetime) -> ReconcileReport:
    """Admitted requests whose pod ended before sync saw it bound: one list
    of the portal's ended pods. A pod that never ran (refused at admission,
    its vNPU not created...) is retried; one that ran, however briefly, ends
    its request as the pod did."""
    found = ReconcileReport([], [], [], [], [], [])
    admitted = {
        (r.namespace, r.pod_name): r
        for r in Request.objects.filter(
            cluster=cluster, state=RequestState.ADMITTED
        ).exclude(pod_name="")
    }
    if not admitted:
        return found
    try:
        pods = ops.ended_pods(f"{LABEL_MANAGED_BY}={MANAGED_BY}")
    except KubeError as exc:
        log.info("cluster %s: ended pods not listed yet: %s", cluster.pk, exc)
        return found
    for pod in pods:
        meta = pod.get("metadata") or {}
        request = admitted.get((meta.get("namespace", ""), meta.get("name", "")))
        if request is None or not is_pod_of(pod, request.pk):
            continue
        if never_ran(pod):
            if _retry(ops, request, pod, RequestState.ADMITTED, now):
                found.retried.append(request.pk)
            continue
        state, reason = _ended_as(pod) or (  # phase Unknown: as a failure
            RequestState.FAILED,
            _pod_failed(pod),
        )
        if states.request_move(
            request.pk,
            from_states=[RequestState.ADMITTED],
            to=state,
            drop_reservation=True,
            finished_at=now,
            reason=N_("%(reason)s (it ended before sync saw it run)", reason=reason),
        ):
            result_record_ended(request.pk, pod)
            found.ended.append(request.pk)
    return found


def _bind_timeouts(cluster: Cluster, ops: ClusterOps, now: datetime) -> list[int]:
    timeout = settings.REQUEST_BIND_TIMEOUT_SECONDS
    late = Request.objects.filter(
        cluster=cluster,
        state=RequestState.ADMITTED,
        admitted_at__lt=now - timedelta(seconds=timeout),
    )
    retried = []
    for request in late:
        try:
            pod = ops.get_pod(request.namespace, request.pod_name)
            if pod is not None and (pod.get("spec") or {}).get("nodeName"):
                continue  # bound after all: sync has not shown it yet
            if pod is not None and _hami_bind_in_progress(request, pod, now, timeout):
                continue  # still in HAMi's queue: it is bound in turn
            if pod is not None:
                ops.delete_pod(request.namespace, request.pod_name, grace_seconds=0)
        except KubeError as exc:
            log.info(
                "request %s: bind timeout, pod not deleted yet: %s", request.pk, exc
            )
            continue
        if states.request_requeue(
            request.pk,
            from_states=[RequestState.ADMITTED],
            reason=N_(
                "pod %(pod)s was not bound within %(timeout)s s on chip %(chip)s; "
                "its room was released and it will be tried again (attempt %(attempt)s)",
                pod=request.pod_name,
                timeout=timeout,
                chip=request.chip_uuid,
                attempt=request.attempts + 2,
            ),
        ):
            # Recorded so that bind timeouts can be counted (vnpu_bind_timeouts).
            audit_record(
                actor=None,
                actor_name="reconcile",
                action=BIND_TIMEOUT_ACTION,
                target=request,
                cluster=cluster,
                after={"pod": request.pod_name, "node": request.node},
                reason=f"not bound within REQUEST_BIND_TIMEOUT_SECONDS ({timeout} s)",
            )
            retried.append(request.pk)
    return retried


#: HAMi's node lock expiry (``nodelock.NodeLockTimeout``, five minutes unless
#: ``HAMI_NODELOCK_EXPIRE`` says otherwise): a pod HAMi still has not bound
#: this long after its admission is not waiting for a bind in flight.
HAMI_NODE_LOCK_EXPIRE_SECONDS = 300


def _hami_bind_in_progress(
    request: Request, pod: dict[str, Any], now: datetime, timeout: int
) -> bool:
    """Whether HAMi's scheduler is still working through this unbound pod.

    Every pod HAMi places costs its scheduler several API requests, and its
    client is throttled to 5 a second (client-go's default, which HAMi's
    chart keeps: ``cmd/scheduler/main.go`` ``--kube-qps``): kube-scheduler
    waits for the extender's ``Filter`` (one pod patch) at every scheduling
    attempt, and its ``Bind`` (``pkg/scheduler/scheduler.go``,
    ``Scheduler.Bind``) takes the node lock (``pkg/util/nodelock/nodelock.go``,
    ``LockNode``: three node reads and a patch), patches the pod and binds
    it. The lock stays until the device plugin has allocated the pod
    (ascend-device-plugin ``internal/server/server.go`` ``Allocate`` → HAMi's
    ``PodAllocationTrySuccess`` → ``nodelock.ReleaseNodeLock``); every other
    bind on that node meanwhile fails ("node ... is locked"), and
    kube-scheduler backs that pod off (1 s doubling to 10 s) and tries it
    again. A burst of pods therefore waits in kube-scheduler's queue, most of
    them not yet looked at, for longer than ``REQUEST_BIND_TIMEOUT_SECONDS``;
    deleting them only sends their new pods to the back of that queue.

    So a pod sent to HAMi's scheduler counts as in progress unless
    kube-scheduler has found it unschedulable (condition ``PodScheduled``
    False, reason ``Unschedulable``: HAMi's filter or a plugin found no room
    on its node; a failed bind is ``SchedulerError``), and for at most HAMi's
    node lock expiry past the timeout.
    """
    if (pod.get("spec") or {}).get("schedulerName") != settings.HAMI_SCHEDULER_NAME:
        return False
    admitted = request.admitted_at or now
    if now - admitted > timedelta(seconds=HAMI_NODE_LOCK_EXPIRE_SECONDS + timeout):
        return False
    for condition in (pod.get("status") or {}).get("conditions") or []:
        if (
            condition.get("type") == "PodScheduled"
            and condition.get("status") == "False"
            and condition.get("reason") == "Unschedulable"
        ):
            return False
    return True


def _expire(cluster: Cluster, now: datetime) -> list[int]:
    expired = []
    for request in Request.objects.filter(
        cluster=cluster,
        state__in=[RequestState.PENDING, RequestState.RUNNING],
        expires_at__lt=now,
    ):
        running = request.state == RequestState.RUNNING
        reason = (
            N_(
                "ran past its time limit of %(seconds)s s; pod deleted",
                seconds=request.time_limit_seconds,
            )
            if running
            else N_("waited longer than REQUEST_PENDING_TTL")
        )
        if states.request_move(
            request.pk,
            from_states=[RequestState(request.state)],
            to=RequestState.EXPIRED,
            finished_at=now,
            pod_cleanup=running,
            reason=reason,
        ):
            states.proposals_supersede(request.pk, "request expired")
            expired.append(request.pk)
    return expired


def _cleanup_pods(cluster: Cluster, ops: ClusterOps, now: datetime) -> list[int]:
    """Delete the pods of ended requests, once their log was kept (``logs``)."""
    cleaned = []
    for request in Request.objects.filter(cluster=cluster, pod_cleanup=True).filter(
        Q(log_kept_at__isnull=False) | ~Q(finished_at__gte=now - KEEP_WINDOW)
    ):
        try:
            ops.delete_pod(request.namespace, request.pod_name)
        except KubeError as exc:
            log.info("request %s: pod not deleted yet: %s", request.pk, exc)
            continue
        Request.objects.filter(pk=request.pk).update(pod_cleanup=False)
        cleaned.append(request.pk)
    return cleaned


def _proposals(cluster: Cluster, ops: ClusterOps) -> list[int]:
    done = []
    for proposal in PreemptionProposal.objects.filter(
        cluster=cluster, state__in=CARRIED_OUT_STATES
    ).select_related("request"):
        # Admitted (its pod waits while the victims terminate) or already
        # running: the proposal is still being carried out.
        if proposal.request.state not in (
            RequestState.RESERVED,
            RequestState.ADMITTED,
            RequestState.RUNNING,
        ):
            states.proposals_supersede(
                proposal.request_id,
                f"request is {proposal.request.state}",
                states=CARRIED_OUT_STATES,
            )
            continue
        if proposal.state != ProposalState.EVICTING or not all(
            v.get("evicted") for v in proposal.victims
        ):
            continue
        pods = {(v["namespace"], v["pod"]) for v in proposal.victims}
        if _slices_by_pod(cluster, pods):
            continue  # evicted but still terminating: their room is not free yet
        if not _victims_gone(ops, proposal):
            continue  # sync is behind the cluster: ask it
        updated = PreemptionProposal.objects.filter(
            pk=proposal.pk, state=ProposalState.EVICTING
        ).update(
            state=ProposalState.DONE,
            **progress_fields(
                N_("every victim is gone; the request is being admitted")
            ),
            updated_at=timezone.now(),
        )
        if updated:
            proposal.refresh_from_db()
            notify.proposal_changed(proposal)
            done.append(proposal.pk)
    return done


def _victims_gone(ops: ClusterOps, proposal: PreemptionProposal) -> bool:
    """Every victim has left the node: no pod of its name, or one that is not
    terminating and not on the node (a StatefulSet's replacement, held off by
    the node's taint). A victim still terminating holds its vNPU."""
    for victim in proposal.victims:
        try:
            pod = ops.get_pod(victim["namespace"], victim["pod"])
        except KubeError as exc:
            log.info("proposal %s: victims not checked yet: %s", proposal.pk, exc)
            return False
        if pod is None:
            continue
        on_node = (pod.get("spec") or {}).get("nodeName") == proposal.node
        if on_node or (pod.get("metadata") or {}).get("deletionTimestamp"):
            return False
    return True
