"""Pausing Python's cyclic garbage collector around big lists.

A full list of 30,000 pods is millions of small dicts and lists, all alive
until the list is written. The collector is set off by allocations, so it ran
again and again while they were made and written, each time walking every
one of them: two thirds of parsing a pod list went to it, and at ten times
the reference scale more still. JSON makes no reference cycles (reference
counting frees all of it), so the collector has nothing to find there; it is
paused for the list and resumes when the last pause ends.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

_lock = threading.Lock()
_depth = 0
_was_enabled = False


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic collector for the block; nests, also across threads.

    The collector is process-wide, so the pauses are counted: it resumes
    (if it ran before the first) when the last one ends.
    """
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                gc.enable()
