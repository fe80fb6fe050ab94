"""Reads of scheduling: requests (with their queue position), queues, proposals.

A CI token limited to queues (``ApiToken.queue_ids``) sees only those queues'
requests and proposals; asking for another queue's is a 403 naming ``queue``
(``apps.scheduling.access``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable, Sequence
from typing import Any

from django.db.models import Count, OuterRef, Q, QuerySet, Subquery, Sum
from django.db.models.functions import Coalesce

from apps.inventory.models import Cluster, Slice
from apps.inventory.nodeconfig.whatif import DemandFact
from apps.scheduling import podsecurity
from apps.scheduling.access import token_queue_ids
from apps.scheduling.choices import HOLDING_STATES, RequestState
from apps.scheduling.models import (
    PreemptionProposal,
    Queue,
    Request,
    Reservation,
)
from apps.scheduling.pods import template_of


def request_queryset(*, token: Any = None) -> QuerySet[Request]:
    """Requests with what their list shows, limited to the token's queues."""
    requests = Request.objects.select_related(
        "queue", "cluster", "submitted_by", "chip"
    )
    allowed = token_queue_ids(token)
    if allowed is not None:
        requests = requests.filter(queue_id__in=allowed)
    return requests


def proposal_queryset(*, token: Any = None) -> QuerySet[PreemptionProposal]:
    """Preemption proposals, limited to the token's queues (the request's queue)."""
    proposals = PreemptionProposal.objects.select_related(
        "request", "request__queue", "decided_by"
    )
    allowed = token_queue_ids(token)
    if allowed is not None:
        proposals = proposals.filter(request__queue_id__in=allowed)
    return proposals


def requests_scoped(token: Any) -> QuerySet[Request] | None:
    """The requests a token limited to queues may see; None: it sees every one.

    How the audit log scopes events about requests (registered in
    ``SchedulingConfig.ready``): as ``/api/requests/`` does.
    """
    return request_queryset(token=token) if token_queue_ids(token) is not None else None


def proposals_scoped(token: Any) -> QuerySet[PreemptionProposal] | None:
    """The proposals a token limited to queues may see; None: it sees every one.

    How the audit log scopes events about preemption proposals, as
    ``/api/preemptions/`` does.
    """
    return (
        proposal_queryset(token=token) if token_queue_ids(token) is not None else None
    )


def has_pending(cluster_id: int) -> bool:
    """Whether the cluster has a pending request (a pass has something to place)."""
    return Request.objects.filter(
        cluster_id=cluster_id, state=RequestState.PENDING
    ).exists()


def queue_positions(requests: Iterable[Request]) -> dict[int, int]:
    """1-based position of each pending request in its queue.

    The order is the allocator's: priority descending, then oldest first (then
    id). One query, whatever the number of requests: each counts, in the
    database, the pending requests of its queue ahead of it, so a submission
    behind thousands of others reads one number, not thousands of ids.
    """
    pending = [r.pk for r in requests if r.state == RequestState.PENDING]
    if not pending:
        return {}
    same = {
        "queue_id": OuterRef("queue_id"),
        "state": RequestState.PENDING,
    }
    ahead = (
        Request.objects.filter(**same)
        .filter(
            Q(priority__gt=OuterRef("priority"))
            | Q(priority=OuterRef("priority"), created_at__lt=OuterRef("created_at"))
            | Q(
                priority=OuterRef("priority"),
                created_at=OuterRef("created_at"),
                pk__lt=OuterRef("pk"),
            )
        )
        .order_by()
        .values("queue_id")
        .annotate(n=Count("pk"))
        .values("n")
    )
    counted = Request.objects.filter(
        pk__in=pending, state=RequestState.PENDING
    ).annotate(ahead=Coalesce(Subquery(ahead), 0))
    return {pk: n + 1 for pk, n in counted.values_list("pk", "ahead")}


def queue_usage(queues: Sequence[Queue]) -> dict[int, list[dict[str, Any]]]:
    """Per queue and chip type: memory and slots held (running and reserved), pending count.

    Held means what the quota counts: slices of the queue's running pods and
    reservations that no slice shows yet.
    """
    ids = [q.pk for q in queues]
    usage: dict[int, dict[str, dict[str, int]]] = defaultdict(
        lambda: defaultdict(
            lambda: {"memory_used": 0, "slots_used": 0, "pending": 0, "running": 0}
        )
    )
    holding = list(
        Request.objects.filter(queue_id__in=ids, state__in=HOLDING_STATES).values(
            "pk", "queue_id", "cluster_id", "namespace", "pod_name", "common_word"
        )
    )
    by_pod = {(h["cluster_id"], h["namespace"], h["pod_name"]): h for h in holding}
    seen: set[int] = set()
    pods = {h["pod_name"] for h in holding if h["pod_name"]}
    for row in (
        Slice.objects.filter(pod_name__in=pods)
        .values("cluster_id", "namespace", "pod_name")
        .annotate(memory=Sum("memory"), n=Count("id"))
    ):
        owner = by_pod.get((row["cluster_id"], row["namespace"], row["pod_name"]))
        if owner is None:
            continue
        entry = usage[owner["queue_id"]][owner["common_word"]]
        entry["memory_used"] += row["memory"] or 0
        entry["slots_used"] += row["n"]
        seen.add(owner["pk"])
    for res in Reservation.objects.filter(request__queue_id__in=ids).values(
        "request_id", "memory", "request__queue_id", "request__common_word"
    ):
        if res["request_id"] in seen:
            continue
        entry = usage[res["request__queue_id"]][res["request__common_word"]]
        entry["memory_used"] += res["memory"]
        entry["slots_used"] += 1
    for key, state in (
        ("pending", RequestState.PENDING),
        ("running", RequestState.RUNNING),
    ):
        for counted in (
            Request.objects.filter(queue_id__in=ids, state=state)
            .values("queue_id", "common_word")
            .annotate(n=Count("id"))
        ):
            usage[counted["queue_id"]][counted["common_word"]][key] = counted["n"]
    return {
        queue_id: [
            {"chip_type": word, **numbers} for word, numbers in sorted(per.items())
        ]
        for queue_id, per in usage.items()
    }


