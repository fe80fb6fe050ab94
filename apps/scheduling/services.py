"""Writes of scheduling: submit and cancel requests, queues, decisions, allocation.

``allocation_create`` is the allocator adapter: one
transaction that locks the cluster's row and the pending requests in primary-key
order, converts rows to the allocator's dataclasses, calls ``allocate``,
persists reservations and proposals, and enqueues follow-ups on commit.
Creating pods is not done here: it talks to the cluster, which never happens
inside a transaction (see ``apps.scheduling.admission``).
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from collections.abc import Container, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from apps.accounts.choices import Role
from apps.accounts.selectors import user_role
from apps.audit.services import audit_record
from apps.common.exceptions import (
    NotFound,
    PermissionDenied,
    ValidationFailed,
)
from apps.common.ids import parse_id
from apps.inventory.models import ChipType, Cluster, PriorityClass
from apps.inventory.scheduler import scheduler_in_effect
from apps.scheduling import allocator as alloc
from apps.scheduling import kube, notify, podsecurity, states, triggers
from apps.scheduling.allocation import hold, hold_for_namespace, persist_result
from apps.scheduling.choices import (
    FINAL_STATES,
    HOLDING_STATES,
    PodSecurityLevel,
    RequestState,
)
from apps.scheduling.decisions import approve_now
from apps.scheduling.errors import IdempotencyConflict, QueueInUse
from apps.scheduling.models import (
    Queue,
    QueueQuota,
    Request,
)
from apps.scheduling.selectors import pod_policy_violations, queue_check
from apps.scheduling.snapshot import build_snapshot, rules_for
from apps.scheduling.validation import (
    idempotency_key_errors,
    namespace_errors,
    normalise_env,
    pod_template_errors,
)
from apps.scheduling.volcano import hold_reason, volcano_queues

DEFAULT_QUEUE = "default"
SERVICE_ACCOUNT_NAME = re.compile(
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
)


def _enqueue_pass(cluster_id: int) -> None:
    """Run an allocation pass for the cluster once the transaction commits."""
    triggers.run_after_commit("pass", cluster_id)


# --- requests ------------------------------------------------------------------------


def _cluster(identifier: int | str) -> Cluster:
    # Only ASCII digits are an id ("²" is a name); names are never all digits.
    pk = parse_id(identifier)
    lookup = {"pk": pk} if pk is not None else {"name": str(identifier)}
    cluster = Cluster.objects.filter(**lookup).first()
    if cluster is None:
        raise ValidationFailed(
            f"cluster: no cluster {identifier!r}",
            detail={"cluster": [f"no cluster {identifier!r}"]},
        )
    return cluster


def _fail(errors: dict[str, list[str]]) -> None:
    """Raise a 400 naming every field in ``errors`` (nothing when it is empty)."""
    if errors:
        raise _invalid(errors)


def _invalid(errors: dict[str, list[str]]) -> ValidationFailed:
    first, messages = next(iter(errors.items()))
    return ValidationFailed(f"{first}: {messages[0]}", detail=errors)


def _shape(
    cluster: Cluster, chip_type: str, memory: int | None, template: str
) -> alloc.SliceShape:
    """HAMi's template rule on the request, or 400 naming the field at fault."""
    rules = rules_for(cluster).get(chip_type)
    if rules is None:
        known = ", ".join(
            ChipType.objects.filter(cluster=cluster)
            .order_by("common_word")
            .values_list("common_word", flat=True)
        )
        raise _invalid(
            {
                "chip_type": [
                    f"no chip type {chip_type!r} in cluster {cluster.name!r}; "
                    f"known: {known or 'none'}"
                ]
            }
        )
    try:
        return alloc.resolve_shape(rules, memory=memory, template=template or None)
    except alloc.InvalidRequest as exc:
        raise _invalid({"template" if template else "memory": [exc.detail]}) from exc


