"""Working copy of one queue's quota for one chip type.

Like a chip, a quota has a use ``now`` and a ``future`` use (after terminating
slices and proposal victims are gone, with every promise booked). A placement
now must fit both; a request waiting for capacity being freed or a proposal
only needs the future.
"""

from __future__ import annotations

from .types import QueueQuota, SliceShape

#: ``(unit, used, limit, need)`` of an exhausted quota dimension.
Exhausted = tuple[str, int, int, int]


class QuotaState:
    """Quota use in two dimensions: memory (MB) and slices."""

    __slots__ = ("future", "limits", "now")

    def __init__(self, quota: QueueQuota, freeing: tuple[int, int]) -> None:
        """Start from the snapshot.

        Args:
            quota: The quota from the snapshot.
            freeing: Memory and slices of this queue's terminating slices of
                this chip type.
        """
        self.limits = (quota.memory_limit, quota.slots_limit)
        self.now = (quota.memory_used, quota.slots_used)
        self.future = (
            max(0, quota.memory_used - freeing[0]),
            max(0, quota.slots_used - freeing[1]),
        )

    def exhausted(self, shape: SliceShape, *, future_only: bool) -> Exhausted | None:
        """The first dimension without room for the shape, or None.

        Args:
            shape: The resolved request shape.
            future_only: Check the future use only (for reservations and
                proposals); otherwise both the use now and the future use.

        Returns:
            ``(unit, used, limit, need)`` with unit ``MB`` or ``slices``.
        """
        if future_only:
            used = self.future
        else:
            used = (max(self.now[0], self.future[0]), max(self.now[1], self.future[1]))
        for unit, u, limit, need in (
            ("MB", used[0], self.limits[0], shape.memory),
            ("slices", used[1], self.limits[1], 1),
        ):
            if limit is not None and u + need > limit:
                return (unit, u, limit, need)
        return None

    def future_need(self, shape: SliceShape) -> tuple[int, int]:
        """How much future use (memory, slices) must be freed for the shape."""
        memory_limit, slots_limit = self.limits
        return (
            0
            if memory_limit is None
            else max(0, self.future[0] + shape.memory - memory_limit),
            0 if slots_limit is None else max(0, self.future[1] + 1 - slots_limit),
        )

    def book(self, memory: int, slots: int, *, now: bool) -> None:
        """Add use to the future, and also to ``now`` when ``now`` is True."""
        self.future = (self.future[0] + memory, self.future[1] + slots)
        if now:
            self.now = (self.now[0] + memory, self.now[1] + slots)

    def release(self, memory: int, slots: int) -> None:
        """Remove future use (a victim of this queue will be evicted)."""
        self.future = (max(0, self.future[0] - memory), max(0, self.future[1] - slots))
