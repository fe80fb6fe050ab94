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
from .preempt import VictimHeap, lower_bound
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
    upcoming: list[SliceShape] = field(default_factory=list)
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

    # -- indexes ---------------------------------------------------------------

    def _index_chip(self, st: ChipState, t: TypeState) -> None:
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
    def _alive(st: ChipState, t: TypeState) -> bool:
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

    def _allowed(self, r: Request, st: ChipState) -> bool:
        return (
            st.eligible
            and st.chip.common_word == r.common_word
            and st.chip.id not in r.excluded_chips
            and (r.pinned_chip is None or r.pinned_chip == st.chip.id)
        )

    def _bound(self, st: ChipState) -> tuple[int, float] | None:
        return lower_bound(
            [
                (s.priority, max(0.0, self.now_s - s.started_at_s))
                for s in st.slices
                if s.id not in self.claimed and s.preemptable
            ]
        )