def _priority(cluster: Cluster, name: str | None) -> PriorityClass:
    classes = PriorityClass.objects.filter(cluster=cluster)
    found = (
        classes.filter(name=name).first()
        if name
        else classes.filter(global_default=True).first()
    )
    if found is None:
        known = ", ".join(classes.order_by("-value").values_list("name", flat=True))
        why = (
            f"no PriorityClass {name!r} in cluster {cluster.name!r}"
            if name
            else f"required: cluster {cluster.name!r} has no global default PriorityClass"
        )
        raise _invalid({"priority": [f"{why}; known: {known or 'none'}"]})
    return found


def _queue(cluster: Cluster, name: str) -> Queue:
    found = Queue.objects.filter(cluster=cluster, name=name).first()
    if found is not None:
        return found
    if name == DEFAULT_QUEUE:
        # The default queue exists implicitly (no quota), like Volcano's.
        queue, _ = Queue.objects.get_or_create(
            cluster=cluster,
            name=DEFAULT_QUEUE,
            defaults={"description": "created on first use"},
        )
        return queue
    known = ", ".join(
        Queue.objects.filter(cluster=cluster)
        .order_by("name")
        .values_list("name", flat=True)
    )
    raise _invalid(
        {
            "queue": [
                f"no queue {name!r} in cluster {cluster.name!r}; known: {known or 'none'}"
            ]
        }
    )


def _pod_policy_check(
    cluster: Cluster,
    queue_name: str,
    namespace: str,
    workload: dict[str, Any] | None,
    pod_template: dict[str, Any] | None,
) -> None:
    """400 naming each field by which the pod would exceed its queue's pod policy.

    An unknown queue is left to ``_queue`` (400 naming ``queue``); the default
    queue, made on first use, has the default policy meanwhile.
    """
    queue = Queue.objects.filter(cluster=cluster, name=queue_name).first()
    if queue is None and queue_name != DEFAULT_QUEUE:
        return
    _fail(
        podsecurity.field_errors(
            pod_policy_violations(
                queue=queue,
                namespace=namespace,
                workload=workload,
                pod_template=pod_template,
            )
        )
    )


def _namespace_check(cluster: Cluster, namespace: str) -> str:
    """400 naming ``namespace`` when the cluster says it has no such namespace.

    Asked of the API server (a GET of the namespace) when a request is
    submitted, so a pipeline hears of a typo at once instead of waiting.
    A cluster that cannot answer does not block submission: the request is
    accepted, its reason says the namespace is unchecked, and each pass
    checks again before booking room.

    Returns:
        The new request's first reason.
    """
    ops = kube.ops_for(cluster)
    try:
        exists = ops.namespace_exists(namespace)
    except kube.KubeError as exc:
        return (
            f'waiting for the next allocation pass (namespace "{namespace}" not '
            f"checked: the cluster did not answer: {exc})"
        )
    finally:
        ops.close()
    if not exists:
        raise _invalid(
            {
                "namespace": [
                    f'namespace "{namespace}" does not exist in cluster '
                    f'"{cluster.name}"'
                ]
            }
        )
    return "waiting for the next allocation pass"


