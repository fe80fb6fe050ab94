"""Preemption in a pass: the chip and smallest victim set that make room.

``ProposalSearch`` adds to the pass state the search for a proposal: per
chip, the best set of strictly lower-priority victims (``_victims_on``), and
over the chips of a type a heap of lower bounds (``preempt.VictimHeap``) so
that only the chips that could beat the best found so far are searched.
"""

from __future__ import annotations

from .fit import shortfall
from .index import ChipState
from .passstate import HeapKey, PassState, TypeState
from .preempt import Candidate, VictimHeap, VictimSet, min_victim_set
from .quota import QuotaState
from .types import Request, SliceShape


class ProposalSearch(PassState):
    """The preemption searches of a pass (see the module docstring)."""

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

    def _standing(
        self, r: Request, shape: SliceShape, quota: QuotaState | None
    ) -> tuple[ChipState, VictimSet] | None:
        """The request's standing proposal if it still works in this pass
        (``types.StandingProposal``); None: search afresh."""
        standing = r.standing
        if standing is None or standing.chip_id not in self.by_id:
            return None
        st = self.by_id[standing.chip_id]
        if not st.eligible or st.chip.id in r.excluded_chips:
            return None
        chosen = [s for s in st.slices if (s.namespace, s.pod) in standing.victims]
        if {(s.namespace, s.pod) for s in chosen} != standing.victims:
            return None  # a victim left the chip
        if any(s.id in self.claimed or not s.preemptable for s in chosen):
            return None
        if any(s.priority >= r.priority for s in chosen):
            return None
        freed = [(s.memory, 1, s.ai_core, s.ai_cpu) for s in chosen]
        need = shortfall(st.total, st.future, shape)
        if any(sum(f[d] for f in freed) < need[d] for d in range(len(need))):
            return None  # a request served before it took room there
        if quota is not None:
            memory_need, slots_need = quota.future_need(shape)
            mine = [s for s in chosen if s.queue == r.queue]
            if sum(s.memory for s in mine) < memory_need or len(mine) < slots_need:
                return None
        lost = sum(max(0.0, float(self.now_s - s.started_at_s)) for s in chosen)
        victims = VictimSet(
            tuple(sorted(s.id for s in chosen)), max(s.priority for s in chosen), lost
        )
        return st, victims

    def _find_proposal(
        self, r: Request, t: TypeState, shape: SliceShape, quota: QuotaState | None
    ) -> tuple[ChipState, VictimSet] | None:
        standing = self._standing(r, shape, quota)
        if standing is not None:
            return standing
        quota_need = (0, 0) if quota is None else quota.future_need(shape)
        queue = None if quota_need == (0, 0) else r.queue
        if r.pinned_chip is not None:
            st = self.by_id[r.pinned_chip]
            vs = self._victims_on(st, shape, queue, quota_need)
            return (st, vs) if vs is not None and vs.max_priority < r.priority else None

        heap_key: HeapKey = (shape, queue, quota_need)
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
