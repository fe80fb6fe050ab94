"""Writes of queues: create, update and delete, with quotas and pod policy.

A queue has a quota per chip type (memory and slots, either unlimited) and a
pod policy (allowed namespaces, Pod Security level, allowed service accounts,
the Secrets and ConfigMaps its pods may reference).
Each write records an AuditEvent with before and after and starts a pass, as
a changed quota or policy may let waiting requests in or hold them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction
from django.utils.translation import gettext as _

from apps.audit.services import audit_record
from apps.common.exceptions import NotFound
from apps.inventory.models import ChipType, Cluster
from apps.scheduling.choices import PodSecurityLevel
from apps.scheduling.errors import QueueInUse
from apps.scheduling.models import Queue, QueueQuota, Request
from apps.scheduling.services import followups
from apps.scheduling.validation import fail, namespace_errors

SERVICE_ACCOUNT_NAME = re.compile(
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
)


def _queue_snapshot(queue: Queue) -> dict[str, Any]:
    return {
        "name": queue.name,
        "description": queue.description,
        "allowed_namespaces": list(queue.allowed_namespaces or []),
        "pod_security": queue.pod_security,
        "allowed_service_accounts": list(queue.allowed_service_accounts or []),
        "allowed_secrets": list(queue.allowed_secrets or []),
        "allowed_config_maps": list(queue.allowed_config_maps or []),
        "quotas": [
            {
                "chip_type": q.common_word,
                "memory_limit": q.memory_limit,
                "slots_limit": q.slots_limit,
            }
            for q in queue.quotas.order_by("common_word")
        ],
        **_access_snapshot(queue),
    }


#: What ``access`` may hold in ``queue_create`` and ``queue_update``.
ACCESS_FIELDS = (
    "open_to_all",
    "members",
    "member_groups",
    "max_priority",
    "system_priority_classes",
)


def _access_snapshot(queue: Queue) -> dict[str, Any]:
    return {
        "open_to_all": queue.open_to_all,
        "members": sorted(u.get_username() for u in queue.members.all()),
        "member_groups": sorted(g.name for g in queue.member_groups.all()),
        "max_priority": queue.max_priority,
        "system_priority_classes": list(queue.system_priority_classes or []),
    }


def _access_set(queue: Queue, access: Mapping[str, Any]) -> None:
    """Set who may submit to the queue and its PriorityClass ceiling.

    Members are existing users (400 naming ``members[i]`` otherwise); groups
    are made on first mention, as a sign-in through the identity provider
    would make them.
    """
    unknown = sorted(set(access) - set(ACCESS_FIELDS))
    if unknown:
        raise ValueError(f"not access fields: {unknown}")
    changed = [
        key
        for key in ("open_to_all", "max_priority", "system_priority_classes")
        if key in access
    ]
    for key in changed:
        value = access[key]
        setattr(queue, key, sorted(set(value)) if isinstance(value, list) else value)
    if changed:
        queue.save(update_fields=[*changed, "updated_at"])
    if "members" in access:
        names = sorted(set(access["members"]))
        users = {
            u.get_username(): u
            for u in get_user_model().objects.filter(username__in=names)
        }
        fail(
            {
                f"members[{index}]": [f"no user {name!r}"]
                for index, name in enumerate(names)
                if name not in users
            }
        )
        queue.members.set(users.values())
    if "member_groups" in access:
        names = sorted(set(access["member_groups"]))
        queue.member_groups.set(
            [Group.objects.get_or_create(name=name)[0] for name in names if name]
        )


def _quotas_set(queue: Queue, quotas: Sequence[dict[str, Any]]) -> None:
    words = [q["chip_type"] for q in quotas]
    duplicates = sorted({w for w in words if words.count(w) > 1})
    if duplicates:
        fail({"quotas": [f"chip type {duplicates[0]!r} appears twice"]})
    known = set(
        ChipType.objects.filter(cluster_id=queue.cluster_id).values_list(
            "common_word", flat=True
        )
    )
    for index, q in enumerate(quotas):
        if q["chip_type"] not in known:
            fail(
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
    allowed_secrets: Sequence[str] | None = None,
    allowed_config_maps: Sequence[str] | None = None,
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
    # Secret and ConfigMap names are DNS-1123 subdomains too.
    for field, names in (
        ("allowed_secrets", allowed_secrets),
        ("allowed_config_maps", allowed_config_maps),
    ):
        for index, name in enumerate(names or ()):
            if len(name) > 253 or not SERVICE_ACCOUNT_NAME.match(name):
                errors[f"{field}[{index}]"] = [
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
    allowed_secrets: Sequence[str] = (),
    allowed_config_maps: Sequence[str] = (),
    access: Mapping[str, Any] | None = None,
) -> Queue:
    """Create a queue with its quotas per chip type, its pod policy and who may use it.

    ``access`` holds any of ``ACCESS_FIELDS``; a new queue is for its members
    (and admins) unless ``open_to_all``.

    Raises:
        ValidationFailed: The name is taken in the cluster, a quota names an
            unknown or repeated chip type, or the pod policy is malformed.
    """
    if Queue.objects.filter(cluster=cluster, name=name).exists():
        fail({"name": [f"queue {name!r} already exists in cluster {cluster.name!r}"]})
    fail(
        _pod_policy_errors(
            allowed_namespaces,
            pod_security,
            allowed_service_accounts,
            allowed_secrets,
            allowed_config_maps,
        )
    )
    queue = Queue.objects.create(
        cluster=cluster,
        name=name,
        description=description,
        allowed_namespaces=sorted(set(allowed_namespaces)),
        pod_security=pod_security,
        allowed_service_accounts=sorted(set(allowed_service_accounts)),
        allowed_secrets=sorted(set(allowed_secrets)),
        allowed_config_maps=sorted(set(allowed_config_maps)),
    )
    _quotas_set(queue, quotas)
    _access_set(queue, access or {})
    audit_record(
        actor=actor, action="queue.create", target=queue, after=_queue_snapshot(queue)
    )
    followups.pass_after_commit(cluster.pk)
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
    allowed_secrets: Sequence[str] | None = None,
    allowed_config_maps: Sequence[str] | None = None,
    access: Mapping[str, Any] | None = None,
) -> Queue:
    """Change a queue's description, quotas, pod policy and/or access (the name is fixed).

    A quota change takes effect at the next allocation pass; what is already
    admitted keeps running even if it is now over the quota. A tighter pod
    policy also holds for requests already submitted: their pods are checked
    again when they are built, and a pod it forbids fails its request.
    """
    fail(
        _pod_policy_errors(
            allowed_namespaces,
            pod_security,
            allowed_service_accounts,
            allowed_secrets,
            allowed_config_maps,
        )
    )
    before = _queue_snapshot(queue)
    given = {
        "description": description,
        "pod_security": pod_security,
        # The name lists are stored sorted and without repeats.
        **{
            field: None if names is None else sorted(set(names))
            for field, names in (
                ("allowed_namespaces", allowed_namespaces),
                ("allowed_service_accounts", allowed_service_accounts),
                ("allowed_secrets", allowed_secrets),
                ("allowed_config_maps", allowed_config_maps),
            )
        },
    }
    changed = [field for field, value in given.items() if value is not None]
    for field in changed:
        setattr(queue, field, given[field])
    if changed:
        queue.save(update_fields=[*changed, "updated_at"])
    if quotas is not None:
        _quotas_set(queue, quotas)
    _access_set(queue, access or {})
    audit_record(
        actor=actor,
        action="queue.update",
        target=queue,
        before=before,
        after=_queue_snapshot(queue),
    )
    followups.pass_after_commit(queue.cluster_id)
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
        raise NotFound(_("queue %(queue)r no longer exists") % {"queue": queue.name})
    used = Request.objects.filter(queue=queue).count()
    if used:
        raise QueueInUse(
            _("queue %(queue)r has %(count)d request(s); it cannot be deleted")
            % {"queue": queue.name, "count": used},
            detail={"requests": used},
        )
    audit_record(
        actor=actor,
        action="queue.delete",
        target=queue,
        before=_queue_snapshot(queue),
    )
    queue.delete()
