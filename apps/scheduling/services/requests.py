"""Writes of requests: submit one for a vNPU, cancel or release one.

A submission is checked before anything is written: once its cluster is
found, its fields (every malformed one named in one 400), then the token's
queue limit (403), then against the cluster (chip type and HAMi's template
rule, PriorityClass, the queue's pod policy: every failing field named in
one 400), then the namespace, so a pipeline hears of its mistakes at once. The same idempotency key (per user)
returns the earlier request instead of a second one.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, TypeVar, cast

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.accounts.choices import Role
from apps.accounts.selectors import user_role
from apps.audit.services import audit_record
from apps.common.exceptions import PermissionDenied, ValidationFailed
from apps.common.ids import parse_id
from apps.inventory.hami.messages import N_
from apps.inventory.models import ChipType, Cluster, PriorityClass
from apps.scheduling import access, kube, namespaces_seen, notify, podsecurity, states
from apps.scheduling import allocator as alloc
from apps.scheduling.choices import FINAL_STATES, HOLDING_STATES, RequestState
from apps.scheduling.errors import IdempotencyConflict
from apps.scheduling.models import Queue, Request
from apps.scheduling.pods import MAX_GRACE_SECONDS
from apps.scheduling.selectors import pod_policy_violations
from apps.scheduling.services import followups
from apps.scheduling.snapshot import rules_for
from apps.scheduling.texts import text_fields
from apps.scheduling.validation import (
    FieldErrors,
    fail,
    idempotency_key_errors,
    invalid,
    namespace_errors,
    normalise_env,
    pod_template_errors,
)

DEFAULT_QUEUE = "default"


def _cluster(identifier: int | str) -> Cluster:
    # Only ASCII digits are an id ("²" is a name); names are never all digits.
    pk = parse_id(identifier)
    lookup = {"pk": pk} if pk is not None else {"name": str(identifier)}
    cluster = Cluster.objects.filter(**lookup).first()
    if cluster is None:
        raise ValidationFailed(
            _("cluster: no cluster %(cluster)r") % {"cluster": identifier},
            detail={"cluster": [_("no cluster %(cluster)r") % {"cluster": identifier}]},
        )
    return cluster


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
        raise invalid(
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
        raise invalid({"template" if template else "memory": [exc.detail]}) from exc


def _priority(cluster: Cluster, name: str | None, queue: Queue | None) -> PriorityClass:
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
        raise invalid({"priority": [f"{why}; known: {known or 'none'}"]})
    refusal = access.priority_refusal(queue, found.name, found.value)
    if refusal is not None:
        raise invalid({"priority": [refusal]})
    return found


def _queue(cluster: Cluster, name: str, found: Queue | None) -> Queue:
    """The queue ``found`` by the checks, or the default one made on first use."""
    if found is not None:
        return found
    if name == DEFAULT_QUEUE:
        # The default queue exists implicitly (no quota), like Volcano's.
        queue, _created = Queue.objects.get_or_create(
            cluster=cluster,
            name=DEFAULT_QUEUE,
            # Open to all, as Volcano's default queue is; its pods are held
            # to the restricted level with the default ServiceAccount.
            defaults={"description": "created on first use", "open_to_all": True},
        )
        return queue
    known = ", ".join(
        Queue.objects.filter(cluster=cluster)
        .order_by("name")
        .values_list("name", flat=True)
    )
    raise invalid(
        {
            "queue": [
                f"no queue {name!r} in cluster {cluster.name!r}; known: {known or 'none'}"
            ]
        }
    )


def _pod_policy_check(
    queue: Queue | None,
    queue_name: str,
    namespace: str,
    workload: dict[str, Any] | None,
    pod_template: dict[str, Any] | None,
) -> None:
    """400 naming each field by which the pod would exceed its queue's pod policy.

    An unknown queue is left to ``_queue`` (400 naming ``queue``); the default
    queue, made on first use, has the default policy meanwhile.
    """
    if queue is None and queue_name != DEFAULT_QUEUE:
        return
    fail(
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

    A namespace the cluster said it has is taken as existing for a short
    while (``namespaces_seen``): the pass's own check catches a deletion.

    Returns:
        The new request's first reason.
    """
    if namespaces_seen.recently_seen(cluster.pk, cluster.created_at, namespace):
        return N_("waiting for the next allocation pass")
    ops = kube.ops_for(cluster)
    try:
        exists = ops.namespace_exists(namespace)
    except kube.KubeError as exc:
        return N_(
            'waiting for the next allocation pass (namespace "%(namespace)s" not '
            "checked: the cluster did not answer: %(error)s)",
            namespace=namespace,
            error=str(exc),
        )
    finally:
        ops.close()
    if not exists:
        raise invalid(
            {
                "namespace": [
                    f'namespace "{namespace}" does not exist in cluster '
                    f'"{cluster.name}"'
                ]
            }
        )
    namespaces_seen.remember(cluster.pk, cluster.created_at, namespace)
    return N_("waiting for the next allocation pass")


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
        workload: ``{image, command?, args?, env?, grace_seconds?}``.
        pod_template: A PodTemplateSpec, instead of ``workload``.
        time_limit_seconds: Running time after which the pod is deleted (Expired).
        idempotency_key: The same key (per user) returns the same request.
        now: "Now" (tests).

    Returns:
        The request, and True when it was created (False: the key's earlier one).

    Raises:
        ValidationFailed: Bad input, naming the field (nothing is written).
        PermissionDenied: A queue the caller (or its token) may not use.
        Conflict: The key was used before with a different submission
            (code ``idempotency_conflict``).
    """
    now = now or timezone.now()
    checked = _checked_submission(
        actor=actor,
        token=token,
        cluster=cluster,
        namespace=namespace,
        chip_type=chip_type,
        memory=memory,
        template=template,
        whole_card=whole_card,
        priority=priority,
        queue=queue,
        workload=workload,
        pod_template=pod_template,
        time_limit_seconds=time_limit_seconds,
        idempotency_key=idempotency_key,
    )
    fingerprint = _fingerprint(checked.submission)
    earlier = _idempotent(actor, checked.key, fingerprint)
    if earlier is not None:
        return earlier, False

    reason = _namespace_check(checked.cluster, namespace)
    queue_row = _queue(checked.cluster, checked.submission["queue"], checked.queue_row)
    try:
        request = _request_insert(checked, fingerprint, queue_row, actor, reason, now)
    except IntegrityError:
        # The same key submitted twice at once: the other call won the insert.
        earlier = _idempotent(actor, checked.key, fingerprint)
        if earlier is None:
            raise
        return earlier, False
    _announce_created(actor, request, checked)
    return request, True


@dataclass(frozen=True)
class _Checked:
    """A submission that passed every check, before anything is written."""

    cluster: Cluster
    key: str
    shape: alloc.SliceShape
    priority_class: PriorityClass
    #: The queue asked for (None: the default one, not made yet).
    queue_row: Queue | None
    #: What the fingerprint and the audit record: the normalised submission.
    submission: dict[str, Any]


def _checked_submission(
    *,
    actor: Any,
    token: Any,
    cluster: int | str,
    namespace: str,
    chip_type: str,
    memory: int | None,
    template: str,
    whole_card: bool,
    priority: str | None,
    queue: str | None,
    workload: dict[str, Any] | None,
    pod_template: dict[str, Any] | None,
    time_limit_seconds: int | None,
    idempotency_key: str | None,
) -> _Checked:
    """Check a submission (see ``request_create``); 400 or 403 on the first failing step.

    The fields are checked first, every error at once; then the token's
    queues (403); then, against the cluster, the chip type and template rule,
    the PriorityClass and the queue's pod policy, every error at once.
    """
    found = _cluster(cluster)
    key = idempotency_key or f"auto-{uuid.uuid4().hex}"
    env = _fields_check(
        namespace, memory, template, whole_card, workload, pod_template, key
    )
    queue_name = queue or DEFAULT_QUEUE
    queue_row = access.queue_of(found, queue_name)
    access.use_check(actor, token, queue_row, queue_name)
    # Every check against the cluster runs, and their fields come in one 400:
    # a form shows all its mistakes at once, not one per submit.
    errors: FieldErrors = {}
    shape = _collected(errors, lambda: _shape(found, chip_type, memory, template))
    priority_class = _collected(errors, lambda: _priority(found, priority, queue_row))
    normal_workload = _normal_workload(workload, env)
    _collected(
        errors,
        lambda: _pod_policy_check(
            queue_row, queue_name, namespace, normal_workload, pod_template
        ),
    )
    fail(errors)
    # No error was collected, so both checks returned their value.
    shape = cast(alloc.SliceShape, shape)
    priority_class = cast(PriorityClass, priority_class)
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
    return _Checked(found, key, shape, priority_class, queue_row, submission)


_T = TypeVar("_T")


def _collected(errors: FieldErrors, check: Callable[[], _T]) -> _T | None:
    """Run ``check``; a 400 it raises adds its fields to ``errors`` (None then)."""
    try:
        return check()
    except ValidationFailed as exc:
        for field, messages in (exc.detail or {}).items():
            errors.setdefault(field, []).extend(messages)
        return None


def _fields_check(
    namespace: str,
    memory: int | None,
    template: str,
    whole_card: bool,
    workload: dict[str, Any] | None,
    pod_template: dict[str, Any] | None,
    key: str,
) -> list[dict[str, Any]]:
    """400 naming every malformed field; the workload's env, normalised, otherwise."""
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
        grace = workload.get("grace_seconds")
        if grace is not None and not _is_grace(grace):
            errors["workload.grace_seconds"] = [
                f"an integer from 0 to {MAX_GRACE_SECONDS} (seconds)"
            ]
    if pod_template is not None:
        errors.update(pod_template_errors(pod_template))
    errors.update(idempotency_key_errors(key))
    fail(errors)
    return env


def _is_grace(value: Any) -> bool:
    return (
        isinstance(value, int)
        and not isinstance(value, bool)
        and 0 <= value <= MAX_GRACE_SECONDS
    )


def _normal_workload(
    workload: dict[str, Any] | None, env: list[dict[str, Any]]
) -> dict[str, Any] | None:
    """The workload as stored: every key present, lists as lists.

    ``grace_seconds`` only when given: a request stored before it existed
    keeps the same form, so retrying its submission is still the same body.
    """
    if workload is None:
        return None
    normal = {
        "image": workload["image"],
        "command": list(workload.get("command") or []),
        "args": list(workload.get("args") or []),
        "env": env,
    }
    if workload.get("grace_seconds") is not None:
        normal["grace_seconds"] = workload["grace_seconds"]
    return normal


def _request_insert(
    checked: _Checked,
    fingerprint: str,
    queue: Queue,
    actor: Any,
    reason: str,
    now: datetime,
) -> Request:
    """Write the checked submission as a pending request.

    Raises:
        IntegrityError: The actor's idempotency key was inserted meanwhile.
    """
    submission = checked.submission
    ttl = getattr(settings, "REQUEST_PENDING_TTL", 0) or 0
    with transaction.atomic():
        return Request.objects.create(
            cluster=checked.cluster,
            namespace=submission["namespace"],
            common_word=submission["chip_type"],
            memory=submission["memory"],
            template=submission["template"],
            priority_class=checked.priority_class.name,
            priority=checked.priority_class.value,
            queue=queue,
            workload=submission["workload"] or {},
            pod_template=submission["pod_template"],
            time_limit_seconds=submission["time_limit_seconds"],
            idempotency_key=checked.key,
            fingerprint=fingerprint,
            submitted_by=actor if getattr(actor, "pk", None) else None,
            **text_fields("reason", reason),
            expires_at=now + timedelta(seconds=ttl) if ttl else None,
        )


def _announce_created(actor: Any, request: Request, checked: _Checked) -> None:
    """Audit the new request, tell the browsers, and ask for a pass on commit."""
    audit_record(
        actor=actor,
        action="request.create",
        target=request,
        cluster=checked.cluster,
        after={
            **checked.submission,
            "template_expected": checked.shape.template or "whole card",
            "id": request.pk,
        },
    )
    notify.request_changed(request)
    followups.pass_after_commit(checked.cluster.pk)


def _idempotent(actor: Any, key: str, fingerprint: str) -> Request | None:
    if not getattr(actor, "pk", None):
        return None
    earlier = Request.objects.filter(submitted_by=actor, idempotency_key=key).first()
    if earlier is None:
        return None
    if earlier.fingerprint != fingerprint:
        raise IdempotencyConflict(
            _(
                "idempotency_key: %(key)r was used for request %(request)s with "
                "different content"
            )
            % {"key": key, "request": earlier.pk},
            detail={
                "idempotency_key": [
                    _("already used for request %(request)s with different content")
                    % {"request": earlier.pk}
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
    access.token_scope_check(token, request.queue, request.queue.name)
    role = user_role(actor)
    if request.submitted_by_id != getattr(actor, "pk", None) and not (
        role and role.allows(Role.ADMIN)
    ):
        raise PermissionDenied(
            _("only the submitter or an admin may cancel a request"),
            detail={"request": [_("submitted by someone else")]},
        )
    with transaction.atomic():
        current = Request.objects.select_for_update().get(pk=request.pk)
        if current.state in FINAL_STATES:
            return current
        before = RequestState(current.state)
        verb = "released" if before == RequestState.RUNNING else "cancelled"
        who = actor.get_username() if getattr(actor, "pk", None) else N_("system")
        moved = states.request_move(
            current.pk,
            from_states=[before],
            to=RequestState.CANCELLED,
            drop_reservation=True,
            finished_at=timezone.now(),
            # A reserved request may have a pod already (a pass died after creating it).
            pod_cleanup=bool(current.pod_name) and before in HOLDING_STATES,
            reason=(
                N_("released by %(who)s", who=who)
                if before == RequestState.RUNNING
                else N_("cancelled by %(who)s", who=who)
            ),
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
            followups.reconcile_after_commit(current.cluster_id)
    return Request.objects.select_related("queue", "cluster", "submitted_by").get(
        pk=request.pk
    )
