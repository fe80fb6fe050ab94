"""From database rows to the allocator's inputs (one cluster, one pass).

What counts as used on a chip is what HAMi counts (the Slices sync mirrors:
every non-terminal pod's ``-devices-allocated``) plus the portal's own
Reservations that no Slice shows yet. A reservation whose pod already has a
Slice is not counted twice. Slices of pods the portal is deleting (ended
requests, evicted victims) are "terminating": capacity being freed, never
preemption victims.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from apps.inventory.deviceconfig.in_effect import chip_types_in_effect
from apps.inventory.models import (
    Chip,
    Cluster,
    PriorityClass,
    Slice,
)
from apps.scheduling import allocator as alloc
from apps.scheduling.choices import FINAL_STATES, ProposalState
from apps.scheduling.models import (
    PreemptionProposal,
    QueueQuota,
    Request,
    Reservation,
)
from apps.scheduling.pods import POD_PREFIX

PodKey = tuple[str, str]
#: Proposals whose victims are on their way out (those of done ones are gone).
_VICTIMS_LEAVING = (ProposalState.APPROVED, ProposalState.EVICTING)


@dataclass(frozen=True)
class SliceRow:
    """What a proposal needs to name one running slice as a victim."""

    id: int
    namespace: str
    pod: str
    chip_id: int
    template: str
    memory: int
    priority: int
    priority_class: str
    started_at: datetime | None
    queue: str
    request_id: int | None


@dataclass
class Snapshot:
    """The allocator's inputs, and the rows behind them."""

    rules: list[alloc.ChipTypeRules] = field(default_factory=list)
    chips: list[alloc.Chip] = field(default_factory=list)
    running: list[alloc.RunningSlice] = field(default_factory=list)
    quotas: list[alloc.QueueQuota] = field(default_factory=list)
    requests: list[alloc.Request] = field(default_factory=list)
    #: RunningSlice id ("s<pk>") → the slice, for victims.
    slices: dict[str, SliceRow] = field(default_factory=dict)
    #: Chip pk → (uuid, node name).
    chip_rows: dict[int, tuple[str, str]] = field(default_factory=dict)
    # Chip pk → how people know it (UUID and index), for reasons.
    chip_labels: dict[int, str] = field(default_factory=dict)
    #: Allocator chip id → (memory, AICore) of each reservation on it whose pod
    #: is not bound yet (no Slice): Volcano may still bind it to any chip of the node.
    unbound: dict[str, list[tuple[int, int]]] = field(default_factory=dict)


def rules_for(cluster: Cluster) -> dict[str, alloc.ChipTypeRules]:
    """The device-config rules of ``cluster`` per commonWord, as the allocator takes them.

    From the version the cluster's scheduler loaded (``chip_types_in_effect``):
    a pod is placed by those until the scheduler restarts, whatever was
    published or edited since. Templates keep file order: the template rule
    breaks ties between equal memories by it, as HAMi and Volcano do. An
    AICore or AICPU the config leaves unset counts as 0 (HAMi does not account
    them in template mode either).
    """
    return {
        ct.common_word: alloc.ChipTypeRules(
            common_word=ct.common_word,
            memory_allocatable=ct.memory_allocatable,
            memory_capacity=ct.memory_capacity,
            ai_core=ct.ai_core or 0,
            ai_cpu=ct.ai_cpu or 0,
            templates=tuple(
                alloc.TemplateShape(t.name, t.memory, t.ai_core or 0, t.ai_cpu or 0)
                for t in ct.templates
            ),
        )
        for ct in chip_types_in_effect(cluster)
    }


def allocator_request(
    request: Request, never_preempt: frozenset[str] = frozenset()
) -> alloc.Request:
    """The allocator's view of a pending request; ``never_preempt`` names the
    cluster's PriorityClasses with ``preemptionPolicy: Never``."""
    return alloc.Request(
        id=str(request.pk),
        common_word=request.common_word,
        memory=request.memory,
        template=request.template or None,
        priority=request.priority,
        submitted_at_s=request.created_at.timestamp(),
        queue=request.queue.name,
        allow_preemption=request.allow_preemption,
        never_preempts=request.priority_class in never_preempt,
    )


