"""DATABASE_POOL_MAX_SIZE: a process keeps that many PostgreSQL connections and
reuses them (the web image sets 4), instead of a connection per request.

Run in a process of its own with the production settings module, as the web
image runs it: threads that each open, use and close the connection many
times, as requests do, are served by at most the pool's connections.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.requires import missing

ROOT = Path(__file__).resolve().parent.parent
# Six threads, twenty "requests" each: Django closes the connection at the end
# of every request, which with a pool gives it back instead of closing it.
SCRIPT = """
import threading
import django
django.setup()
from django.db import connection, connections

backends = set()
lock = threading.Lock()

def requests():
    for _ in range(20):
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            pid = cursor.fetchone()[0]
        with lock:
            backends.add(pid)
        connection.close()

threads = [threading.Thread(target=requests) for _ in range(6)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(len(backends), connections["default"].settings_dict["OPTIONS"].get("pool"))
"""


def _backends_used(pool_max_size: str) -> tuple[int, str]:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "vnpuportal.settings.base",
        "DJANGO_DEBUG": "true",
        "DATABASE_POOL_MAX_SIZE": pool_max_size,
    }
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    count, pool = done.stdout.split(" ", 1)
    return int(count), pool.strip()


@pytest.mark.parametrize(("size", "most"), [("2", 2), ("4", 4)])
def test_a_pooled_process_uses_at_most_the_pools_connections(size, most):
    from django.db import connection

    if connection.vendor != "postgresql":
        missing("the connection pool is PostgreSQL's: DATABASE_URL=postgres://...")
    used, pool = _backends_used(size)
    assert 1 <= used <= most, (used, pool)
    assert f"'max_size': {size}" in pool


def test_without_a_pool_each_request_connects_again():
    # The same work without the pool: the figure above is the pool's doing.
    from django.db import connection

    if connection.vendor != "postgresql":
        missing("the connection pool is PostgreSQL's: DATABASE_URL=postgres://...")
    used, pool = _backends_used("0")
    assert pool == "None"
    assert used > 4, used
