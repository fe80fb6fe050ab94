"""The collector pause around big lists: nested and overlapping pauses (the
next list is fetched in a thread while the last is written) resume it only
when the last one ends, and never turn on a collector that was off."""

from __future__ import annotations

import gc
import threading

from apps.common.gcpause import gc_paused


def test_overlapping_pauses_resume_the_collector_when_the_last_ends():
    assert gc.isenabled()
    first_in, second_out = threading.Event(), threading.Event()

    def other() -> None:
        with gc_paused():
            first_in.set()
            second_out.wait(5)

    thread = threading.Thread(target=other)
    with gc_paused():
        thread.start()
        assert first_in.wait(5)
        assert not gc.isenabled()
    # this pause ended, the thread's has not
    assert not gc.isenabled()
    second_out.set()
    thread.join(5)
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off():
    gc.disable()
    try:
        with gc_paused(), gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_an_error_in_the_block_still_resumes_it():
    try:
        with gc_paused():
            raise RuntimeError("list failed")
    except RuntimeError:
        pass
    assert gc.isenabled()