def _fingerprint(values: dict[str, Any]) -> str:
    text = json.dumps(values, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def request_create(
    *,
    actor: Any,
    token: Any = None,
    cluster: int | str,
    namespace: str,
    chip_type: str,
    memory: int | None = None,
    template: str = "",
    whole_card: bool = False,
    priority: str | None = None,
    queue: str | None = None,
    workload: dict[str, Any] | None = None,
    pod_template: dict[str, Any] | None = None,
    time_limit_seconds: int | None = None,
    idempotency_key: str | None = None,
    now: datetime | None = None,
) -> tuple[Request, bool]:
    """Submit a request for a vNPU; with a known idempotency key, return the earlier one.

    Args:
        actor: The user submitting (a CI service account or a person).
        token: The API token used (``request.auth``), for its queue limit.
        cluster: Cluster id or name.
        namespace: Namespace of the pod.
        chip_type: The chip type's commonWord.
        memory: MB asked (HAMi's template rule picks the template).
        template: A template name (instead of memory).
        whole_card: Ask for a whole card (instead of memory or template).
        priority: A PriorityClass name of the cluster (default: its global default).
        queue: Queue name (default ``default``, created on first use).
        workload: ``{image, command?, args?, env?}``.
        pod_template: A PodTemplateSpec, instead of ``workload``.
        time_limit_seconds: Running time after which the pod is deleted (Expired).
        idempotency_key: The same key (per user) returns the same request.
        now: "Now" (tests).

    Returns:
        The request, and True when it was created (False: the key's earlier one).

    Raises:
        ValidationFailed: Bad input, naming the field (nothing is written).
        PermissionDenied: The token is limited to other queues.
        Conflict: The key was used before with a different submission
            (code ``idempotency_conflict``).
    """
    now = now or timezone.now()
    found = _cluster(cluster)
    errors = namespace_errors(namespace)
    asked = [memory is not None, bool(template), whole_card]
    if sum(asked) != 1:
        errors["memory"] = ["give exactly one of memory (MB), template or whole_card"]
    if (workload is None) == (pod_template is None):
        errors["workload"] = ["give exactly one of workload or pod_template"]
    env: list[dict[str, Any]] = []
    if workload is not None:
        if not isinstance(workload.get("image"), str) or not workload["image"]:
            errors["workload.image"] = ["required"]
        env = normalise_env(workload.get("env"), "workload.env", errors)
    if pod_template is not None:
        errors.update(pod_template_errors(pod_template))
    key = idempotency_key or f"auto-{uuid.uuid4().hex}"
    errors.update(idempotency_key_errors(key))
    _fail(errors)

    queue_name = queue or DEFAULT_QUEUE
    queue_check(token, queue_name)
    shape = _shape(found, chip_type, memory, template)
    priority_class = _priority(found, priority)
    normal_workload = (
        None
        if workload is None
        else {
            "image": workload["image"],
            "command": list(workload.get("command") or []),
            "args": list(workload.get("args") or []),
            "env": env,
        }
    )
    _pod_policy_check(found, queue_name, namespace, normal_workload, pod_template)
    submission = {
        "cluster": found.pk,
        "namespace": namespace,
        "chip_type": chip_type,
        "memory": memory,
        "template": template,
        "whole_card": whole_card,
        "priority": priority_class.name,
        "queue": queue_name,
        "workload": normal_workload,
        "pod_template": pod_template,
        "time_limit_seconds": time_limit_seconds,
    }
    fingerprint = _fingerprint(submission)
    earlier = _idempotent(actor, key, fingerprint)
    if earlier is not None:
        return earlier, False

    submit_reason = _namespace_check(found, namespace)
    queue_row = _queue(found, queue_name)
    ttl = getattr(settings, "REQUEST_PENDING_TTL", 0) or 0
    try:
        with transaction.atomic():
            request = Request.objects.create(
                cluster=found,
                namespace=namespace,
                common_word=chip_type,
                memory=memory,
                template=template,
                priority_class=priority_class.name,
                priority=priority_class.value,
                queue=queue_row,
                workload=normal_workload or {},
                pod_template=pod_template,
                time_limit_seconds=time_limit_seconds,
                idempotency_key=key,
                fingerprint=fingerprint,
                submitted_by=actor if getattr(actor, "pk", None) else None,
                reason=submit_reason,
                expires_at=now + timedelta(seconds=ttl) if ttl else None,
            )
    except IntegrityError:
        # The same key submitted twice at once: the other call won the insert.
        earlier = _idempotent(actor, key, fingerprint)
        if earlier is None:
            raise
        return earlier, False
    audit_record(
        actor=actor,
        action="request.create",
        target=request,
        cluster=found,
        after={
            **submission,
            "template_expected": shape.template or "whole card",
            "id": request.pk,
        },
    )
    notify.request_changed(request)
    _enqueue_pass(found.pk)
    return request, True


def _idempotent(actor: Any, key: str, fingerprint: str) -> Request | None:
    if not getattr(actor, "pk", None):
        return None
    earlier = Request.objects.filter(submitted_by=actor, idempotency_key=key).first()
    if earlier is None:
        return None
    if earlier.fingerprint != fingerprint:
        raise IdempotencyConflict(
            f"idempotency_key: {key!r} was used for request {earlier.pk} with "
            "different content",
            detail={
                "idempotency_key": [
                    f"already used for request {earlier.pk} with different content"
                ],
                "request": earlier.pk,
            },
        )
    return earlier


def request_cancel(*, request: Request, actor: Any, token: Any = None) -> Request:
    """Cancel a request, or release a running one (its pod is deleted).

    Idempotent: cancelling an ended request changes nothing and returns it.

    Raises:
        PermissionDenied: The token is limited to other queues, or the caller
            is neither the submitter nor an admin.
    """
    queue_check(token, request.queue.name)
    role = user_role(actor)
    if request.submitted_by_id != getattr(actor, "pk", None) and not (
        role and role.allows(Role.ADMIN)
    ):
        raise PermissionDenied(
            "only the submitter or an admin may cancel a request",
            detail={"request": ["submitted by someone else"]},
        )
    with transaction.atomic():
        current = Request.objects.select_for_update().get(pk=request.pk)
        if current.state in FINAL_STATES:
            return current
        before = RequestState(current.state)
        verb = "released" if before == RequestState.RUNNING else "cancelled"
        who = actor.get_username() if getattr(actor, "pk", None) else "system"
        moved = states.request_move(
            current.pk,
            from_states=[before],
            to=RequestState.CANCELLED,
            drop_reservation=True,
            finished_at=timezone.now(),
            # A reserved request may have a pod already (a pass died after creating it).
            pod_cleanup=bool(current.pod_name) and before in HOLDING_STATES,
            reason=f"{verb} by {who}",
        )
        if moved:
            states.proposals_supersede(current.pk, f"request {verb}")
            audit_record(
                actor=actor,
                action="request.cancel",
                target=current,
                before={"state": before},
                after={"state": RequestState.CANCELLED, "pod": current.pod_name},
            )
            _enqueue_reconcile(current.cluster_id)
    return Request.objects.select_related("queue", "cluster", "submitted_by").get(
        pk=request.pk
    )


def _enqueue_reconcile(cluster_id: int) -> None:
    triggers.run_after_commit("reconcile", cluster_id)


# --- queues ------------------------------------------------------------------------


def _queue_snapshot(queue: Queue) -> dict[str, Any]:
    return {
        "name": queue.name,
        "description": queue.description,
        "allowed_namespaces": list(queue.allowed_namespaces or []),
        "pod_security": queue.pod_security,
        "allowed_service_accounts": list(queue.allowed_service_accounts or []),
        "quotas": [
            {
                "chip_type": q.common_word,
                "memory_limit": q.memory_limit,
                "slots_limit": q.slots_limit,
            }
            for q in queue.quotas.order_by("common_word")
        ],
    }


def _quotas_set(queue: Queue, quotas: Sequence[dict[str, Any]]) -> None:
    words = [q["chip_type"] for q in quotas]
    duplicates = sorted({w for w in words if words.count(w) > 1})
    if duplicates:
        _fail({"quotas": [f"chip type {duplicates[0]!r} appears twice"]})
    known = set(
        ChipType.objects.filter(cluster_id=queue.cluster_id).values_list(
            "common_word", flat=True
        )
    )
    for index, q in enumerate(quotas):
        if q["chip_type"] not in known:
            _fail(
                {
                    f"quotas[{index}].chip_type": [
                        f"no chip type {q['chip_type']!r} in this cluster"
                    ]
                }
            )
    QueueQuota.objects.filter(queue=queue).exclude(common_word__in=words).delete()
    for q in quotas:
        QueueQuota.objects.update_or_create(
            queue=queue,
            common_word=q["chip_type"],
            defaults={
                "memory_limit": q.get("memory_limit"),
                "slots_limit": q.get("slots_limit"),
            },
        )


def _pod_policy_errors(
    allowed_namespaces: Sequence[str] | None,
    pod_security: str | None,
    allowed_service_accounts: Sequence[str] | None,
) -> dict[str, list[str]]:
    errors: dict[str, list[str]] = {}
    for index, namespace in enumerate(allowed_namespaces or ()):
        if namespace_errors(namespace):
            errors[f"allowed_namespaces[{index}]"] = [
                "a DNS-1123 label: lowercase letters, digits and '-', at most 63 "
                "characters"
            ]
    if pod_security is not None and pod_security not in PodSecurityLevel.values:
        errors["pod_security"] = [f"one of {', '.join(PodSecurityLevel.values)}"]
    for index, account in enumerate(allowed_service_accounts or ()):
        if len(account) > 253 or not SERVICE_ACCOUNT_NAME.match(account):
            errors[f"allowed_service_accounts[{index}]"] = [
                "a DNS-1123 subdomain: lowercase letters, digits, '-' and '.'"
            ]
    return errors


@transaction.atomic
def queue_create(
    *,
    actor: Any,
    cluster: Cluster,
    name: str,
    description: str = "",
    quotas: Sequence[dict[str, Any]] = (),
    allowed_namespaces: Sequence[str] = (),
    pod_security: str = PodSecurityLevel.RESTRICTED,
    allowed_service_accounts: Sequence[str] = (),
) -> Queue:
    """Create a queue with its quotas per chip type and its pod policy.

    Raises:
        ValidationFailed: The name is taken in the cluster, a quota names an
            unknown or repeated chip type, or the pod policy is malformed.
    """
    if Queue.objects.filter(cluster=cluster, name=name).exists():
        _fail({"name": [f"queue {name!r} already exists in cluster {cluster.name!r}"]})
    _fail(
        _pod_policy_errors(allowed_namespaces, pod_security, allowed_service_accounts)
    )
    queue = Queue.objects.create(
        cluster=cluster,
        name=name,
        description=description,
        allowed_namespaces=sorted(set(allowed_namespaces)),
        pod_security=pod_security,
        allowed_service_accounts=sorted(set(allowed_service_accounts)),
    )
    _quotas_set(queue, quotas)
    audit_record(
        actor=actor, action="queue.create", target=queue, after=_queue_snapshot(queue)
    )
    _enqueue_pass(cluster.pk)
    return queue


@transaction.atomic
def queue_update(
    *,
    actor: Any,
    queue: Queue,
    description: str | None = None,
    quotas: Sequence[dict[str, Any]] | None = None,
    allowed_namespaces: Sequence[str] | None = None,
    pod_security: str | None = None,
    allowed_service_accounts: Sequence[str] | None = None,
) -> Queue:
    """Change a queue's description, quotas and/or pod policy (the name is fixed).

    A quota change takes effect at the next allocation pass; what is already
    admitted keeps running even if it is now over the quota. A tighter pod
    policy also holds for requests already submitted: their pods are checked
    again when they are built, and a pod it forbids fails its request.
    """
    _fail(
        _pod_policy_errors(allowed_namespaces, pod_security, allowed_service_accounts)
    )
    before = _queue_snapshot(queue)
    changed = []
    if description is not None:
        queue.description = description
        changed.append("description")
    if allowed_namespaces is not None:
        queue.allowed_namespaces = sorted(set(allowed_namespaces))
        changed.append("allowed_namespaces")
    if pod_security is not None:
        queue.pod_security = pod_security
        changed.append("pod_security")
    if allowed_service_accounts is not None:
        queue.allowed_service_accounts = sorted(set(allowed_service_accounts))
        changed.append("allowed_service_accounts")
    if changed:
        queue.save(update_fields=[*changed, "updated_at"])
    if quotas is not None:
        _quotas_set(queue, quotas)
    audit_record(
        actor=actor,
        action="queue.update",
        target=queue,
        before=before,
        after=_queue_snapshot(queue),
    )
    _enqueue_pass(queue.cluster_id)
    return queue


@transaction.atomic
def queue_delete(*, actor: Any, queue: Queue) -> None:
    """Delete a queue that no request refers to.

    Raises:
        NotFound: The queue is gone (its cluster was deleted since the caller
            loaded it); auditing it would name a deleted cluster and fail at commit.
        Conflict: Requests (of any state; they are the queue's history) use it.
    """
    # Locking the row orders this delete against a concurrent cluster delete
    # (which cascades to its queues): whichever comes second sees the outcome.
    if not Queue.objects.select_for_update().filter(pk=queue.pk).exists():
        raise NotFound(f"queue {queue.name!r} no longer exists")
    used = Request.objects.filter(queue=queue).count()
    if used:
        raise QueueInUse(
            f"queue {queue.name!r} has {used} request(s); it cannot be deleted",
            detail={"requests": used},
        )
    audit_record(
        actor=actor,
        action="queue.delete",
        target=queue,
        before=_queue_snapshot(queue),
    )
    queue.delete()


# --- allocation ----------------------------------------------------------------------


@dataclass
class AllocationOutcome:
    """What one allocation transaction decided (request ids)."""

    reserved: list[int] = field(default_factory=list)
    proposed: list[int] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)
    waiting: list[int] = field(default_factory=list)


