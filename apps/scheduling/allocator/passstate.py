"""The mutable state of one ``allocate`` pass, and the indexes kept over it.

``PassState`` holds every chip (by id, by node and type, by type), the memory
buckets and preemption indexes per chip type, the queues' quota use, and what
the pass has decided so far. ``_touch`` is the one way a chip's usage changes,
so the indexes never go stale. The searches (``chipsearch``, ``proposals``)
and the serving loop (``allocate``) build on it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from .fit import Resources, fits
from .index import Bucket, ChipState
from .policy import LOOKS_AHEAD, ChipKey, chip_key
from .preempt import VictimHeap
from .quota import QuotaState
from .shapes import all_shapes
from .types import (
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
)

#: How many of the best chips (with distinct memory use) the look-ahead weighs.
LOOKAHEAD_CHIPS = 3

# Victim heaps are kept per (shape, queue, quota need); queue None means the
# quota does not bind and only the chip has to make room.
HeapKey = tuple[SliceShape, str | None, tuple[int, int]]


@dataclass(slots=True)
class TypeState:
    """Per chip type: rules, shapes, memory buckets and preemption indexes."""

    rules: ChipTypeRules
    shapes: tuple[SliceShape, ...]
    buckets: dict[Resources, Bucket] = field(default_factory=dict)
    freeing: set[int] = field(default_factory=set)
    victim_chips: list[int] = field(default_factory=list)
    victim_chips_by_queue: dict[str, list[int]] = field(default_factory=dict)
    heaps: dict[HeapKey, VictimHeap] = field(default_factory=dict)
    #: (totals, usage) → whether such a chip takes some shape of the type.
    alive: dict[tuple[Resources, Resources], bool] = field(default_factory=dict)
    upcoming: list[SliceShape] = field(default_factory=list)
    #: Per entry of ``upcoming``, its shape's number in ``kinds``.
    upcoming_kinds: list[int] = field(default_factory=list)
    #: The distinct shapes of ``upcoming``, numbered in order of appearance.
    kinds: dict[SliceShape, int] = field(default_factory=dict)
    eligible: int = 0
    cordoned: int = 0
    unhealthy: int = 0


# Negative caches: (type, shape, exclusions) → position in ``PassState.improved``
# when no chip fitted. Usage only grows during a pass, except on chips where a
# proposal lowered the future use; those are logged in ``improved``, so a cached
# "nothing fits" needs rechecking on those chips only.
CacheKey = tuple[str, SliceShape, frozenset[str]]


class PassState:
    """Mutable state of one ``allocate`` call: chips, indexes, quotas, outcomes."""

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
        self.no_fit: dict[CacheKey, int] = {}
        self.no_freeing: dict[CacheKey, int] = {}
        self.shapes: dict[str, SliceShape | str] = {}
        self.upcoming_at: dict[str, int] = {}
        self.lookahead_chips = (
            LOOKAHEAD_CHIPS
            if policy.lookahead > 0 and LOOKS_AHEAD[policy.strategy]
            else 1
        )

        self.types = {r.common_word: TypeState(r, all_shapes(r)) for r in rules}
        self._build_chips(chips, running)
        self.quotas = self._quota_states(quotas, running)

    def _build_chips(
        self, chips: Sequence[Chip], running: Sequence[RunningSlice]
    ) -> None:
        """Each chip's state, the lists by node and type, and the indexes."""
        # Building the pass allocates a few objects per chip and per slice; at
        # thousands of chips the garbage collector's passes over them cost as
        # much as the work, so the loops below avoid throwaway objects
        # (``setdefault``'s default list, generator expressions) and share the
        # equal totals and usage vectors of chips.
        slices_on: dict[str, list[RunningSlice]] = {}
        for s in running:
            on_chip = slices_on.get(s.chip_id)
            if on_chip is None:
                slices_on[s.chip_id] = [s]
            else:
                on_chip.append(s)
        self.states: list[ChipState] = []
        self.by_id: dict[str, ChipState] = {}
        # Every chip (eligible or not) by (node, type) and by type: where the
        # scheduler picks the chip, any of them may be taken.
        self.on_node: dict[tuple[str, str], list[ChipState]] = {}
        self.of_type: dict[str, list[ChipState]] = {}
        shared: dict[Resources, Resources] = {}
        for index, chip in enumerate(chips):
            st = ChipState(index, chip, slices_on.get(chip.id, ()), shared)
            if st.slices:
                st.bound = self._bound(st)
            self.states.append(st)
            self.by_id[chip.id] = st
            node_key = (chip.node, chip.common_word)
            same_node = self.on_node.get(node_key)
            if same_node is None:
                self.on_node[node_key] = [st]
            else:
                same_node.append(st)
            same_type = self.of_type.get(chip.common_word)
            if same_type is None:
                self.of_type[chip.common_word] = [st]
            else:
                same_type.append(st)
            self._index_chip(st, self.types[chip.common_word])
        # The buckets were filled unsorted (one sort beats 8,000 insertions).
        for t in self.types.values():
            for bucket in t.buckets.values():
                bucket.entries.sort()

    def _quota_states(
        self, quotas: Sequence[QueueQuota], running: Sequence[RunningSlice]
    ) -> dict[tuple[str, str], QuotaState]:
        """Each queue's quota per chip type, with what its terminating slices free."""
        freeing: dict[tuple[str, str], tuple[int, int]] = {}
        for s in running:
            if s.terminating:
                key = (s.queue, self.by_id[s.chip_id].chip.common_word)
                memory, slots = freeing.get(key, (0, 0))
                freeing[key] = (memory + s.memory, slots + 1)
        return {
            (q.queue, q.common_word): QuotaState(
                q, freeing.get((q.queue, q.common_word), (0, 0))
            )
            for q in quotas
        }

    # -- indexes ---------------------------------------------------------------

    def _index_chip(self, st: ChipState, t: TypeState) -> None:
        # Only while the pass is built: ``__init__`` sorts the buckets after.
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
            bucket.add(st, sort=False)
        if st.is_freeing():
            t.freeing.add(st.index)
        if st.slices:
            t.victim_chips.append(st.index)
            # Each queue's list gets each chip once, in chip order, whatever
            # order the queues come in.
            by_queue = t.victim_chips_by_queue
            for queue in {s.queue for s in st.slices}:
                chips_of_queue = by_queue.get(queue)
                if chips_of_queue is None:
                    by_queue[queue] = [st.index]
                else:
                    chips_of_queue.append(st.index)

    def _alive(self, st: ChipState, t: TypeState) -> bool:
        # A chip that cannot take even one shape of its type leaves the index.
        # Thousands of chips share a few usages: the answer is kept per pair.
        pair = (st.total, st.used)
        alive = t.alive.get(pair)
        if alive is None:
            alive = t.alive[pair] = any(
                fits(st.total, st.used, shape) for shape in t.shapes
            )
        return alive

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

    def _allowed(self, r: Request, st: ChipState) -> bool:
        return (
            st.eligible
            and st.chip.common_word == r.common_word
            and st.chip.id not in r.excluded_chips
            and (r.pinned_chip is None or r.pinned_chip == st.chip.id)
        )

    def _bound(self, st: ChipState) -> tuple[int, float] | None:
        # ``preempt.lower_bound`` of the chip's candidates, in one pass and
        # without a list of pairs: run for every chip when the pass starts.
        claimed, now_s = self.claimed, self.now_s
        low: int | None = None
        least = 0.0
        for s in st.slices:
            if s.preemptable and s.id not in claimed:
                lost = max(0.0, now_s - s.started_at_s)
                if low is None or s.priority < low:
                    low, least = s.priority, lost
                elif s.priority == low and lost < least:
                    least = lost
        return None if low is None else (low, least)
