"""The collector pause around big lists: nested and overlapping pauses (the
next list is fetched in a thread while the last is written) resume it only
when the last one ends, and never turn on a collector that was off. And the
collector's tuning while watch streams run: long-lived objects frozen out of
its walks, fewer young collections, all undone when the last stream ends."""

from __future__ import annotations

import gc
import threading
import weakref

from apps.common.gcpause import (
    STREAM_YOUNG_THRESHOLD,
    collector_for_streams,
    gc_paused,
)


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


def test_streams_freeze_what_lives_and_collect_less_often_until_the_last_ends():
    before = gc.get_threshold()
    assert gc.get_freeze_count() == 0
    inside, release = threading.Event(), threading.Event()

    def another_cluster() -> None:
        with collector_for_streams():
            inside.set()
            release.wait(5)

    thread = threading.Thread(target=another_cluster)
    with collector_for_streams():
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold() == (STREAM_YOUNG_THRESHOLD, *before[1:])
        thread.start()
        assert inside.wait(5)
    # this run ended, the other cluster's has not
    assert gc.get_freeze_count() > 0
    assert gc.get_threshold()[0] == STREAM_YOUNG_THRESHOLD
    release.set()
    thread.join(5)
    assert gc.get_freeze_count() == 0
    assert gc.get_threshold() == before


def test_objects_that_die_while_frozen_are_collected_afterwards():
    class Cycle:
        pass

    old = Cycle()
    old.me = old  # garbage only the collector can free
    alive = weakref.ref(old)
    with collector_for_streams():
        del old
        gc.collect()
        assert alive() is not None  # frozen: out of the collector's sight
    gc.collect()
    assert alive() is None


def test_an_error_in_a_stream_still_restores_the_collector():
    before = gc.get_threshold()
    try:
        with collector_for_streams():
            raise RuntimeError("stream failed")
    except RuntimeError:
        pass
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_what_died_frozen_is_collected_when_any_run_ends_though_others_go_on():
    """Runs of other clusters overlap in a threaded worker and may never all
    end at once: each run's end collects what died frozen and freezes again."""

    class Cycle:
        pass

    old = Cycle()
    old.me = old
    alive = weakref.ref(old)
    inside, release = threading.Event(), threading.Event()

    def long_run() -> None:
        with collector_for_streams():
            inside.set()
            release.wait(5)

    thread = threading.Thread(target=long_run)
    thread.start()
    try:
        assert inside.wait(5)
        del old
        gc.collect()
        assert alive() is not None  # frozen with everything alive at the start
        with collector_for_streams():
            pass  # a shorter run ends while the long one goes on
        assert alive() is None
        assert gc.get_freeze_count() > 0  # the long run's tuning holds
        assert gc.get_threshold()[0] == STREAM_YOUNG_THRESHOLD
    finally:
        release.set()
        thread.join(5)
    assert gc.get_freeze_count() == 0
