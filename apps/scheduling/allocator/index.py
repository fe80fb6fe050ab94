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
from .policy import FULLER_FIRST, SORT_KEYS
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

    def __init__(
        self,
        index: int,
        chip: Chip,
        slices: Sequence[RunningSlice],
        shared: dict[Resources, Resources] | None = None,
    ) -> None:
        """Copy a chip's totals and usage.

        Args:
            index: The chip's index in the pass.
            chip: The chip.
            slices: Its running slices, sorted by id (kept, not copied).
            shared: Equal vectors seen so far, to share rather than keep one
                per chip (thousands of chips, few distinct totals).
        """
        self.index = index
        self.chip = chip
        total = Resources(chip.memory, chip.slots, chip.ai_core, chip.ai_cpu)
        now = Resources(
            chip.memory_used, chip.slots_used, chip.ai_core_used, chip.ai_cpu_used
        )
        if shared is not None:
            total = shared.setdefault(total, total)
            now = shared.setdefault(now, now)
        self.total = total
        self.now = now
        #: Running slices that may become victims: not terminating, sorted by id.
        self.slices: Sequence[RunningSlice]
        self.future: Resources
        for s in slices:
            if s.terminating:
                break
        else:
            # The common case, without a copy: nothing is being freed.
            self.slices = slices
            self.future = now
            slices = ()
        if slices:
            self.slices = tuple(s for s in slices if not s.terminating)
            freed = [0, 0, 0, 0]
            for s in slices:
                if s.terminating:
                    freed[0] += s.memory
                    freed[1] += 1
                    freed[2] += s.ai_core
                    freed[3] += s.ai_cpu
            self.future = Resources(
                *(u - f for u, f in zip(self.now, freed, strict=True))
            )
        self.used = self.now
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
        future, now = self.future, self.now
        return future is not now and (
            future.memory < now.memory
            or future.slots < now.slots
            or future.ai_core < now.ai_core
            or future.ai_cpu < now.ai_cpu
        )


class Bucket:
    """Eligible chips of one type and one size, sorted by the strategy's key."""

    __slots__ = ("entries", "fuller_first", "key", "strategy", "total")

    def __init__(self, total: Resources, strategy: Strategy) -> None:
        self.total = total
        self.strategy = strategy
        self.fuller_first = FULLER_FIRST[strategy]
        self.key = SORT_KEYS[strategy]  # ``policy.chip_key``, looked up once
        self.entries: list[Entry] = []

    def entry_of(self, st: ChipState) -> Entry:
        """The sort entry of a chip under the current usage."""
        used = st.used
        group = self.key("", self.total.memory, used.memory, used.slots)[0]
        signed = -used.memory if self.fuller_first else used.memory
        return (group, signed, st.chip.id, st.index)

    def remove(self, st: ChipState) -> None:
        """Take a chip out of the list (no-op when absent)."""
        if st.entry is not None:
            at = bisect_left(self.entries, st.entry)
            del self.entries[at]
            st.entry = None

    def add(self, st: ChipState, *, sort: bool = True) -> None:
        """Insert a chip at its current key.

        Args:
            st: The chip.
            sort: False only while filling a new bucket: the entry is appended
                and the caller sorts ``entries`` once at the end.
        """
        st.entry = self.entry_of(st)
        if sort:
            insort(self.entries, st.entry)
        else:
            self.entries.append(st.entry)

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

    def walk(
        self,
        shape: SliceShape,
        chips: Sequence[ChipState],
        excluded: frozenset[str],
        limit: int,
        spares_per_option: int = 0,
    ) -> Iterator[tuple[bool, ChipState]]:
        """The fitting chips ``candidates`` takes, in its order.

        ``candidates`` keeps the choices and the spares apart;
        ``ChipSearch._room_for_upcoming`` counts them and stops early.

        Args:
            shape: The resolved request shape.
            chips: All chip states, by index.
            excluded: Chip ids the request refuses.
            limit: How many choices to yield at most.
            spares_per_option: How many spares to yield after each choice.

        Yields:
            ``(True, chip)`` for a choice (the first fitting chip of a memory
            use, best first), then ``(False, chip)`` for each of up to
            ``spares_per_option`` more fitting chips of that memory use.
        """
        # The bucket's totals are the same for every chip, so the fit test
        # against them reduces to the most usage a fitting chip may have in
        # each dimension (``fit.fits`` for template slices, inlined because
        # this is the allocator's innermost loop).
        total = self.total
        whole = shape.whole_card
        max_memory = total.memory - shape.memory
        max_slots = total.slots - 1
        max_core = total.ai_core - shape.ai_core
        max_cpu = total.ai_cpu - shape.ai_cpu
        entries = self.entries
        found = 0
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
                    if whole:
                        if not fits(total, st.used, shape):
                            continue
                    else:
                        memory, slots, ai_core, ai_cpu = st.used
                        if (
                            slots > max_slots
                            or memory > max_memory
                            or ai_core > max_core
                            or ai_cpu > max_cpu
                        ):
                            continue
                    yield taken < 0, st
                    taken += 1
                    if taken == spares_per_option:
                        break
                if taken >= 0:
                    found += 1
                    if found == limit:
                        return
                at = end

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
        per_option = 0 if spares is None else spares_per_option
        for choice, st in self.walk(shape, chips, excluded, limit, per_option):
            if choice:
                out.append(st)
            elif spares is not None:
                spares.append(st)
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
