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
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from . import reasons
from .errors import InvalidRequest, InvalidSnapshot, SnapshotProblem
from .fit import Resources, booking, fits, scheduler_fits, shortfall
from .index import Bucket, ChipState
from .lookahead import pick_with_lookahead
from .policy import LOOKS_AHEAD, ChipKey, chip_key
from .preempt import Candidate, VictimHeap, VictimSet, lower_bound, min_victim_set
from .quota import QuotaState
from .shapes import all_shapes, resolve_shape
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

#: How many of the best chips (with distinct memory use) the look-ahead weighs.
LOOKAHEAD_CHIPS = 3


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
    chip_list = sorted(chips, key=lambda c: c.id)
    rule_list = list(rules)
    quota_list = list(quotas)
    running_list = sorted(running, key=lambda s: s.id)

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


# Victim heaps are kept per (shape, queue, quota need); queue None means the
# quota does not bind and only the chip has to make room.
_HeapKey = tuple[SliceShape, str | None, tuple[int, int]]


@dataclass(slots=True)
class _TypeState:
    """Per chip type: rules, shapes, memory buckets and preemption indexes."""

    rules: ChipTypeRules
    shapes: tuple[SliceShape, ...]
    buckets: dict[Resources, Bucket] = field(default_factory=dict)
    freeing: set[int] = field(default_factory=set)
    victim_chips: list[int] = field(default_factory=list)
    victim_chips_by_queue: dict[str, list[int]] = field(default_factory=dict)
    heaps: dict[_HeapKey, VictimHeap] = field(default_factory=dict)
    upcoming: list[SliceShape] = field(default_factory=list)
    eligible: int = 0
    cordoned: int = 0
    unhealthy: int = 0


# Negative caches: (type, shape, exclusions) → position in ``_Pass.improved``
# when no chip fitted. Usage only grows during a pass, except on chips where a
# proposal lowered the future use; those are logged in ``improved``, so a cached
# "nothing fits" needs rechecking on those chips only.
_CacheKey = tuple[str, SliceShape, frozenset[str]]


