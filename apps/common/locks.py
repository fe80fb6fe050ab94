"""Locks for work that must run once however many workers exist.

A watch per cluster and resource, an allocator pass per cluster: each holds a
named lock for as long as it runs. Both backends release the lock when the
holder dies, so a killed worker never blocks the next one:

- PostgreSQL: a session-level advisory lock on a connection of its own (the
  server drops it when that connection closes, including on a crash);
- otherwise (the SQLite embedded default, one machine): ``flock`` on a file,
  which the kernel releases when the process exits.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import connection


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


def try_acquire(name: str) -> Lock | None:
    """Take the lock ``name`` if free; None if another process holds it."""
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

    params = connection.get_connection_params()
    conn = psycopg.connect(
        **{k: v for k, v in params.items() if k not in ("cursor_factory", "context")},
        autocommit=True,
    )
    got = conn.execute("SELECT pg_try_advisory_lock(%s)", (_key(name),)).fetchone()
    if not got or not got[0]:
        conn.close()
        return None
    return Lock(name, conn.close)


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
