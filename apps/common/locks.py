"""Locks for work that must run once however many workers exist.

A watch per cluster and resource, an allocator pass per cluster: each holds a
named lock for as long as it runs. Both backends release the lock when the
holder dies, so a killed worker never blocks the next one:

- PostgreSQL: a session-level advisory lock on a connection of its own (the
  server drops it when that connection closes, including on a crash);
- otherwise (the SQLite embedded default, one machine): ``flock`` on a file,
  which the kernel releases when the process exits.

The server also drops an advisory lock when it loses the session for any other
reason (a PostgreSQL restart, a failover, ``pg_terminate_backend``), and the
holder is not told: its work would go on unlocked while another worker takes
the lock, so a holder that runs for long calls ``ensure()`` every few seconds
and stops when it answers False.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import connection
from django.db.utils import OperationalError


def _key(name: str) -> int:
    # Advisory locks take a signed 64-bit key; a stable hash of the name.
    return int.from_bytes(
        hashlib.sha256(name.encode()).digest()[:8], "big", signed=True
    )


class Lock:
    """A held lock; ``release()`` (or leaving the ``with``) frees it."""

    def __init__(self, name: str, release: Any) -> None:
        self.name = name
        self._release = release

    def release(self) -> None:
        if self._release is not None:
            self._release()
            self._release = None

    def ensure(self) -> bool:
        """Tell whether the lock is still held, taking it again if it was lost.

        A file lock lives as long as its descriptor: always True until released.
        """
        return self._release is not None


class _PgLock(Lock):
    """An advisory lock and the session that holds it."""

    def __init__(self, name: str, conn: Any) -> None:
        super().__init__(name, self._unlock_and_close)
        self._conn = conn

    def _unlock_and_close(self) -> None:
        # Unlocked by the session before it closes: closing alone frees the
        # lock only once the server's backend has finished exiting, which on
        # a busy server comes after the next pass asked for the lock (and
        # was told it was taken, so a pass wished for meanwhile never ran).
        import psycopg

        try:
            self._conn.execute("SELECT pg_advisory_unlock(%s)", (_key(self.name),))
        except psycopg.Error:
            pass  # the session is gone already: so is its lock, once it exits
        finally:
            self._conn.close()

    def ensure(self) -> bool:
        """True while the session answers; after it was lost, True only if the
        lock could be taken again on a new session (nobody else took it
        meanwhile), else False: the holder must stop."""
        if self._release is None:
            return False
        import psycopg  # only on PostgreSQL, where it is installed (see _pg_take)

        try:
            self._conn.execute("SELECT 1").fetchone()
        except psycopg.Error:
            pass
        else:
            return True
        old_pid = self._conn.info.backend_pid
        self._conn.close()
        conn = None
        # The client hears of a terminated session before its backend has
        # finished exiting and freed the lock: try again for a moment, but
        # only while that backend is still there. Once it is gone, a lock
        # still taken is another holder's: say so at once (a task checking
        # many locks used to wait a second for each of them).
        for _ in range(10):
            try:
                conn = _pg_take(self.name)
                if conn is not None or not _backend_alive(old_pid):
                    break
            except psycopg.Error:
                break  # the server is still away: nothing proves the lock is ours
            time.sleep(0.1)
        if conn is None:
            self._release = None
            return False
        self._conn, self._release = conn, self._unlock_and_close
        return True


def try_acquire(name: str) -> Lock | None:
    """Take the lock ``name`` if free; None if another process holds it.

    Raises:
        OperationalError: The database cannot be reached (PostgreSQL).
    """
    if connection.vendor == "postgresql":
        return _try_pg(name)
    return _try_file(name)


@contextmanager
def held(name: str) -> Iterator[Lock | None]:
    """``with held("x") as lock:`` — lock is None when someone else has it."""
    lock = try_acquire(name)
    try:
        yield lock
    finally:
        if lock is not None:
            lock.release()


def _try_pg(name: str) -> Lock | None:
    import psycopg

    try:
        conn = _pg_take(name)
    except psycopg.Error as exc:
        # As Django says it, so callers handle one kind of database error.
        raise OperationalError(f"cannot take the lock {name}: {exc}") from exc
    return None if conn is None else _PgLock(name, conn)


def _pg_take(name: str) -> Any:
    """A new session holding the advisory lock ``name``, or None if it is taken."""
    # Imported here: the PostgreSQL driver is only needed (and only certain to
    # be installed) when the database is PostgreSQL.
    import psycopg

    # Keepalives: a session cut without a reset (a dead host, a partition)
    # must fail ensure() in seconds, not after the kernel's two hours.
    conn = psycopg.connect(
        **{
            "keepalives": 1,
            "keepalives_idle": 5,
            "keepalives_interval": 2,
            "keepalives_count": 2,
            # and the unlock sent on release waits at most this long (ms) for
            # a server it cannot reach
            "tcp_user_timeout": 10_000,
            **_pg_params(),
        },
        autocommit=True,
    )
    try:
        got = conn.execute("SELECT pg_try_advisory_lock(%s)", (_key(name),)).fetchone()
    except psycopg.Error:
        conn.close()
        raise
    if not got or not got[0]:
        conn.close()
        return None
    return conn


def _backend_alive(pid: int) -> bool:
    """Whether the server still has the backend process ``pid`` (a session
    that was terminated but has not finished exiting holds its locks)."""
    import psycopg

    with psycopg.connect(**_pg_params(), autocommit=True) as conn:
        row = conn.execute(
            "SELECT 1 FROM pg_stat_activity WHERE pid = %s", (pid,)
        ).fetchone()
    return row is not None


def _pg_params() -> dict[str, Any]:
    params = {
        k: v
        for k, v in connection.get_connection_params().items()
        if k not in ("cursor_factory", "context")
    }
    return {"connect_timeout": 5, **params}


def _lock_dir() -> Path:
    path = Path(
        getattr(settings, "LOCK_DIR", "") or Path(settings.BASE_DIR) / "var" / "locks"
    )
    path.mkdir(parents=True, exist_ok=True)
    return path


def _try_file(name: str) -> Lock | None:
    path = _lock_dir() / (re.sub(r"[^A-Za-z0-9_.-]", "_", name) + ".lock")
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return Lock(name, lambda: os.close(fd))
