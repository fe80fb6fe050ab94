"""Where a request fits in a pass: now, once room is freed, and with guarantees.

``ChipSearch`` adds to the pass state the searches for a chip: whether any chip
may take the request at all (``_eligibility_problem``), the best chip that fits
now (``_find_now``, with binpack's look-ahead) or once terminating slices and
victims are gone (``_find_freeing``), what the scheduler might do instead when
it picks the chip itself (``_caveat``, ``_guaranteed``), and the closest miss
to name in a waiting reason (``_closest``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from apps.inventory.hami.messages import N_

from . import reasons
from .fit import Resources, booking, fits, scheduler_fits
from .index import ChipState
from .lookahead import SEARCH_BUDGET, pick_with_lookahead
from .passstate import CacheKey, PassState, TypeState
from .policy import ChipKey
from .types import Request, SliceShape


class ChipSearch(PassState):
    """The chip searches of a pass (see the module docstring)."""

    def _eligibility_problem(self, r: Request, t: TypeState) -> str | None:
        if r.pinned_chip is not None:
            st = self.by_id.get(r.pinned_chip)
            why = None
            if st is None:
                why = N_("is unknown")
            elif st.chip.common_word != r.common_word:
                why = N_(
                    "is %(chip_type)s, not %(wanted)s",
                    chip_type=st.chip.common_word,
                    wanted=r.common_word,
                )
            elif not st.chip.healthy:
                why = N_("is unhealthy")
            elif st.chip.cordoned:
                why = N_("is cordoned")
            elif r.pinned_chip in r.excluded_chips:
                why = N_("is also excluded by the request")
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
                why = N_("is unhealthy")
            elif other.chip.cordoned:
                why = N_("is cordoned")
            elif other.chip.id in r.excluded_chips:
                why = N_("the request excludes")
            elif not fits(other.total, used, shape):
                free = other.total.ai_cpu - used.ai_cpu
                why = N_(
                    "has %(free)s AICPU free, not %(need)s",
                    free=free,
                    need=booking(shape, other.total).ai_cpu,
                )
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
        self, r: Request, t: TypeState, shape: SliceShape
    ) -> ChipState | None:
        if r.pinned_chip is not None:
            pinned = self.by_id[r.pinned_chip]
            return pinned if fits(pinned.total, pinned.used, shape) else None
        key: CacheKey = (r.common_word, shape, r.excluded_chips)
        mark = self.no_fit.get(key)
        if mark is not None:
            found = self._best_among(r, shape, self.improved[mark:], future=False)
            if found is None:
                self.no_fit[key] = len(self.improved)
            return found
        limit = self.lookahead_chips
        options: list[ChipState] = []
        at = self.upcoming_at[r.id] + 1
        upcoming = t.upcoming[at : at + self.policy.lookahead] if limit > 1 else ()
        for bucket in t.buckets.values():
            options.extend(
                bucket.candidates(shape, self.states, r.excluded_chips, limit)
            )
        if not options:
            self.no_fit[key] = len(self.improved)
            return None
        if len(t.buckets) > 1:
            options.sort(key=lambda st: self._key(st, st.used))
            del options[limit:]
        if len(options) == 1:
            return options[0]
        if not upcoming or self._room_for_upcoming(r, t, options, at - 1, upcoming):
            return options[0]
        # Only now gather the spares: the same walk again, which returns the
        # same options (spares never change which chips ``candidates`` picks).
        spares: list[ChipState] = []
        for bucket in t.buckets.values():
            bucket.candidates(
                shape,
                self.states,
                r.excluded_chips,
                limit,
                spares,
                # enough of each kind for every upcoming request
                len(upcoming),
            )
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

    def _room_for_upcoming(
        self,
        r: Request,
        t: TypeState,
        options: list[ChipState],
        at: int,
        upcoming: Sequence[SliceShape],
    ) -> bool:
        """Tell, without building the look-ahead's room, that it picks option 0.

        The look-ahead first simulates the request on ``options[0]``; its exact
        search starts with a dive that puts each upcoming request on the first
        chip of the room it fits. Before upcoming request ``i`` that dive has
        changed at most ``i`` chips besides ``options[0]``, so if more than
        ``i`` other chips of the room fit request ``i`` as they are, one of
        them still does: the dive places every upcoming request, the search
        scores them all (within its budget while there are at most
        ``SEARCH_BUDGET`` of them) and option 0 wins outright. This counts
        those chips with the same walks that gather the room (see
        ``_find_now``), stopping as soon as there are enough: on a cluster
        with room to spare that is a few chips per shape, where gathering the
        room and simulating took a hundred.

        Args:
            r: The request.
            t: Its chip type.
            options: The look-ahead's options, best first.
            at: The request's position in ``t.upcoming``.
            upcoming: ``t.upcoming`` after it, as far as the look-ahead sees.

        Returns:
            True when option 0 is the look-ahead's choice for sure; False when
            only the look-ahead itself can tell.
        """
        if len(upcoming) > SEARCH_BUDGET:
            return False
        kinds = t.upcoming_kinds
        own = kinds[at]
        # Per shape (by number), the most chips any of its requests needs:
        # the last one's position + 1.
        need: dict[int, int] = {}
        for i in range(len(upcoming)):
            need[kinds[at + 1 + i]] = i + 1
        first = options[0]
        limit = self.lookahead_chips
        for kind, enough in need.items():
            other = upcoming[enough - 1]
            found = 0
            # The room holds, for the request's own shape, the options kept
            # and the spares of every choice; for the other shapes, everything
            # their walks take, without the request's exclusions.
            excluded = r.excluded_chips if kind == own else frozenset()
            for bucket in t.buckets.values():
                for choice, st in bucket.walk(
                    other, self.states, excluded, limit, len(upcoming)
                ):
                    if st is first or (kind == own and choice and st not in options):
                        continue
                    found += 1
                    if found == enough:
                        break
                if found == enough:
                    break
            if found < enough:
                return False
        return True

    def _find_freeing(
        self, r: Request, t: TypeState, shape: SliceShape, *, also_now: bool
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
        key: CacheKey = (r.common_word, shape, r.excluded_chips)
        mark = self.no_freeing.get(key)
        pool = t.freeing if mark is None else self.improved[mark:]
        found = self._best_among(r, shape, pool, future=True)
        if found is None:
            self.no_freeing[key] = len(self.improved)
        return found

    def _closest(
        self, r: Request, t: TypeState
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
