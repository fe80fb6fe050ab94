"""Pausing Python's cyclic garbage collector around big lists.

A full list of 30,000 pods is millions of small dicts and lists, all alive
until the list is written. The collector is set off by allocations, so it ran
again and again while they were made and written, each time walking every
one of them: two thirds of parsing a pod list went to it, and at ten times
the reference scale more still. JSON makes no reference cycles (reference
counting frees all of it), so the collector has nothing to find there; it is
paused for the list and resumes when the last pause ends.

Watch streams cannot pause it: they run for minutes, and code around them
(Django, the client) does make cycles. While they run the collector is
instead kept off the process's long-lived objects and run less often
(``collector_for_streams``).
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

_lock = threading.Lock()
_depth = 0
_was_enabled = False

# A young collection per this many new container objects while streams run,
# not CPython's 700: one parsed pod event makes about a hundred, so the
# default ran one every few events, and each promoted the queue's events to
# be walked again by the older generations.
STREAM_YOUNG_THRESHOLD = 10_000
_stream_depth = 0
_thresholds: tuple[int, int, int] = (700, 10, 10)


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


@contextlib.contextmanager
def collector_for_streams() -> Iterator[None]:
    """Tune the collector for a process that follows watch streams; nests.

    Everything alive at the start (Django, the models, the client: hundreds
    of thousands of objects that live as long as the worker) is frozen out of
    the collector's walks, and young collections run less often. A backlog
    of 20,000 pod events spent a quarter of its CPU in the collector, most of
    it walking those objects in full collections.

    A frozen object that becomes garbage in a cycle waits for the unfreeze,
    so every run's end unfreezes: the last one's for good, with the
    thresholds restored; an earlier one's (runs of other clusters overlap in
    a threaded worker, and may never all end at once) to collect and freeze
    again. Nothing dead stays frozen longer than one run. No collection
    before the first freeze: on a big heap it delayed the watches' start by
    a fifth of a second (a 20,000-event backlog: 12,200/s against 11,000/s).
    """
    global _stream_depth, _thresholds
    with _lock:
        if _stream_depth == 0:
            _thresholds = gc.get_threshold()
            gc.freeze()
            gc.set_threshold(STREAM_YOUNG_THRESHOLD, *_thresholds[1:])
        _stream_depth += 1
    try:
        yield
    finally:
        with _lock:
            _stream_depth -= 1
            gc.unfreeze()
            if _stream_depth == 0:
                gc.set_threshold(*_thresholds)
            else:
                gc.collect()
                gc.freeze()
