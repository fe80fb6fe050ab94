"""Go's ``sort.Slice``, step for step, so equal keys land where Go puts them.

HAMi, Volcano and the device plugin sort a chip type's templates with
``sort.Slice`` by memory. That is Go's pattern-defeating quicksort (Go 1.19 and
later; every release of those components is built with one). It is not stable,
but it is deterministic: its only "randomness" is an xorshift seeded with the
slice's length. Up to 12 elements it is a plain insertion sort, which keeps
equal keys in their input order; above that, equal keys can move. Reproducing
it (rather than a stable sort) keeps the portal's choice equal to the
scheduler's for any number of templates. ``tests/inventory/hami/
test_gosort.py`` checks it against orders recorded from Go itself.

Translated from ``src/sort/zsortfunc.go`` and ``sort.go`` (BSD licence).
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["GO_INSERTION_SORT_MAX", "go_sort_slice_order"]

#: Up to this many elements ``sort.Slice`` is an insertion sort (stable).
GO_INSERTION_SORT_MAX = 12

_MASK64 = (1 << 64) - 1


class _Sorter:
    """The ``lessSwap`` of Go's sort over a permutation of indices into ``keys``."""

    def __init__(self, keys: Sequence[int]) -> None:
        self.keys = keys
        self.order = list(range(len(keys)))

    def less(self, i: int, j: int) -> bool:
        return self.keys[self.order[i]] < self.keys[self.order[j]]

    def swap(self, i: int, j: int) -> None:
        self.order[i], self.order[j] = self.order[j], self.order[i]

    def insertion_sort(self, a: int, b: int) -> None:
        for i in range(a + 1, b):
            j = i
            while j > a and self.less(j, j - 1):
                self.swap(j, j - 1)
                j -= 1

    def sift_down(self, lo: int, hi: int, first: int) -> None:
        root = lo
        while True:
            child = 2 * root + 1
            if child >= hi:
                return
            if child + 1 < hi and self.less(first + child, first + child + 1):
                child += 1
            if not self.less(first + root, first + child):
                return
            self.swap(first + root, first + child)
            root = child

    def heap_sort(self, a: int, b: int) -> None:
        first, lo, hi = a, 0, b - a
        for i in range((hi - 1) // 2, -1, -1):
            self.sift_down(i, hi, first)
        for i in range(hi - 1, -1, -1):
            self.swap(first, first + i)
            self.sift_down(lo, i, first)

    def pdqsort(self, a: int, b: int, limit: int) -> None:
        was_balanced = True
        was_partitioned = True
        while True:
            length = b - a
            if length <= GO_INSERTION_SORT_MAX:
                self.insertion_sort(a, b)
                return
            if limit == 0:
                self.heap_sort(a, b)
                return
            if not was_balanced:
                self.break_patterns(a, b)
                limit -= 1
            pivot, hint = self.choose_pivot(a, b)
            if hint == _DECREASING:
                self.reverse_range(a, b)
                pivot = (b - 1) - (pivot - a)
                hint = _INCREASING
            if (
                was_balanced
                and was_partitioned
                and hint == _INCREASING
                and self.partial_insertion_sort(a, b)
            ):
                return
            if a > 0 and not self.less(a - 1, pivot):
                a = self.partition_equal(a, b, pivot)
                continue
            mid, was_partitioned = self.partition(a, b, pivot)
            left, right = mid - a, b - mid
            threshold = length // 8
            if left < right:
                was_balanced = left >= threshold
                self.pdqsort(a, mid, limit)
                a = mid + 1
            else:
                was_balanced = right >= threshold
                self.pdqsort(mid + 1, b, limit)
                b = mid

    def partition(self, a: int, b: int, pivot: int) -> tuple[int, bool]:
        self.swap(a, pivot)
        i, j = a + 1, b - 1
        while i <= j and self.less(i, a):
            i += 1
        while i <= j and not self.less(j, a):
            j -= 1
        if i > j:
            self.swap(j, a)
            return j, True
        self.swap(i, j)
        i, j = i + 1, j - 1
        while True:
            while i <= j and self.less(i, a):
                i += 1
            while i <= j and not self.less(j, a):
                j -= 1
            if i > j:
                break
            self.swap(i, j)
            i, j = i + 1, j - 1
        self.swap(j, a)
        return j, False

    def partition_equal(self, a: int, b: int, pivot: int) -> int:
        self.swap(a, pivot)
        i, j = a + 1, b - 1
        while True:
            while i <= j and not self.less(a, i):
                i += 1
            while i <= j and self.less(a, j):
                j -= 1
            if i > j:
                return i
            self.swap(i, j)
            i, j = i + 1, j - 1

    def partial_insertion_sort(self, a: int, b: int) -> bool:
        max_steps, shortest_shifting = 5, 50
        i = a + 1
        for _ in range(max_steps):
            while i < b and not self.less(i, i - 1):
                i += 1
            if i == b:
                return True
            if b - a < shortest_shifting:
                return False
            self.swap(i, i - 1)
            if i - a >= 2:
                for j in range(i - 1, 0, -1):
                    if not self.less(j, j - 1):
                        break
                    self.swap(j, j - 1)
            if b - i >= 2:
                for j in range(i + 1, b):
                    if not self.less(j, j - 1):
                        break
                    self.swap(j, j - 1)
        return False

    def break_patterns(self, a: int, b: int) -> None:
        length = b - a
        if length < 8:
            return
        random = length
        modulus = 1 << length.bit_length()
        for idx in range(a + (length // 4) * 2 - 1, a + (length // 4) * 2 + 2):
            random ^= (random << 13) & _MASK64
            random ^= random >> 7
            random ^= (random << 17) & _MASK64
            other = random & (modulus - 1)
            if other >= length:
                other -= length
            self.swap(idx, a + other)

    def choose_pivot(self, a: int, b: int) -> tuple[int, int]:
        shortest_ninther, max_swaps = 50, 4 * 3
        length = b - a
        swaps = [0]
        i = a + length // 4 * 1
        j = a + length // 4 * 2
        k = a + length // 4 * 3
        if length >= 8:
            if length >= shortest_ninther:
                i = self.median(i - 1, i, i + 1, swaps)
                j = self.median(j - 1, j, j + 1, swaps)
                k = self.median(k - 1, k, k + 1, swaps)
            j = self.median(i, j, k, swaps)
        if swaps[0] == 0:
            return j, _INCREASING
        if swaps[0] == max_swaps:
            return j, _DECREASING
        return j, _UNKNOWN

    def median(self, a: int, b: int, c: int, swaps: list[int]) -> int:
        a, b = self.order2(a, b, swaps)
        b, c = self.order2(b, c, swaps)
        a, b = self.order2(a, b, swaps)
        return b

    def order2(self, a: int, b: int, swaps: list[int]) -> tuple[int, int]:
        if self.less(b, a):
            swaps[0] += 1
            return b, a
        return a, b

    def reverse_range(self, a: int, b: int) -> None:
        i, j = a, b - 1
        while i < j:
            self.swap(i, j)
            i, j = i + 1, j - 1


_UNKNOWN, _INCREASING, _DECREASING = 0, 1, 2


def go_sort_slice_order(keys: Sequence[int]) -> list[int]:
    """Return where Go's ``sort.Slice`` by ``keys[i] < keys[j]`` puts each element.

    Args:
        keys: The sort keys, in input (file) order.

    Returns:
        The input indices in the order Go leaves them: ``[keys[i] for i in
        result]`` is ascending, and equal keys are ordered as Go orders them
        (input order when there are at most ``GO_INSERTION_SORT_MAX`` keys).
    """
    sorter = _Sorter(keys)
    sorter.pdqsort(0, len(keys), len(keys).bit_length())
    return sorter.order
