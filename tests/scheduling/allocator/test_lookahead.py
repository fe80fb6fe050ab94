"""The look-ahead that chooses among the best few fitting chips."""

from __future__ import annotations


def test_the_lookahead_counts_the_best_chip_choices_not_the_greedy_ones() -> None:
    """Binpack's own choices would put the vir02 on the fuller chip and leave
    no room for the second vir04; the exact look-ahead finds that all three
    fit, served in order."""
    from apps.scheduling.allocator.fit import Resources
    from apps.scheduling.allocator.lookahead import _greedy, _simulate
    from apps.scheduling.allocator.types import SliceShape, Strategy

    total = Resources(21527, 7, 8, 7)
    options = [
        ("fuller", total, Resources(9239, 1, 2, 2)),
        ("empty", total, Resources(0, 0, 0, 0)),
    ]
    vir02, vir04 = SliceShape("vir02", 6144, 2, 2), SliceShape("vir04", 12288, 4, 4)
    upcoming = [vir02, vir04, vir04]
    used = [u for _, _, u in options]

    assert _greedy(Strategy.BINPACK, options, list(used), upcoming) == 2
    assert _simulate(Strategy.BINPACK, options, list(used), upcoming) == 3