def allocation_create(
    *,
    cluster_id: int,
    request_ids: Sequence[int] | None = None,
    requested_by: Any = None,
    namespaces: Container[str] | None = None,
    now: datetime | None = None,
) -> AllocationOutcome:
    """Run the allocator on the cluster's pending requests and book the result.

    Capacity is booked as Reservation rows in the same transaction that reads
    the usage, and every writer of reservations first locks the cluster's row
    (``SELECT ... FOR NO KEY UPDATE``, which does not block sync's inserts), so
    two passes never book the same room: the second waits, then reads the
    first one's reservations. Pending requests are locked in primary-key order.
    On SQLite (no row locks) the IMMEDIATE transaction serialises writers.

    Args:
        cluster_id: The cluster.
        request_ids: Only these pending requests (default: all of the cluster's).
        requested_by: Who asked (None for the scheduler); kept for the audit
            of auto-approved preemptions.
        namespaces: The cluster's namespaces, when the pass could list them:
            a request whose namespace is not among them stays pending with
            the reason, before any room is booked (None: not checked).
        now: "Now" (tests).

    Returns:
        The requests reserved, proposed for, failed (invalid) and left waiting.
    """
    now = now or timezone.now()
    with transaction.atomic():
        cluster = (
            Cluster.objects.select_for_update(no_key=True).filter(pk=cluster_id).first()
        )
        if cluster is None:
            return AllocationOutcome()
        pending_qs = Request.objects.filter(cluster=cluster, state=RequestState.PENDING)
        if request_ids is not None:
            pending_qs = pending_qs.filter(pk__in=list(request_ids))
        pending = list(
            pending_qs.select_for_update(of=("self",))
            .select_related("queue")
            .order_by("pk")
        )
        held: list[int] = []
        if namespaces is not None:
            held = hold_for_namespace(
                [r for r in pending if r.namespace not in namespaces]
            )
            pending = [r for r in pending if r.pk not in held]
        # A pod sent into a Volcano queue that is missing or not Open is never
        # scheduled: such requests wait, saying why, until sync sees it Open.
        mirror = volcano_queues(cluster.pk)
        held += hold(
            [
                (r, why)
                for r in pending
                if (why := hold_reason(r.queue.name, mirror)) is not None
            ]
        )
        pending = [r for r in pending if r.pk not in held]
        if not pending:
            return AllocationOutcome(waiting=held)
        snap = build_snapshot(cluster, pending, now)
        policy = alloc.Policy(
            strategy=alloc.Strategy(getattr(settings, "ALLOCATOR_STRATEGY", "binpack")),
            preemption=getattr(settings, "PREEMPTION_ENABLED", True),
            scheduler_picks_chip=not scheduler_in_effect(cluster).honours_pins,
            place_unguaranteed=settings.PLACE_UNGUARANTEED,
        )
        # Volcano binds to any fitting chip of the node the portal names: there,
        # only what the node places under every chip choice is sent (volcano_room).
        result = alloc.allocate_for_volcano(
            snap.requests,
            snap.chips,
            snap.rules,
            policy=policy,
            quotas=snap.quotas,
            running=snap.running,
            now_s=now.timestamp(),
            unbound=snap.unbound,
        )
        decided = persist_result(
            cluster,
            result,
            {r.pk: r for r in pending},
            snap,
            now,
            actor=requested_by,
            approve=approve_now,
        )
        decided["waiting"].extend(held)
    return AllocationOutcome(**decided)