def build_snapshot(
    cluster: Cluster, pending: Sequence[Request], now: datetime
) -> Snapshot:
    """Everything ``allocate`` needs to serve ``pending`` in ``cluster``.

    Only the chip types the pending requests ask for are loaded: the other
    chips cannot change any decision of this pass.
    """
    snap = Snapshot()
    rules = rules_for(cluster)
    words = {r.common_word for r in pending} & set(rules)
    snap.rules = [rules[w] for w in sorted(words)]
    never_preempt = frozenset(
        PriorityClass.objects.filter(
            cluster=cluster, preemption_policy="Never"
        ).values_list("name", flat=True)
    )
    snap.requests = [allocator_request(r, never_preempt) for r in pending]
    if not words:
        return snap

    chips = list(
        Chip.objects.filter(cluster=cluster, common_word__in=words, memory__gt=0)
        .select_related("node")
        .order_by("pk")
    )
    chip_ids = {c.pk for c in chips}
    slices = list(
        Slice.objects.filter(cluster=cluster, chip_id__in_array=chip_ids)
        .order_by("pk")
        .values(
            "id",
            "chip_id",
            "namespace",
            "pod_name",
            "template",
            "memory",
            "aicore",
            "aicpu",
            "priority",
            "priority_class",
            "preemptable",
            "volcano_queue",
            "started_at",
        )
    )
    owners = _portal_pods(cluster, slices)
    leaving = _victims_leaving(cluster)
    with_slice = {(s["namespace"], s["pod_name"]) for s in slices}

    used: dict[int, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    queue_used: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    word_of = {c.pk: c.common_word for c in chips}
    now_s = now.timestamp()
    for s in slices:
        owner = owners.get((s["namespace"], s["pod_name"]))
        queue = owner[1] if owner else ""
        _add(used[s["chip_id"]], s["memory"], s["aicore"], s["aicpu"])
        if queue:
            _add(queue_used[(queue, word_of[s["chip_id"]])], s["memory"])
        key = (s["namespace"], s["pod_name"])
        sid = f"s{s['id']}"
        snap.running.append(
            alloc.RunningSlice(
                id=sid,
                chip_id=str(s["chip_id"]),
                memory=s["memory"],
                ai_core=s["aicore"],
                ai_cpu=s["aicpu"],
                priority=s["priority"],
                started_at_s=s["started_at"].timestamp() if s["started_at"] else now_s,
                queue=queue,
                namespace=s["namespace"],
                pod=s["pod_name"],
                terminating=key in leaving or bool(owner and owner[2]),
                preemptable=s["preemptable"],
            )
        )
        snap.slices[sid] = SliceRow(
            id=s["id"],
            namespace=s["namespace"],
            pod=s["pod_name"],
            chip_id=s["chip_id"],
            template=s["template"],
            memory=s["memory"],
            priority=s["priority"],
            priority_class=s["priority_class"],
            started_at=s["started_at"],
            # A portal pod's queue is its portal queue (a Volcano queue of the
            # same name); any other pod's is the Volcano queue it names.
            queue=queue or s["volcano_queue"],
            request_id=owner[0] if owner else None,
        )

    for r in Reservation.objects.filter(
        cluster=cluster, chip_id__in_array=chip_ids
    ).values(
        "chip_id",
        "memory",
        "aicore",
        "aicpu",
        "request__namespace",
        "request__pod_name",
        "request__queue__name",
    ):
        # Once sync shows the pod's Slice, the slice is what counts.
        if (r["request__namespace"], r["request__pod_name"]) in with_slice:
            continue
        _add(used[r["chip_id"]], r["memory"], r["aicore"], r["aicpu"])
        snap.unbound.setdefault(str(r["chip_id"]), []).append(
            (r["memory"], r["aicore"] or 0)
        )
        _add(
            queue_used[(r["request__queue__name"], word_of[r["chip_id"]])], r["memory"]
        )

    for c in chips:
        memory_used, slots_used, aicore_used, aicpu_used = used[c.pk]
        snap.chip_rows[c.pk] = (c.uuid, c.node.name)
        snap.chip_labels[c.pk] = f"{c.uuid} (index {c.index})"
        snap.chips.append(
            alloc.Chip(
                id=str(c.pk),
                node=c.node.name,
                common_word=c.common_word,
                memory=c.memory,
                slots=c.slots,
                ai_core=c.aicore,
                ai_cpu=c.aicpu,
                memory_used=memory_used,
                slots_used=slots_used,
                ai_core_used=aicore_used,
                ai_cpu_used=aicpu_used,
                healthy=c.healthy,
                # Volcano binds nothing to a cordoned or NotReady node either.
                cordoned=c.cordoned or c.node.unschedulable or not c.node.ready,
                network_id=c.network_id,
            )
        )

    for q in QueueQuota.objects.filter(
        queue__cluster=cluster, common_word__in=words
    ).select_related("queue"):
        memory_used, slots_used = queue_used.get((q.queue.name, q.common_word), (0, 0))
        snap.quotas.append(
            alloc.QueueQuota(
                queue=q.queue.name,
                common_word=q.common_word,
                memory_limit=q.memory_limit,
                slots_limit=q.slots_limit,
                memory_used=memory_used,
                slots_used=slots_used,
            )
        )
    return snap


def _add(totals: list[int], memory: int, aicore: int = 0, aicpu: int = 0) -> None:
    # Quota totals are (memory, slots); chip totals (memory, slots, AICore, AICPU).
    totals[0] += memory
    totals[1] += 1
    if len(totals) > 2:
        totals[2] += aicore
        totals[3] += aicpu


def _portal_pods(
    cluster: Cluster, slices: Iterable[Mapping[str, Any]]
) -> dict[PodKey, tuple[int, str, bool]]:
    """(request id, queue name, ended) of the portal's pods among ``slices``."""
    names = {s["pod_name"] for s in slices if s["pod_name"].startswith(POD_PREFIX)}
    if not names:
        return {}
    rows = Request.objects.filter(cluster=cluster, pod_name__in=names).values_list(
        "namespace", "pod_name", "pk", "queue__name", "state"
    )
    return {
        (ns, pod): (pk, queue, state in FINAL_STATES)
        for ns, pod, pk, queue, state in rows
    }


def _victims_leaving(cluster: Cluster) -> set[PodKey]:
    """Pods of approved proposals: evicted or about to be."""
    leaving: set[PodKey] = set()
    for victims in PreemptionProposal.objects.filter(
        cluster=cluster, state__in=_VICTIMS_LEAVING
    ).values_list("victims", flat=True):
        for v in victims or []:
            leaving.add((v["namespace"], v["pod"]))
    return leaving
