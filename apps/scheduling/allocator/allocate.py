"""The allocator's one entry point, ``allocate``, and the pass that runs it.

Requests are served one at a time, highest priority first, then oldest, then by
id. For each request, in this order:

1. HAMi's template rule turns it into a shape (or it waits as INVALID).
2. If its queue's quota allows, it is placed on the best chip that fits now.
   Where the scheduler picks the chip within the node (``Policy.
   scheduler_picks_chip``, Volcano), a chip on a node where every chip the
   scheduler could pick keeps the promises is preferred; without one, the
   request is placed with a caveat or waits (``Policy.place_unguaranteed``).
3. Otherwise, if capacity being freed (terminating slices, victims of earlier
   proposals) will make room, it waits for that and the room is reserved.
4. Otherwise, if preemption is allowed, it gets a proposal: the chip and the
   smallest set of strictly lower-priority victims (see ``preempt``).
5. Otherwise it waits with the reason.

Because requests are served in priority order and every promise (placement,
proposal, reservation) is booked before the next request is looked at, a lower
priority request can never take room that a higher one could use. The one way
room appears during a pass is a proposal whose victims free more than its
request needs; that room is first offered to the requests already left waiting
(see ``_Pass._reoffer``).

The pass's state and indexes live in ``passstate``, the searches for a chip in
``chipsearch`` and for a preemption proposal in ``proposals``; this module
serves the requests and books what it decides.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from operator import attrgetter

from . import reasons
from .chipsearch import ChipSearch
from .errors import InvalidRequest, InvalidSnapshot, SnapshotProblem
from .fit import Resources, booking, fits
from .index import ChipState
from .preempt import VictimSet
from .proposals import ProposalSearch
from .quota import QuotaState
from .shapes import resolve_shape
from .types import (
    AllocationResult,
    Chip,
    ChipTypeRules,
    Placement,
    Policy,
    PreemptionProposal,
    QueueQuota,
    Request,
    RunningSlice,
    SliceShape,
    Waiting,
    WaitReason,
)
from .validate import (
    validate_chips,
    validate_quotas,
    validate_requests,
    validate_rules,
    validate_running,
)


def allocate(
    requests: Iterable[Request],
    chips: Iterable[Chip],
    rules: Iterable[ChipTypeRules],
    *,
    policy: Policy,
    quotas: Iterable[QueueQuota] = (),
    running: Iterable[RunningSlice] = (),
    now_s: float | None = None,
) -> AllocationResult:
    """Place pending requests on chips, propose preemptions, explain the rest.

    The result depends only on the inputs, not on their order: everything is
    sorted first, and no clock or randomness is used.

    Args:
        requests: Pending requests.
        chips: Every chip with its totals and usage (running slices included).
        rules: The device-config rules, one per chip type (common word).
        policy: Strategy (binpack or spread), whether preemption is on, and
            the look-ahead window of binpack.
        quotas: Queue quotas per chip type; a queue and type without an entry
            is unlimited.
        running: Slices running on the chips; terminating ones count as
            capacity being freed, the others may be preemption victims.
        now_s: "Now" for the running time a victim loses; defaults to the
            latest ``started_at_s`` among ``running`` (0 when there is none).
            It changes the reported ``lost_seconds`` only, never the choice.

    Returns:
        Placements, preemption proposals and waiting requests, each in
        processing order; every request appears in exactly one of them.

    Raises:
        InvalidSnapshot: Inconsistent input (negative numbers, duplicate ids,
            chips of a type without rules, running slices on unknown chips or
            using more than their chip reports, non-finite times).
    """
    request_list = list(requests)
    chip_list = sorted(chips, key=attrgetter("id"))
    rule_list = list(rules)
    quota_list = list(quotas)
    running_list = sorted(running, key=attrgetter("id"))

    if policy.lookahead < 0:
        raise InvalidSnapshot(
            SnapshotProblem.NEGATIVE_VALUE, "policy", "policy", "lookahead"
        )
    validate_rules(rule_list)
    validate_chips(chip_list, (r.common_word for r in rule_list))
    validate_running(running_list, {c.id: c for c in chip_list})
    validate_quotas(quota_list)
    validate_requests(request_list, now_s)

    if now_s is None:
        now_s = float(max((s.started_at_s for s in running_list), default=0.0))
    ordered = sorted(request_list, key=lambda r: (-r.priority, r.submitted_at_s, r.id))
    state = _Pass(chip_list, rule_list, quota_list, running_list, policy, now_s)
    state.prepare(ordered)
    for request in ordered:
        state.serve(request)
    outcomes = [state.outcomes[r.id] for r in ordered]
    return AllocationResult(
        placements=tuple(o for o in outcomes if isinstance(o, Placement)),
        proposals=tuple(o for o in outcomes if isinstance(o, PreemptionProposal)),
        waiting=tuple(o for o in outcomes if isinstance(o, Waiting)),
    )


class _Pass(ChipSearch, ProposalSearch):
    """One ``allocate`` call: serve each request in order and book the outcome."""

    def prepare(self, ordered: Sequence[Request]) -> None:
        """Resolve every request's shape and list the upcoming shapes per type."""
        # Many requests ask alike (a template, a whole card): the template
        # rule runs once per distinct ask.
        resolved: dict[tuple[str, int | None, str | None], SliceShape | str] = {}
        for r in ordered:
            t = self.types.get(r.common_word)
            if t is None:
                continue
            ask = (r.common_word, r.memory, r.template)
            found = resolved.get(ask)
            if found is None:
                try:
                    found = resolve_shape(t.rules, memory=r.memory, template=r.template)
                except InvalidRequest as e:
                    found = e.detail
                resolved[ask] = found
            self.shapes[r.id] = found
            if isinstance(found, str):
                continue
            shape = found
            if r.pinned_chip is None:
                self.upcoming_at[r.id] = len(t.upcoming)
                t.upcoming.append(shape)
                t.upcoming_kinds.append(t.kinds.setdefault(shape, len(t.kinds)))

    # -- serving one request ---------------------------------------------------

    def serve(self, r: Request) -> None:
        """Place, propose or explain one request."""
        t = self.types.get(r.common_word)
        if t is None:
            self._wait(r, reasons.unknown_chip_type(r.common_word), WaitReason.INVALID)
            return
        shape = self.shapes[r.id]
        if isinstance(shape, str):
            self._wait(r, reasons.invalid(shape), WaitReason.INVALID)
            return
        problem = self._eligibility_problem(r, t)
        if problem is not None:
            self._wait(r, problem, WaitReason.NO_ELIGIBLE_CHIP)
            return

        quota = self.quotas.get((r.queue, r.common_word))
        quota_now = None if quota is None else quota.exhausted(shape, future_only=False)
        if quota_now is None:
            st = self._find_now(r, t, shape)
            if st is not None:
                st, caveat = self._guaranteed(r, shape, st)
                if caveat is None or self.policy.place_unguaranteed:
                    self._place(r, st, shape, quota, caveat)
                else:
                    self._wait(r, caveat, WaitReason.UNGUARANTEED)
                return

        quota_future = (
            None if quota is None else quota.exhausted(shape, future_only=True)
        )
        if quota_future is None:
            st = self._find_freeing(r, t, shape, also_now=quota_now is not None)
            if st is not None:
                self._reserve(r, st, shape, quota, for_quota=quota_now is not None)
                return

        if self.policy.preemption and r.allow_preemption and not r.never_preempts:
            found = self._find_proposal(r, t, shape, quota)
            if found is not None:
                self._propose(r, found[0], shape, found[1], quota)
                return

        self.passed_over.setdefault(r.common_word, []).append((r, shape))
        note = reasons.preemption_note(
            self.policy.preemption, r.allow_preemption, r.priority, r.never_preempts
        )
        if quota_future is not None:
            text = reasons.quota_exhausted(r.queue, r.common_word, *quota_future)
            self._wait(r, reasons.with_note(text, note), WaitReason.QUOTA)
            return
        closest = self._closest(r, t)
        text = reasons.no_capacity(
            r.common_word, shape, closest, r.pinned_chip is not None
        )
        self._wait(r, reasons.with_note(text, note), WaitReason.NO_CAPACITY)

    # -- outcomes ----------------------------------------------------------------

    def _place(
        self,
        r: Request,
        st: ChipState,
        shape: SliceShape,
        quota: QuotaState | None,
        caveat: str | None = None,
    ) -> None:
        book = booking(shape, st.total)
        self._touch(st, _plus(st.now, book), _plus(st.future, book))
        if quota is not None:
            quota.book(book.memory, 1, now=True)
        self.outcomes[r.id] = Placement(
            request_id=r.id,
            chip_id=st.chip.id,
            node=st.chip.node,
            template=shape.template,
            memory=book.memory,
            ai_core=book.ai_core,
            ai_cpu=book.ai_cpu,
            caveat=caveat,
        )

    def _reserve(
        self,
        r: Request,
        st: ChipState,
        shape: SliceShape,
        quota: QuotaState | None,
        *,
        for_quota: bool,
    ) -> None:
        book = booking(shape, st.total)
        self._touch(st, st.now, _plus(st.future, book))
        if quota is not None:
            quota.book(book.memory, 1, now=False)
        text = (
            reasons.freeing_quota(r.queue, r.common_word, st.chip.id)
            if for_quota
            else reasons.freeing_chip(st.chip.id, st.chip.node)
        )
        self._wait(r, text, WaitReason.CAPACITY_FREEING, st.chip.id)

    def _propose(
        self,
        r: Request,
        st: ChipState,
        shape: SliceShape,
        vs: VictimSet,
        quota: QuotaState | None,
    ) -> None:
        chosen = set(vs.victims)
        freed = Resources(0, 0, 0, 0)
        for s in st.slices:
            if s.id in chosen:
                freed = _plus(freed, Resources(s.memory, 1, s.ai_core, s.ai_cpu))
                victim_quota = self.quotas.get((s.queue, st.chip.common_word))
                if victim_quota is not None:
                    victim_quota.release(s.memory, 1)
        self.claimed.update(chosen)
        book = booking(shape, st.total)
        # Once the victims are gone, before the request's own booking: which
        # chips of the node the scheduler could then pick for it.
        after_victims = Resources(
            *(u - f for u, f in zip(st.future, freed, strict=True))
        )
        caveat = self._caveat(r, shape, st, future=True, chosen=after_victims)
        future = Resources(
            *(u - f + b for u, f, b in zip(st.future, freed, book, strict=True))
        )
        self._touch(st, st.now, future)
        # The chip's future use may have gone down: recheck it in cached misses.
        self.improved.append(st.index)
        if quota is not None:
            quota.book(book.memory, 1, now=False)
        self._reoffer(st)
        self.outcomes[r.id] = PreemptionProposal(
            request_id=r.id,
            chip_id=st.chip.id,
            node=st.chip.node,
            victims=vs.victims,
            max_victim_priority=vs.max_priority,
            lost_seconds=vs.lost_seconds,
            template=shape.template,
            memory=book.memory,
            ai_core=book.ai_core,
            ai_cpu=book.ai_cpu,
            caveat=caveat,
        )

    def _reoffer(self, st: ChipState) -> None:
        # The victims of a proposal may free more than its request needs. The
        # requests served earlier and left waiting have a higher priority (or
        # are older) than every request still to come, so they get that room
        # first, in their order, before the pass goes on.
        still: list[tuple[Request, SliceShape]] = []
        for r, shape in self.passed_over.get(st.chip.common_word, []):
            if self._allowed(r, st):
                quota = self.quotas.get((r.queue, r.common_word))
                quota_now = (
                    quota is None or quota.exhausted(shape, future_only=False) is None
                )
                caveat = self._caveat(r, shape, st)
                if (
                    quota_now
                    and fits(st.total, st.used, shape)
                    and (caveat is None or self.policy.place_unguaranteed)
                ):
                    self._place(r, st, shape, quota, caveat)
                    continue
                if fits(st.total, st.future, shape) and (
                    quota is None or quota.exhausted(shape, future_only=True) is None
                ):
                    self._reserve(r, st, shape, quota, for_quota=not quota_now)
                    continue
            still.append((r, shape))
        self.passed_over[st.chip.common_word] = still

    def _wait(
        self, r: Request, reason: str, code: WaitReason, chip_id: str | None = None
    ) -> None:
        self.outcomes[r.id] = Waiting(r.id, reason, code, chip_id)


def _plus(a: Resources, b: Resources) -> Resources:
    return Resources(
        a.memory + b.memory,
        a.slots + b.slots,
        a.ai_core + b.ai_core,
        a.ai_cpu + b.ai_cpu,
    )
