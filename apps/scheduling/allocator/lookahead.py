"""A small look-ahead for packing strategies: choose among the best few chips.

Greedy "fullest chip first" can strand room that the next requests needed (two
vir02 on one 310P leave 9239 MB, too little for a vir04; one on each chip fits
two vir04 later). Before placing a request, the allocator takes the best few
fitting chips (with distinct usage) and, for each, simulates the next few
requests of the same chip type on those chips and on enough spare chips of
the same usage for every one of them (four empty chips are not one).
The chip after which most of them fit wins; ties keep the strategy's order.

The look-ahead only chooses *which* fitting chip takes the request, never
*whether* it is placed, so the priority order is unaffected.
"""

from __future__ import annotations

from collections.abc import Sequence

from .fit import Resources, booking, fits
from .policy import chip_key
from .types import SliceShape, Strategy

#: States the exact look-ahead may expand per option before it falls back to
#: the strategy's greedy choices (keeps one placement bounded at any scale).
SEARCH_BUDGET = 100

#: ``(chip id, totals, usage)`` of one option, in the strategy's order.
Option = tuple[str, Resources, Resources]


def _add(used: Resources, book: Resources) -> Resources:
    return Resources(
        used.memory + book.memory,
        used.slots + book.slots,
        used.ai_core + book.ai_core,
        used.ai_cpu + book.ai_cpu,
    )


def _greedy(
    strategy: Strategy,
    options: Sequence[Option],
    used: list[Resources],
    upcoming: Sequence[SliceShape],
) -> int:
    placed = 0
    for shape in upcoming:
        pick = -1
        pick_key = None
        for j, (chip_id, total, _) in enumerate(options):
            if fits(total, used[j], shape):
                key = chip_key(
                    strategy, chip_id, total.memory, used[j].memory, used[j].slots
                )
                if pick_key is None or key < pick_key:
                    pick, pick_key = j, key
        if pick >= 0:
            used[pick] = _add(used[pick], booking(shape, options[pick][1]))
            placed += 1
    return placed


def _simulate(
    strategy: Strategy,
    options: Sequence[Option],
    used: list[Resources],
    upcoming: Sequence[SliceShape],
) -> int:
    """How many upcoming requests fit, served in order, with the best chip
    choices: an exact search over those few chips (memoised on their usage,
    identical chips tried once), or the strategy's greedy choices when the
    search would exceed ``SEARCH_BUDGET`` states."""
    totals = [total for _, total, _ in options]
    budget = [SEARCH_BUDGET]
    memo: dict[tuple[int, tuple[Resources, ...]], int] = {}

    def search(i: int, state: tuple[Resources, ...]) -> int:
        if i == len(upcoming):
            return 0
        key = (i, state)
        if key in memo:
            return memo[key]
        budget[0] -= 1
        if budget[0] < 0:
            raise _OverBudget
        shape = upcoming[i]
        best = -1
        tried: set[tuple[Resources, Resources]] = set()
        for k, total in enumerate(totals):
            if (total, state[k]) in tried or not fits(total, state[k], shape):
                continue
            tried.add((total, state[k]))
            after = list(state)
            after[k] = _add(state[k], booking(shape, total))
            best = max(best, 1 + search(i + 1, tuple(after)))
            if best == len(upcoming) - i:
                break  # every remaining one fits: nothing does better
        # In order: a request is skipped only when no chip fits it.
        result = search(i + 1, state) if best < 0 else best
        memo[key] = result
        return result

    try:
        return search(0, tuple(used))
    except _OverBudget:
        return _greedy(strategy, options, list(used), upcoming)


class _OverBudget(Exception):
    """The exact look-ahead grew past its budget."""


def pick_with_lookahead(
    strategy: Strategy,
    options: Sequence[Option],
    shape: SliceShape,
    upcoming: Sequence[SliceShape],
    spares: Sequence[Option] = (),
) -> int:
    """Choose which option takes the request.

    Args:
        strategy: The strategy used to simulate the upcoming requests.
        options: The fitting chips to choose from, best first by the strategy.
        shape: The request being placed (it fits every option).
        upcoming: Shapes of the next requests of the same chip type.
        spares: More chips like the options (the same memory use): never the
            choice, but the upcoming requests may land on them in the
            simulation, as they may in the cluster.

    Returns:
        The index in ``options`` after which most upcoming requests fit; the
        first such index on ties.
    """
    if len(options) < 2 or not upcoming:
        return 0
    best, best_score = 0, -1
    room = [*options, *spares]
    for first, (_, total, used) in enumerate(options):
        trial = [u for _, _, u in room]
        trial[first] = _add(used, booking(shape, total))
        score = _simulate(strategy, room, trial, upcoming)
        if score > best_score:
            best, best_score = first, score
            if score == len(upcoming):
                break  # nothing can do better
    return best
