"""Tasks only the reconnect test's worker loads (``celery worker --include``).

Each writes where the test tells it, so the test sees which process ran it
without a database.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from vnpuportal.celery import app


@app.task(name="tests.reconnect.hold")
def hold(started: str, seconds: float) -> None:
    """Stay unacknowledged (acks_late) for ``seconds``, after saying it started."""
    Path(started).write_text("started")
    time.sleep(seconds)


@app.task(name="tests.reconnect.mark")
def mark(path: str) -> None:
    """Write the ids of the process (and its parent: prefork's child) that ran it."""
    Path(path).write_text(f"{os.getpid()} {os.getppid()}")
