"""The smallest victim set on one chip: an exact search over subsets.

Sets are ranked by ``(highest victim priority, number of victims, running
seconds lost, sorted victim ids)``; the smallest feasible one wins. A chip holds
at most 8 (inference) or 16 (training) vNPUs, so exact search is cheap:

1. Levels: for each distinct priority ``p`` ascending, allow only candidates
   with priority <= p. Freeing is monotone (evicting more never hurts), so the
   first level whose whole allowed set frees enough is the lowest possible
   highest-victim priority.
2. Sizes: within that level, try subsets of 1, 2, ... candidates, skipping a
   size when even the largest amounts cannot cover a dimension. The first size
   with a feasible subset is the minimum; among those subsets take the least
   time lost.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import NamedTuple

# Beyond this many useful candidates on one chip (hardware allows 16) the search
# is greedy instead of exhaustive, to keep one call bounded.
MAX_EXACT_CANDIDATES = 20


@dataclass(frozen=True, slots=True)
class Candidate:
    """A running slice that may be evicted.

    Attributes:
        id: The running slice's id.
        priority: Its priority.
        lost_seconds: Running time lost if it is evicted now.
        amounts: What evicting it frees, one entry per dimension of ``need``.
    """

    id: str
    priority: int
    lost_seconds: float
    amounts: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class VictimSet:
    """A feasible set of victims on one chip.

    Attributes:
        victims: The victims' ids, sorted.
        max_priority: The highest priority among them.
        lost_seconds: Their total running time lost.
    """

    victims: tuple[str, ...]
    max_priority: int
    lost_seconds: float

    @property
    def rank(self) -> tuple[int, int, float, tuple[str, ...]]:
        """The key that orders victim sets: smaller is better."""
        return (self.max_priority, len(self.victims), self.lost_seconds, self.victims)


def _covers(
    chosen: Sequence[Candidate], need: Sequence[int], dims: Sequence[int]
) -> bool:
    return all(sum(c.amounts[d] for c in chosen) >= need[d] for d in dims)


def _best_of_size(
    useful: Sequence[Candidate], size: int, need: Sequence[int], dims: Sequence[int]
) -> VictimSet | None:
    best: VictimSet | None = None
    for combo in combinations(useful, size):
        if not _covers(combo, need, dims):
            continue
        found = VictimSet(
            victims=tuple(sorted(c.id for c in combo)),
            max_priority=max(c.priority for c in combo),
            lost_seconds=sum(c.lost_seconds for c in combo),
        )
        if best is None or found.rank < best.rank:
            best = found
    return best


def _greedy(
    useful: Sequence[Candidate], need: Sequence[int], dims: Sequence[int]
) -> VictimSet | None:
    # Take the biggest helpers first (by how much of the need they cover), then
    # drop any victim the set no longer needs, lowest-priority ones kept.
    def help_of(c: Candidate) -> float:
        return sum(min(c.amounts[d], need[d]) / need[d] for d in dims)

    chosen: list[Candidate] = []
    for c in sorted(useful, key=lambda c: (-help_of(c), c.lost_seconds, c.id)):
        chosen.append(c)
        if _covers(chosen, need, dims):
            break
    else:
        return None
    for c in sorted(chosen, key=lambda c: (-c.priority, c.lost_seconds, c.id)):
        rest = [x for x in chosen if x is not c]
        if rest and _covers(rest, need, dims):
            chosen = rest
    return VictimSet(
        victims=tuple(sorted(c.id for c in chosen)),
        max_priority=max(c.priority for c in chosen),
        lost_seconds=sum(c.lost_seconds for c in chosen),
    )


def min_victim_set(
    candidates: Sequence[Candidate], need: Sequence[int]
) -> VictimSet | None:
    """Find the smallest set of candidates that frees at least ``need``.

    Args:
        candidates: The slices that may be evicted (all on one chip). Filter
            them by priority first; this function does not know the requester.
        need: Per dimension, the amount that must be freed.

    Returns:
        The minimal set by ``VictimSet.rank``, or None when nothing needs
        freeing or not even evicting every candidate frees enough.
    """
    dims = [d for d, n in enumerate(need) if n > 0]
    if not dims:
        return None
    ordered = sorted(candidates, key=lambda c: (c.priority, c.id))
    for level in sorted({c.priority for c in ordered}):
        allowed = [c for c in ordered if c.priority <= level]
        if not _covers(allowed, need, dims):
            continue
        # A minimal set never holds a candidate that frees nothing needed.
        useful = [c for c in allowed if any(c.amounts[d] > 0 for d in dims)]
        if len(useful) > MAX_EXACT_CANDIDATES:
            return _greedy(useful, need, dims)
        largest = {
            d: sorted((c.amounts[d] for c in useful), reverse=True) for d in dims
        }
        for size in range(1, len(useful) + 1):
            if any(sum(largest[d][:size]) < need[d] for d in dims):
                continue
            best = _best_of_size(useful, size, need, dims)
            if best is not None:
                return best
    return None


Rank = tuple[int, int, float, str]  # (max victim priority, victims, lost s, chip id)


class HeapEntry(NamedTuple):
    """One chip's entry in a ``VictimHeap``: its best victim set, or a bound.

    A plain tuple underneath, so the heap compares entries in C; ``rank``,
    ``version`` and ``index`` together are unique, so ``victims`` is never
    compared.

    Attributes:
        rank: ``(max victim priority, victims, lost seconds, chip id)``; for a
            bound, a rank no victim set of the chip can beat.
        is_bound: True while the chip has not been searched yet. At equal rank
            a searched entry comes first.
        version: The chip's version when the entry was made; stale once the
            chip changes.
        chip_index: The chip's index in the pass.
        victims: The victim set (None for a bound).
    """

    rank: Rank
    is_bound: bool
    version: int
    chip_index: int
    victims: VictimSet | None


def lower_bound(candidates: Sequence[tuple[int, float]]) -> tuple[int, float] | None:
    """A bound on the rank of any victim set drawn from these candidates.

    Args:
        candidates: ``(priority, lost seconds)`` of each candidate.

    Returns:
        ``(lowest priority, least time lost at that priority)``: a set cannot
        have a lower highest priority, nor, with one victim of that priority,
        lose less time. None when there is no candidate.
    """
    if not candidates:
        return None
    low = min(p for p, _ in candidates)
    return (low, min(lost for p, lost in candidates if p == low))


@dataclass(slots=True)
class VictimHeap:
    """The best victim set of every chip for one shape (and quota need).

    Entries are searched over all priorities: if a chip's best set has a highest
    priority below the requester's, it is also the best among the slices that
    requester may evict; if not, the chip has no set for that requester. So
    the top of the heap answers every requester.

    The heap is lazy. A chip first enters with a cheap bound; only when the
    bound reaches the top is the chip searched and its real entry pushed. A
    changed chip is marked dirty and enters again with a fresh bound; its old
    entries are skipped by version.

    Attributes:
        entries: The heap.
        dirty: Indexes of chips changed since their entries were made.
        searched: ``(index, version)`` pairs already searched.
    """

    entries: list[HeapEntry] = field(default_factory=list)
    dirty: set[int] = field(default_factory=set)
    searched: set[tuple[int, int]] = field(default_factory=set)

    def add_bounds(
        self, chips: Iterable[tuple[int, str, int, tuple[int, float]]]
    ) -> None:
        """Add chips that have not been searched yet.

        Args:
            chips: ``(index, chip id, version, bound)`` of each chip, where the
                bound comes from ``lower_bound``.
        """
        new = [
            HeapEntry((bound[0], 1, bound[1], chip_id), True, version, index, None)
            for index, chip_id, version, bound in chips
        ]
        if self.entries:
            for entry in new:
                heapq.heappush(self.entries, entry)
        else:
            self.entries = new
            heapq.heapify(self.entries)

    def best(
        self,
        below: int,
        current_version: Callable[[int], int],
        refused: Callable[[int], bool],
        search: Callable[[int], tuple[str, VictimSet | None]],
    ) -> HeapEntry | None:
        """The best entry whose highest victim priority is below ``below``.

        Args:
            below: The requester's priority.
            current_version: Chip index → its current version.
            refused: Chip index → True when the requester may not use it.
            search: Chip index → ``(chip id, best victim set or None)``.

        Returns:
            The entry, or None. Stale entries found on the way are dropped.
        """
        aside: list[HeapEntry] = []
        found: HeapEntry | None = None
        while self.entries:
            top = self.entries[0]
            version = current_version(top.chip_index)
            if top.version != version:
                heapq.heappop(self.entries)
                continue
            if top.rank[0] >= below:
                break  # every other entry ranks at least as high
            if refused(top.chip_index):
                aside.append(heapq.heappop(self.entries))
                continue
            if top.is_bound:
                heapq.heappop(self.entries)
                if (top.chip_index, version) not in self.searched:
                    self.searched.add((top.chip_index, version))
                    chip_id, victims = search(top.chip_index)
                    if victims is not None:
                        rank = (
                            victims.max_priority,
                            len(victims.victims),
                            victims.lost_seconds,
                            chip_id,
                        )
                        entry = HeapEntry(rank, False, version, top.chip_index, victims)
                        heapq.heappush(self.entries, entry)
                continue
            found = top
            break
        for entry in aside:
            heapq.heappush(self.entries, entry)
        return found
