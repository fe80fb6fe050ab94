"""Strategies as a table: each strategy maps to the sort key that ranks chips.

The smallest key wins. Keys share one shape, ``(group, signed used fraction,
chip id)``, so that they compare across chips of different sizes and the
allocator can index chips of one size by memory (see ``allocate``):

- BINPACK follows Volcano's ``CalScore`` (``100 * Usedmem / Devmem``, highest
  first): the fullest chip first. Among chips of one size that is best fit by
  remaining memory.
- SPREAD puts empty chips first (Volcano scores ``Used == 0`` as 100), then
  the least used.

Ties are broken by chip id so the choice is deterministic.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Final

from .types import Strategy

ChipKey = tuple[int, float, str]
KeyFunction = Callable[[str, int, int, int], ChipKey]


def _binpack_key(
    chip_id: str, memory: int, memory_used: int, slots_used: int
) -> ChipKey:
    return (0, -memory_used / memory, chip_id)


def _spread_key(
    chip_id: str, memory: int, memory_used: int, slots_used: int
) -> ChipKey:
    return (0 if slots_used == 0 else 1, memory_used / memory, chip_id)


#: Strategy → key function ``(chip_id, memory, memory_used, slots_used)``.
SORT_KEYS: Final[Mapping[Strategy, KeyFunction]] = MappingProxyType(
    {Strategy.BINPACK: _binpack_key, Strategy.SPREAD: _spread_key}
)

#: Strategy → True when, within a key group, fuller chips rank first. This is the
#: sign of the key's second element; the allocator's memory index relies on it.
FULLER_FIRST: Final[Mapping[Strategy, bool]] = MappingProxyType(
    {Strategy.BINPACK: True, Strategy.SPREAD: False}
)

#: Strategy → True when the allocator may look ahead to pack better (see
#: lookahead.py). Spread wants chips evenly used, not packed, so it never does.
LOOKS_AHEAD: Final[Mapping[Strategy, bool]] = MappingProxyType(
    {Strategy.BINPACK: True, Strategy.SPREAD: False}
)


def chip_key(
    strategy: Strategy, chip_id: str, memory: int, memory_used: int, slots_used: int
) -> ChipKey:
    """Rank a chip under a strategy; the smallest key is the preferred chip.

    Args:
        strategy: The policy's strategy.
        chip_id: The chip's id (the tie-breaker).
        memory: The chip's total memory (MB, positive).
        memory_used: Memory in use or promised (MB).
        slots_used: Slots in use or promised.

    Returns:
        ``(group, signed used fraction, chip_id)``.
    """
    return SORT_KEYS[strategy](chip_id, memory, memory_used, slots_used)
