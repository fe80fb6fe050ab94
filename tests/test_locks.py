"""apps.common.locks: one holder at a time, and a released lock free at once."""

from __future__ import annotations

import pytest

from apps.common import locks
from tests.requires import missing

pytestmark = pytest.mark.django_db


def test_a_held_lock_is_refused_until_it_is_released():
    with locks.held("test-lock-one-holder") as first:
        assert first is not None
        with locks.held("test-lock-one-holder") as second:
            assert second is None
    with locks.held("test-lock-one-holder") as again:
        assert again is not None


def test_a_released_postgres_lock_is_free_at_once():
    # Closing the lock's session frees the lock only once the server's
    # backend has exited: the next pass, asking at once, was told "taken"
    # (about 1 in 300 on a quiet machine, more on a busy one) and a pass
    # wished for meanwhile never ran. The session now unlocks first.
    from django.db import connection

    if connection.vendor != "postgresql":
        missing("advisory locks are PostgreSQL's: DATABASE_URL=postgres://...")
    taken = 0
    for _ in range(300):
        lock = locks.try_acquire("test-lock-release")
        assert lock is not None
        lock.release()
        after = locks.try_acquire("test-lock-release")
        if after is None:
            taken += 1
        else:
            after.release()
    assert taken == 0, f"{taken} of 300 found the lock taken right after its release"
