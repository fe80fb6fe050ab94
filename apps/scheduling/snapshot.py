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
from apps.scheduling.retries import avoided_chips

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
    #: Allocator chip id → memory of each reservation on it whose pod is not
    #: bound yet (no Slice): Volcano may still bind it to any chip of the node.
    unbound: dict[str, list[int]] = field(default_factory=dict)


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


def _standing_proposals(
    pending: Sequence[Request],
) -> dict[int, alloc.StandingProposal]:
    """The pending proposal of each request that has one, for the allocator to
    keep while it works (``alloc.StandingProposal``)."""
    return {
        p.request_id: alloc.StandingProposal(
            chip_id=str(p.chip_id),
            victims=frozenset((v["namespace"], v["pod"]) for v in p.victims),
        )
        for p in PreemptionProposal.objects.filter(
            request_id__in=[r.pk for r in pending],
            state=ProposalState.PENDING,
            chip__isnull=False,
        ).only("request_id", "chip_id", "victims")
    }


def allocator_request(
    request: Request,
    never_preempt: frozenset[str] = frozenset(),
    standing: alloc.StandingProposal | None = None,
) -> alloc.Request:
    """The allocator's view of a pending request; ``never_preempt`` names the
    cluster's PriorityClasses with ``preemptionPolicy: Never``, ``standing`` is
    its pending proposal."""
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
        excluded_chips=avoided_chips(request),
        standing=standing,
    )


def build_snapshot(
    cluster: Cluster, pending: Sequence[Request], now: datetime
) -> Snapshot:
    """Everything ``allocate`` needs to serve ``pending`` in ``cluster``.

    Only the chip types the pending requests ask for are loaded: the other
    chips cannot change any decision of this pass. Usage counts the slices
    running on the chips and the reservations whose pod has no slice yet.
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
    standing = _standing_proposals(pending)
    snap.requests = [
        allocator_request(r, never_preempt, standing.get(r.pk)) for r in pending
    ]
    if not words:
        return snap

    chips = list(
        Chip.objects.filter(cluster=cluster, common_word__in=words, memory__gt=0)
        .select_related("node")
        .order_by("pk")
    )
    chip_ids = {c.pk for c in chips}
    usage = _Usage({c.pk: c.common_word for c in chips})
    slices = _slice_values(cluster, chip_ids)
    _add_running(snap, usage, cluster, slices, now)
    _add_reservations(snap, usage, cluster, chip_ids, slices)
    _add_chips(snap, usage, chips)
    _add_quotas(snap, usage, cluster, words)
    return snap


@dataclass
class _Usage:
    """What is booked so far while a snapshot is built.

    Per chip: memory, slots, AICore, AICPU; per (queue, chip type): memory,
    slots.
    """

    word_of: dict[int, str]
    chips: defaultdict[int, list[int]] = field(
        default_factory=lambda: defaultdict(lambda: [0, 0, 0, 0])
    )
    queues: defaultdict[tuple[str, str], list[int]] = field(
        default_factory=lambda: defaultdict(lambda: [0, 0])
    )


def _slice_values(cluster: Cluster, chip_ids: set[int]) -> list[dict[str, Any]]:
    """The slices on the chips, as the columns the snapshot reads, by pk."""
    return list(
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


def _add_running(
    snap: Snapshot,
    usage: _Usage,
    cluster: Cluster,
    slices: list[dict[str, Any]],
    now: datetime,
) -> None:
    """Count each slice's use and add it as a running slice (and its row)."""
    owners = _portal_pods(cluster, slices)
    leaving = _victims_leaving(cluster)
    now_s = now.timestamp()
    for s in slices:
        owner = owners.get((s["namespace"], s["pod_name"]))
        queue = owner[1] if owner else ""
        _add(usage.chips[s["chip_id"]], s["memory"], s["aicore"], s["aicpu"])
        if queue:
            _add(usage.queues[(queue, usage.word_of[s["chip_id"]])], s["memory"])
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


def _add_reservations(
    snap: Snapshot,
    usage: _Usage,
    cluster: Cluster,
    chip_ids: set[int],
    slices: list[dict[str, Any]],
) -> None:
    """Count the reservations on the chips whose pod has no slice yet.

    They are also the chips' unbound bookings (``Snapshot.unbound``).
    """
    with_slice = {(s["namespace"], s["pod_name"]) for s in slices}
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
        _add(usage.chips[r["chip_id"]], r["memory"], r["aicore"], r["aicpu"])
        snap.unbound.setdefault(str(r["chip_id"]), []).append(r["memory"])
        _add(
            usage.queues[(r["request__queue__name"], usage.word_of[r["chip_id"]])],
            r["memory"],
        )


def _add_chips(snap: Snapshot, usage: _Usage, chips: list[Chip]) -> None:
    """Add each chip with its totals and the use counted."""
    for c in chips:
        memory_used, slots_used, aicore_used, aicpu_used = usage.chips[c.pk]
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
                # Volcano binds nothing to a cordoned or NotReady node either;
                # an isolated chip is out from the moment its isolation starts.
                cordoned=c.cordoned
                or not c.in_service
                or c.node.unschedulable
                or not c.node.ready,
                network_id=c.network_id,
            )
        )


def _add_quotas(
    snap: Snapshot, usage: _Usage, cluster: Cluster, words: set[str]
) -> None:
    """Add the quotas of the chip types asked for, with each queue's use counted."""
    for q in QueueQuota.objects.filter(
        queue__cluster=cluster, common_word__in=words
    ).select_related("queue"):
        memory_used, slots_used = usage.queues.get(
            (q.queue.name, q.common_word), (0, 0)
        )
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