def queue_pod_policy(queue: Queue | None) -> podsecurity.PodPolicy:
    """The pod policy of a queue (None: the default queue before its first use)."""
    if queue is None:
        return podsecurity.PodPolicy()
    return podsecurity.PodPolicy(
        allowed_namespaces=tuple(queue.allowed_namespaces or ()),
        level=podsecurity.Level(queue.pod_security),
        allowed_service_accounts=tuple(queue.allowed_service_accounts or ()),
        allowed_secrets=tuple(queue.allowed_secrets or ()),
        allowed_config_maps=tuple(queue.allowed_config_maps or ()),
    )


def pod_policy_violations(
    *,
    queue: Queue | None,
    namespace: str,
    workload: dict[str, Any] | None,
    pod_template: dict[str, Any] | None,
) -> list[podsecurity.Violation]:
    """How the pod of a submission would go beyond its queue's pod policy.

    Checked on the template the pod is built from (``pods.template_of``), so a
    workload's env is checked as a template's is. A workload pod gets the
    securityContext ``restricted`` needs when its queue is at that level.
    """
    policy = queue_pod_policy(queue)
    template = template_of(
        workload, pod_template, workload_security_context(policy.level)
    )
    violations = podsecurity.check(namespace, template, policy)
    if pod_template is None:
        # The portal built the container: name the workload's fields, not its own.
        violations = [
            podsecurity.Violation(
                v.field.replace(
                    f"{podsecurity.ROOT}.spec.containers[0].env", "workload.env"
                ),
                v.message,
            )
            for v in violations
        ]
    return violations


def workload_security_context(level: str) -> dict[str, Any] | None:
    """The securityContext of a workload pod's container at a queue's level."""
    if level == podsecurity.Level.RESTRICTED:
        return podsecurity.restricted_security_context()
    return None


def requests_delta_scoped(
    queue_ids: Sequence[int], payload: dict[str, Any]
) -> dict[str, Any] | None:
    """The rows of a ``requests`` delta in ``queue_ids`` (a socket limited to them)."""
    ids = [row["id"] for row in payload.get("rows", [])]
    mine = set(
        Request.objects.filter(pk__in=ids, queue_id__in=queue_ids).values_list(
            "pk", flat=True
        )
    )
    rows = [row for row in payload.get("rows", []) if row["id"] in mine]
    return {**payload, "rows": rows} if rows else None


def proposal_delta_scoped(
    queue_ids: Sequence[int], payload: dict[str, Any]
) -> dict[str, Any] | None:
    """A ``proposal`` delta, when its request is in ``queue_ids``."""
    return (
        payload
        if Request.objects.filter(
            pk=payload.get("request"), queue_id__in=queue_ids
        ).exists()
        else None
    )


def pending_request_demands(cluster: Cluster) -> list[DemandFact]:
    """The cluster's pending requests as the node config's what-if reads them
    (registered with the inventory at start: it never imports scheduling)."""
    rows = (
        Request.objects.filter(cluster=cluster, state=RequestState.PENDING)
        .order_by("-priority", "created_at", "pk")
        .values_list(
            "pk", "namespace", "queue__name", "common_word", "memory", "template"
        )
    )
    return [
        DemandFact(
            id=str(pk),
            label=f"request {pk} ({namespace}, queue {queue})",
            common_word=word,
            memory=memory,
            template=template or None,
        )
        for pk, namespace, queue, word, memory, template in rows
    ]


def pod_requests(
    cluster: Cluster, pods: Collection[tuple[str, str]]
) -> dict[tuple[str, str], int]:
    """The portal request behind each of these (namespace, pod) pairs that has one.

    A pod name a finished request once had can come back for a newer one: the
    newest request of that name wins.
    """
    names = {pod for _, pod in pods}
    found: dict[tuple[str, str], int] = {}
    for request_id, namespace, pod in (
        Request.objects.filter(cluster=cluster, pod_name__in=names)
        .order_by("id")
        .values_list("id", "namespace", "pod_name")
    ):
        if (namespace, pod) in pods:
            found[(namespace, pod)] = request_id
    return found
