"""Working state of one pass: chip usage and the memory index that finds chips fast.

Each chip carries two usage vectors:

- ``now``: what is on the chip now (running slices, terminating ones included,
  plus this pass's placements);
- ``future``: what will be on it once terminating slices and proposal victims
  are gone, plus everything promised to requests (placements, proposals and
  requests waiting for capacity being freed).

A request placed now must fit both, so ``used`` is their per-dimension maximum.

Chips of one type and one size (a *bucket*) sit in a list sorted by the
strategy's key, written with integer memory (same order as ``policy.chip_key``
since the size is the same). Chips that fit the memory a request needs form one
contiguous run per key group, found by bisection; only that run is scanned for
the other three dimensions. Chips that cannot take even the smallest shape of
their type leave the list until their usage drops.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Iterator, Sequence

from .fit import Resources, fits
from .policy import FULLER_FIRST, chip_key
from .types import Chip, RunningSlice, SliceShape, Strategy

# (key group, signed used memory, chip id, chip index)
Entry = tuple[int, int, str, int]

# Key groups used by the strategies (see policy.py): BINPACK uses 0 only,
# SPREAD uses 0 for empty chips and 1 for the others.
_GROUPS = (0, 1)


class ChipState:
    """Mutable working copy of one chip."""

    __slots__ = (
        "bound",
        "bucket",
        "chip",
        "eligible",
        "entry",
        "future",
        "index",
        "now",
        "slices",
        "total",
        "used",
        "version",
    )

    def __init__(self, index: int, chip: Chip, slices: Sequence[RunningSlice]) -> None:
        self.index = index
        self.chip = chip
        self.total = Resources(chip.memory, chip.slots, chip.ai_core, chip.ai_cpu)
        self.now = Resources(
            chip.memory_used, chip.slots_used, chip.ai_core_used, chip.ai_cpu_used
        )
        freed = [0, 0, 0, 0]
        for s in slices:
            if s.terminating:
                freed[0] += s.memory
                freed[1] += 1
                freed[2] += s.ai_core
                freed[3] += s.ai_cpu
        self.future = Resources(*(u - f for u, f in zip(self.now, freed, strict=True)))
        self.used = self.now
        #: Running slices that may become victims: not terminating, sorted by id.
        self.slices = tuple(s for s in slices if not s.terminating)
        self.eligible = chip.healthy and not chip.cordoned
        self.version = 0
        self.entry: Entry | None = None
        self.bucket: Bucket | None = None
        #: Lower bound of any victim set's rank here, set by the pass while the
        #: chip is untouched (version 0); see ``preempt.lower_bound``.
        self.bound: tuple[int, float] | None = None

    def set_usage(self, now: Resources, future: Resources) -> None:
        """Replace both usage vectors and bump the version."""
        self.now = now
        self.future = future
        self.used = Resources(*map(max, now, future))
        self.version += 1

    def is_freeing(self) -> bool:
        """True when some dimension will drop (terminating slices, victims)."""
        return any(f < n for f, n in zip(self.future, self.now, strict=True))


class Bucket:
    """Eligible chips of one type and one size, sorted by the strategy's key."""

    __slots__ = ("entries", "fuller_first", "strategy", "total")

    def __init__(self, total: Resources, strategy: Strategy) -> None:
        self.total = total
        self.strategy = strategy
        self.fuller_first = FULLER_FIRST[strategy]
        self.entries: list[Entry] = []

    def entry_of(self, st: ChipState) -> Entry:
        """The sort entry of a chip under the current usage."""
        group = chip_key(
            self.strategy, "", self.total.memory, st.used.memory, st.used.slots
        )[0]
        signed = -st.used.memory if self.fuller_first else st.used.memory
        return (group, signed, st.chip.id, st.index)

    def remove(self, st: ChipState) -> None:
        """Take a chip out of the list (no-op when absent)."""
        if st.entry is not None:
            at = bisect_left(self.entries, st.entry)
            del self.entries[at]
            st.entry = None

    def add(self, st: ChipState) -> None:
        """Insert a chip at its current key."""
        st.entry = self.entry_of(st)
        insort(self.entries, st.entry)

    def _memory_runs(self, memory: int) -> Iterator[tuple[int, int]]:
        # Per key group, the slice of entries whose free memory is >= memory.
        room = self.total.memory - memory  # the most memory a fitting chip may use
        if room < 0:
            return
        for g in _GROUPS:
            if self.fuller_first:
                lo = bisect_left(self.entries, (g, -room))
                hi = bisect_left(self.entries, (g + 1,))
            else:
                lo = bisect_left(self.entries, (g,))
                hi = bisect_left(self.entries, (g, room + 1))
            if lo < hi:
                yield lo, hi

    def candidates(
        self,
        shape: SliceShape,
        chips: Sequence[ChipState],
        excluded: frozenset[str],
        limit: int,
        spares: list[ChipState] | None = None,
        spares_per_option: int = 0,
    ) -> list[ChipState]:
        """The best chips of this bucket for the shape, in strategy order.

        Args:
            shape: The resolved request shape.
            chips: All chip states, by index.
            excluded: Chip ids the request refuses.
            limit: How many chips to return at most.
            spares: Filled with up to ``spares_per_option`` more fitting chips
                of each returned chip's memory use: not choices of their own,
                but room the look-ahead must count (four empty chips are not
                one).

        Returns:
            Up to ``limit`` chips where the shape fits, each with a different
            memory use (chips with equal use are nearly interchangeable, so only
            the first of them is taken), best first.
        """
        out: list[ChipState] = []
        entries = self.entries
        for lo, hi in self._memory_runs(shape.memory):
            at = lo
            while at < hi:
                group, signed = entries[at][0], entries[at][1]
                end = bisect_left(entries, (group, signed + 1), at, hi)
                taken = -1
                for k in range(at, end):
                    st = chips[entries[k][3]]
                    if excluded and st.chip.id in excluded:
                        continue
                    if not fits(st.total, st.used, shape):
                        continue
                    if taken < 0:
                        out.append(st)
                        taken = 0
                        if spares is None or not spares_per_option:
                            break
                    elif spares is not None:  # taken >= 0 only when spares are wanted
                        spares.append(st)
                        taken += 1
                        if taken == spares_per_option:
                            break
                if len(out) == limit:
                    return out
                at = end
        return out

    def least_used(
        self, chips: Sequence[ChipState], excluded: frozenset[str]
    ) -> ChipState | None:
        """The chip with the least memory in use (for waiting reasons).

        Within each key group the least used chip sits at one end of the run,
        so this walks inward from that end only past excluded chips.
        """
        best: ChipState | None = None
        entries = self.entries
        for g in _GROUPS:
            lo = bisect_left(entries, (g,))
            hi = bisect_left(entries, (g + 1,))
            order = range(hi - 1, lo - 1, -1) if self.fuller_first else range(lo, hi)
            for at in order:
                st = chips[entries[at][3]]
                if excluded and st.chip.id in excluded:
                    continue
                if best is None or st.used.memory < best.used.memory:
                    best = st
                break
        return best
