"""Who may use a queue, and with which PriorityClass.

Three rules, each checked where a request enters and again where its pod is
built or its preemption approved, since a queue may tighten in between:

- **Membership**: admins use every queue; anyone else a queue that is open to
  all, or one that names them (as a user or through one of their groups).
- **Token scope**: a token limited to queues (by id: a queue is a cluster's,
  and a name alone would match it in every cluster) uses only those, whatever
  its user may use. Non-admin tokens are always limited (``token_create``).
- **PriorityClass ceiling**: a cluster's PriorityClasses are its admin's, and
  the highest wins every preemption, so a queue caps the value its requests
  may take (``max_priority``, default the highest a user-defined class may
  have) and refuses ``system-*`` classes unless it names them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db.models import Q
from django.utils.translation import gettext as _

from apps.accounts.choices import Role
from apps.accounts.models import ApiToken
from apps.accounts.selectors import user_role
from apps.common.exceptions import PermissionDenied
from apps.inventory.models import Cluster
from apps.scheduling.models import Queue
from apps.scheduling.validation import fail

#: The highest value Kubernetes lets a user-defined PriorityClass have; above
#: it are only the ``system-*`` classes (2,000,000,000 and up).
USER_PRIORITY_MAX = 1_000_000_000
SYSTEM_PRIORITY_PREFIX = "system-"


def token_queue_ids(token: Any) -> list[int] | None:
    """The ids of the queues a token is limited to, or None when it is not limited."""
    if isinstance(token, ApiToken) and token.queue_ids:
        return [int(pk) for pk in token.queue_ids]
    return None


def token_scope_check(token: Any, queue: Queue | None, name: str) -> None:
    """Refuse (403 naming ``queue``) a queue outside the token's limit.

    ``queue`` is None for a queue that does not exist yet (the implicit
    default): a limited token cannot name it.

    Raises:
        PermissionDenied: The token is limited to other queues.
    """
    allowed = token_queue_ids(token)
    if allowed is not None and (queue is None or queue.pk not in allowed):
        raise PermissionDenied(
            _("queue: this token is limited to queue(s) %(queues)s")
            % {"queues": ", ".join(queue_labels(allowed))},
            detail={
                "queue": [_("not allowed for this token: %(name)r") % {"name": name}]
            },
        )


def token_queue_names(token: Any) -> set[str] | None:
    """The names of the queues a token is limited to (any cluster); None: not limited."""
    allowed = token_queue_ids(token)
    if allowed is None:
        return None
    return set(Queue.objects.filter(pk__in=allowed).values_list("name", flat=True))


def token_name_check(token: Any, name: str) -> None:
    """Refuse (403 naming ``queue``) a queue name none of the token's queues has.

    For filters by name (``?queue=``); what the list shows is limited by id.

    Raises:
        PermissionDenied: The token is limited to queues of other names.
    """
    names = token_queue_names(token)
    if names is not None and name not in names:
        raise PermissionDenied(
            _("queue: this token is limited to queue(s) %(queues)s")
            % {"queues": ", ".join(sorted(names)) or "-"},
            detail={
                "queue": [_("not allowed for this token: %(name)r") % {"name": name}]
            },
        )


def is_member(user: Any, queue: Queue | None) -> bool:
    """Whether ``user`` may submit to ``queue`` (None: the implicit default queue)."""
    role = user_role(user)
    if role is not None and role.allows(Role.ADMIN):
        return True
    if queue is None or queue.open_to_all:
        return True
    if not getattr(user, "pk", None):
        return False
    return Queue.objects.filter(
        Q(members=user) | Q(member_groups__user=user), pk=queue.pk
    ).exists()


def use_check(user: Any, token: Any, queue: Queue | None, name: str) -> None:
    """Refuse (403 naming ``queue``) a submission to a queue the caller may not use.

    Raises:
        PermissionDenied: The token is limited to other queues, or the user
            is not a member of a queue that is not open to all.
    """
    token_scope_check(token, queue, name)
    if not is_member(user, queue):
        raise PermissionDenied(
            _("queue: %(name)r is open to its members only; ask an admin to add you")
            % {"name": name},
            detail={
                "queue": [_("you are not a member of queue %(name)r") % {"name": name}]
            },
        )


def priority_refusal(queue: Queue | None, name: str, value: int) -> str | None:
    """Why ``queue`` does not let its requests take PriorityClass ``name``, if it does not."""
    label = queue.name if queue is not None else "default"
    if name.startswith(SYSTEM_PRIORITY_PREFIX):
        if queue is not None and name in (queue.system_priority_classes or []):
            return None
        return (
            f"{name!r} is a system PriorityClass; queue {label!r} does not name it "
            "in system_priority_classes"
        )
    ceiling = queue.max_priority if queue is not None else None
    ceiling = USER_PRIORITY_MAX if ceiling is None else ceiling
    if value > ceiling:
        return (
            f"{name!r} has value {value}, above the ceiling of queue {label!r} "
            f"(max_priority {ceiling})"
        )
    return None


def queue_refs_resolve(refs: Sequence[str]) -> list[int]:
    """Queue ids of ``cluster/queue`` references (or a bare name, when one cluster has it).

    Raises:
        ValidationFailed: A reference names no queue, or a bare name is in
            several clusters (each named as ``queues[i]``).
    """
    errors: dict[str, list[str]] = {}
    ids: set[int] = set()
    for index, ref in enumerate(refs):
        cluster_name, _sep, name = ref.rpartition("/")
        queues = Queue.objects.filter(name=name)
        if cluster_name:
            queues = queues.filter(cluster__name=cluster_name)
        found = list(queues.select_related("cluster")[:2])
        if not found:
            errors[f"queues[{index}]"] = [f"no queue {ref!r}"]
        elif len(found) > 1:
            clusters = ", ".join(f"{q.cluster.name}/{q.name}" for q in found)
            errors[f"queues[{index}]"] = [
                f"{name!r} is a queue of several clusters; name one as "
                f"cluster/queue ({clusters})"
            ]
        else:
            ids.add(found[0].pk)
    fail(errors)
    return sorted(ids)


def queue_labels(ids: Sequence[int]) -> list[str]:
    """``cluster/queue`` for each id; a queue deleted since reads ``deleted-queue-<id>``."""
    known = {
        pk: f"{cluster}/{name}"
        for pk, name, cluster in Queue.objects.filter(pk__in=ids).values_list(
            "pk", "name", "cluster__name"
        )
    }
    return [known.get(int(pk), f"deleted-queue-{pk}") for pk in ids]


def queue_of(cluster: Cluster, name: str) -> Queue | None:
    """The cluster's queue called ``name``, if it exists yet."""
    return Queue.objects.filter(cluster=cluster, name=name).first()