class _Pass:
    """Mutable state of one ``allocate`` call."""

    def __init__(
        self,
        chips: Sequence[Chip],
        rules: Sequence[ChipTypeRules],
        quotas: Sequence[QueueQuota],
        running: Sequence[RunningSlice],
        policy: Policy,
        now_s: float,
    ) -> None:
        self.policy = policy
        self.strategy = policy.strategy
        self.now_s = now_s
        self.outcomes: dict[str, Placement | PreemptionProposal | Waiting] = {}
        # Requests left waiting for lack of room, per chip type, in order; a
        # proposal that frees more than it needs offers them the rest first.
        self.passed_over: dict[str, list[tuple[Request, SliceShape]]] = {}
        self.claimed: set[str] = set()
        self.improved: list[int] = []
        self.no_fit: dict[_CacheKey, int] = {}
        self.no_freeing: dict[_CacheKey, int] = {}
        self.shapes: dict[str, SliceShape | str] = {}
        self.upcoming_at: dict[str, int] = {}
        self.lookahead_chips = (
            LOOKAHEAD_CHIPS
            if policy.lookahead > 0 and LOOKS_AHEAD[policy.strategy]
            else 1
        )

        self.types = {r.common_word: _TypeState(r, all_shapes(r)) for r in rules}
        slices_on: dict[str, list[RunningSlice]] = {}
        for s in running:
            slices_on.setdefault(s.chip_id, []).append(s)
        self.states: list[ChipState] = []
        self.by_id: dict[str, ChipState] = {}
        # Every chip (eligible or not) by (node, type) and by type: where the
        # scheduler picks the chip, any of them may be taken.
        self.on_node: dict[tuple[str, str], list[ChipState]] = {}
        self.of_type: dict[str, list[ChipState]] = {}
        for index, chip in enumerate(chips):
            st = ChipState(index, chip, slices_on.get(chip.id, ()))
            st.bound = self._bound(st)
            self.states.append(st)
            self.by_id[chip.id] = st
            self.on_node.setdefault((chip.node, chip.common_word), []).append(st)
            self.of_type.setdefault(chip.common_word, []).append(st)
            self._index_chip(st, self.types[chip.common_word])

        freeing: dict[tuple[str, str], tuple[int, int]] = {}
        for s in running:
            if s.terminating:
                key = (s.queue, self.by_id[s.chip_id].chip.common_word)
                memory, slots = freeing.get(key, (0, 0))
                freeing[key] = (memory + s.memory, slots + 1)
        self.quotas = {
            (q.queue, q.common_word): QuotaState(
                q, freeing.get((q.queue, q.common_word), (0, 0))
            )
            for q in quotas
        }

    def prepare(self, ordered: Sequence[Request]) -> None:
        """Resolve every request's shape and list the upcoming shapes per type."""
        for r in ordered:
            t = self.types.get(r.common_word)
            if t is None:
                continue
            try:
                shape = resolve_shape(t.rules, memory=r.memory, template=r.template)
            except InvalidRequest as e:
                self.shapes[r.id] = e.detail
                continue
            self.shapes[r.id] = shape
            if r.pinned_chip is None:
                self.upcoming_at[r.id] = len(t.upcoming)
                t.upcoming.append(shape)

    # -- indexes ---------------------------------------------------------------

    def _index_chip(self, st: ChipState, t: _TypeState) -> None:
        if not st.chip.healthy:
            t.unhealthy += 1
        elif st.chip.cordoned:
            t.cordoned += 1
        if not st.eligible:
            return
        t.eligible += 1
        bucket = t.buckets.get(st.total)
        if bucket is None:
            bucket = t.buckets[st.total] = Bucket(st.total, self.strategy)
        st.bucket = bucket
        if self._alive(st, t):
            bucket.add(st)
        if st.is_freeing():
            t.freeing.add(st.index)
        if st.slices:
            t.victim_chips.append(st.index)
            for queue in sorted({s.queue for s in st.slices}):
                t.victim_chips_by_queue.setdefault(queue, []).append(st.index)

    @staticmethod
    def _alive(st: ChipState, t: _TypeState) -> bool:
        # A chip that cannot take even one shape of its type leaves the index.
        return any(fits(st.total, st.used, shape) for shape in t.shapes)

    def _touch(self, st: ChipState, now: Resources, future: Resources) -> None:
        t = self.types[st.chip.common_word]
        st.set_usage(now, future)
        if st.bucket is not None:
            st.bucket.remove(st)
            if self._alive(st, t):
                st.bucket.add(st)
        if st.is_freeing():
            t.freeing.add(st.index)
        if st.slices:
            for heap in t.heaps.values():
                heap.dirty.add(st.index)

    def _key(self, st: ChipState, used: Resources) -> ChipKey:
        return chip_key(
            self.strategy, st.chip.id, st.total.memory, used.memory, used.slots
        )

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
            self._wait(r, f"{text}; {note}", WaitReason.QUOTA)
            return
        closest = self._closest(r, t)
        text = reasons.no_capacity(
            r.common_word, shape, closest, r.pinned_chip is not None
        )
        self._wait(r, f"{text}; {note}", WaitReason.NO_CAPACITY)

    def _eligibility_problem(self, r: Request, t: _TypeState) -> str | None:
        if r.pinned_chip is not None:
            st = self.by_id.get(r.pinned_chip)
            why = None
            if st is None:
                why = "is unknown"
            elif st.chip.common_word != r.common_word:
                why = f"is {st.chip.common_word}, not {r.common_word}"
            elif not st.chip.healthy:
                why = "is unhealthy"
            elif st.chip.cordoned:
                why = "is cordoned"
            elif r.pinned_chip in r.excluded_chips:
                why = "is also excluded by the request"
            return (
                None if why is None else reasons.pinned_unavailable(r.pinned_chip, why)
            )
        excluded = 0
        for chip_id in r.excluded_chips:
            st = self.by_id.get(chip_id)
            if st is not None and st.eligible and st.chip.common_word == r.common_word:
                excluded += 1
        if t.eligible > excluded:
            return None
        return reasons.no_eligible_chip(
            r.common_word, t.cordoned, t.unhealthy, excluded
        )

    def _caveat(
        self,
        r: Request,
        shape: SliceShape,
        st: ChipState,
        *,
        future: bool = False,
        chosen: Resources | None = None,
    ) -> str | None:
        """What is not guaranteed if the pod is steered to ``st``'s node.

        None when the scheduler honours the chip, or when every chip of the
        node it could pick for the shape (by its own count: no health, no
        AICPU, no pin, no exclusions) keeps the portal's promises. ``future``:
        once the slices leaving (terminating pods, earlier proposals' victims)
        are gone, as a proposal's request will be placed; ``chosen`` is then
        ``st``'s own usage without this proposal's victims.
        """
        if not self.policy.scheduler_picks_chip:
            return None
        hazards = []
        for other in self.on_node[(st.chip.node, st.chip.common_word)]:
            used = other.future if future else other.used
            if chosen is not None and other is st:
                used = chosen
            if not scheduler_fits(other.total, used, shape):
                continue
            if not other.chip.healthy:
                why = "is unhealthy"
            elif other.chip.cordoned:
                why = "is cordoned"
            elif other.chip.id in r.excluded_chips:
                why = "the request excludes"
            elif not fits(other.total, used, shape):
                free = other.total.ai_cpu - used.ai_cpu
                why = f"has {free} AICPU free, not {booking(shape, other.total).ai_cpu}"
            else:
                continue
            hazards.append(reasons.hazard(other.chip.id, why))
        return reasons.unguaranteed(st.chip.node, hazards) if hazards else None

    def _guaranteed(
        self, r: Request, shape: SliceShape, st: ChipState
    ) -> tuple[ChipState, str | None]:
        """``st``, or the best chip that fits now on a node without a caveat.

        Only when ``st``'s node has a caveat are the other chips of the type
        scanned; without any guaranteed one, ``st`` is kept with its caveat.
        """
        caveat = self._caveat(r, shape, st)
        if caveat is None:
            return st, None
        best: ChipState | None = None
        best_key: ChipKey | None = None
        bad_nodes = {st.chip.node}
        for other in self.of_type[r.common_word]:
            if other.chip.node in bad_nodes or not self._allowed(r, other):
                continue
            if not fits(other.total, other.used, shape):
                continue
            if self._caveat(r, shape, other) is not None:
                bad_nodes.add(other.chip.node)
                continue
            key = self._key(other, other.used)
            if best_key is None or key < best_key:
                best, best_key = other, key
        return (st, caveat) if best is None else (best, None)

    def _allowed(self, r: Request, st: ChipState) -> bool:
        return (
            st.eligible
            and st.chip.common_word == r.common_word
            and st.chip.id not in r.excluded_chips
            and (r.pinned_chip is None or r.pinned_chip == st.chip.id)
        )

    def _best_among(
        self, r: Request, shape: SliceShape, indexes: Iterable[int], *, future: bool
    ) -> ChipState | None:
        best: ChipState | None = None
        best_key: ChipKey | None = None
        for index in sorted(set(indexes)):
            st = self.states[index]
            used = st.future if future else st.used
            if self._allowed(r, st) and fits(st.total, used, shape):
                key = self._key(st, used)
                if best_key is None or key < best_key:
                    best, best_key = st, key
        return best

    def _find_now(
        self, r: Request, t: _TypeState, shape: SliceShape
    ) -> ChipState | None:
        if r.pinned_chip is not None:
            pinned = self.by_id[r.pinned_chip]
            return pinned if fits(pinned.total, pinned.used, shape) else None
        key: _CacheKey = (r.common_word, shape, r.excluded_chips)
        mark = self.no_fit.get(key)
        if mark is not None:
            found = self._best_among(r, shape, self.improved[mark:], future=False)
            if found is None:
                self.no_fit[key] = len(self.improved)
            return found
        limit = self.lookahead_chips
        options: list[ChipState] = []
        spares: list[ChipState] = []
        at = self.upcoming_at[r.id] + 1
        upcoming = t.upcoming[at : at + self.policy.lookahead] if limit > 1 else ()
        for bucket in t.buckets.values():
            options.extend(
                bucket.candidates(
                    shape,
                    self.states,
                    r.excluded_chips,
                    limit,
                    spares,
                    # enough of each kind for every upcoming request
                    len(upcoming),
                )
            )
        if not options:
            self.no_fit[key] = len(self.improved)
            return None
        if len(t.buckets) > 1:
            options.sort(key=lambda st: self._key(st, st.used))
            del options[limit:]
        if len(options) == 1:
            return options[0]
        # The upcoming requests may also land where this one does not fit (a
        # vir05 on a chip with 8 GB left): that room counts in the simulation.
        for other in dict.fromkeys(upcoming):
            if other == shape:
                continue
            for bucket in t.buckets.values():
                spares.extend(
                    bucket.candidates(
                        other, self.states, frozenset(), limit, spares, len(upcoming)
                    )
                )
        kept = {st.chip.id for st in options}
        room: dict[str, ChipState] = {}
        for st in spares:
            if st.chip.id not in kept:
                room.setdefault(st.chip.id, st)
        choice = pick_with_lookahead(
            self.strategy,
            [(st.chip.id, st.total, st.used) for st in options],
            shape,
            upcoming,
            spares=[(st.chip.id, st.total, st.used) for st in room.values()],
        )
        return options[choice]

    def _find_freeing(
        self, r: Request, t: _TypeState, shape: SliceShape, *, also_now: bool
    ) -> ChipState | None:
        # Chips where the shape fits once terminating slices and victims are gone.
        # With ``also_now`` (the quota, not the chips, blocked placement) chips
        # that fit already count too.
        if also_now:
            st = self._find_now(r, t, shape)
            if st is not None:
                return st
        if r.pinned_chip is not None:
            pinned = self.by_id[r.pinned_chip]
            return pinned if fits(pinned.total, pinned.future, shape) else None
        key: _CacheKey = (r.common_word, shape, r.excluded_chips)
        mark = self.no_freeing.get(key)
        pool = t.freeing if mark is None else self.improved[mark:]
        found = self._best_among(r, shape, pool, future=True)
        if found is None:
            self.no_freeing[key] = len(self.improved)
        return found

    # -- preemption ------------------------------------------------------------

    def _victims_on(
        self,
        st: ChipState,
        shape: SliceShape,
        queue: str | None,
        quota_need: tuple[int, int],
    ) -> VictimSet | None:
        # Best victim set on one chip over all priorities (see VictimHeap). With
        # a queue, the victims must also give back ``quota_need`` of its quota.
        need: tuple[int, ...] = tuple(shortfall(st.total, st.future, shape))
        if queue is not None:
            need += quota_need
        candidates = []
        for s in st.slices:
            if s.id in self.claimed or not s.preemptable:
                continue
            amounts: tuple[int, ...] = (s.memory, 1, s.ai_core, s.ai_cpu)
            if queue is not None:
                amounts += (s.memory, 1) if s.queue == queue else (0, 0)
            lost = max(0.0, float(self.now_s - s.started_at_s))
            candidates.append(Candidate(s.id, s.priority, lost, amounts))
        return min_victim_set(candidates, need)

    def _bound(self, st: ChipState) -> tuple[int, float] | None:
        return lower_bound(
            [
                (s.priority, max(0.0, self.now_s - s.started_at_s))
                for s in st.slices
                if s.id not in self.claimed and s.preemptable
            ]
        )

    def _find_proposal(
        self, r: Request, t: _TypeState, shape: SliceShape, quota: QuotaState | None
    ) -> tuple[ChipState, VictimSet] | None:
        quota_need = (0, 0) if quota is None else quota.future_need(shape)
        queue = None if quota_need == (0, 0) else r.queue
        if r.pinned_chip is not None:
            st = self.by_id[r.pinned_chip]
            vs = self._victims_on(st, shape, queue, quota_need)
            return (st, vs) if vs is not None and vs.max_priority < r.priority else None

        heap_key: _HeapKey = (shape, queue, quota_need)
        heap = t.heaps.get(heap_key)
        if heap is None:
            heap = t.heaps[heap_key] = VictimHeap()
            # Only slices of the request's queue give its quota back.
            pool = (
                t.victim_chips
                if queue is None
                else t.victim_chips_by_queue.get(queue, [])
            )
        else:
            pool = sorted(heap.dirty)
        bounds = []
        for index in pool:
            st = self.states[index]
            bound = st.bound if st.version == 0 else self._bound(st)
            if bound is not None:
                bounds.append((index, st.chip.id, st.version, bound))
        heap.add_bounds(bounds)
        heap.dirty.clear()

        def search(index: int) -> tuple[str, VictimSet | None]:
            st = self.states[index]
            return st.chip.id, self._victims_on(st, shape, queue, quota_need)

        entry = heap.best(
            r.priority,
            lambda index: self.states[index].version,
            lambda index: self.states[index].chip.id in r.excluded_chips,
            search,
        )
        if entry is None or entry.victims is None:
            return None
        return self.states[entry.chip_index], entry.victims

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

    def _closest(
        self, r: Request, t: _TypeState
    ) -> tuple[str, Resources, Resources] | None:
        # The allowed chip with the most free memory, to show in the reason.
        if r.pinned_chip is not None:
            pinned = self.by_id[r.pinned_chip]
            return (pinned.chip.id, pinned.total, pinned.used)
        best: ChipState | None = None
        for bucket in t.buckets.values():
            st = bucket.least_used(self.states, r.excluded_chips)
            if st is not None and (
                best is None
                or (st.total.memory - st.used.memory, best.chip.id)
                > (best.total.memory - best.used.memory, st.chip.id)
            ):
                best = st
        return None if best is None else (best.chip.id, best.total, best.used)


def _plus(a: Resources, b: Resources) -> Resources:
    return Resources(
        a.memory + b.memory,
        a.slots + b.slots,
        a.ai_core + b.ai_core,
        a.ai_cpu + b.ai_cpu,
    )
