"""A Celery worker survives a Redis restart and takes new tasks in the same process.

A real worker (``celery -A vnpuportal worker``, prefork and threads pools) on
a private ``redis-server`` (never the machine's shared one) holds a task that
is not yet acknowledged (``CELERY_TASK_ACKS_LATE``, as a sync task always is)
when Redis restarts. With celery 5.7.0 / kombu 5.7.0 the consumer then died
with "Unrecoverable error" (``apps/common/broker.py`` has the why); the worker
must instead reconnect by itself and run a task sent after the restart.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from celery import Celery
from kombu import Connection
from kombu.transport import redis as kombu_redis

from harness import processes
from harness.services import PrivateRedis
from tests.polling import wait_for

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def redis_server() -> Iterator[PrivateRedis]:
    server = PrivateRedis(appendonly=True)
    yield server
    server.stop()


def _start_worker(redis_url: str, pool: str, workdir: Path) -> processes.Process:
    env = {
        **{
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("DJANGO_", "CELERY_"))
        },
        "DJANGO_SETTINGS_MODULE": "vnpuportal.settings.base",
        "DJANGO_SECRET_KEY": "reconnect-" + "k" * 50,
        "DATABASE_URL": f"sqlite:///{workdir / 'unused.sqlite3'}",
        "REDIS_URL": redis_url,
        "LOCK_DIR": str(workdir / "locks"),
    }
    env.pop("CACHE_URL", None)
    return processes.start(
        "worker",
        processes.celery_command(
            "worker",
            pool=pool,
            concurrency=2,
            name=f"reconnect-{pool}-{time.monotonic_ns()}@%h",
            extra=["--include", "tests.faults.reconnect_tasks"],
        ),
        workdir,
        env=env,
    )


def _ran_by(sender: Celery, path: Path, timeout: float) -> list[int]:
    sender.send_task("tests.reconnect.mark", args=[str(path)])
    wait_for(path.exists, f"a task to run ({path.name})", timeout=timeout)
    return [int(pid) for pid in path.read_text().split()]


@pytest.mark.parametrize("pool", ["prefork", "threads"])
def test_worker_reconnects_after_a_redis_restart(redis_server, tmp_path, pool):
    # given a worker that has run a task, and now holds one unacknowledged
    # Not the current app: shared tasks bind to the current app, and later
    # tests in this process would send theirs to this Redis once it is gone.
    sender = Celery("sender", broker=redis_server.url(0), set_as_current=False)
    worker = _start_worker(redis_server.url(0), pool, tmp_path)
    try:
        assert worker.pid in _ran_by(sender, tmp_path / "before", 60)
        started = tmp_path / "hold-started"
        sender.send_task("tests.reconnect.hold", args=[str(started), 6])
        wait_for(started.exists, "the held task to start", timeout=30)
        # when Redis restarts under it
        redis_server.restart()
        # then the same worker process runs a task sent afterwards
        assert worker.pid in _ran_by(sender, tmp_path / "after", 60)
        assert worker.poll() is None
    finally:
        processes.stop(worker, grace=20)
        sender.close()
    log = (tmp_path / "worker.log").read_text(errors="replace")
    assert "Unrecoverable error" not in log, log[-4000:]
    assert "Connection to broker lost" in log  # the restart was noticed


def test_kombu_still_needs_the_workaround(redis_server):
    """When this fails, kombu no longer dereferences a detached transport: drop
    ``apps/common/broker.py`` (and this test) after checking the test above."""
    connection = Connection(redis_server.url(0))
    channel = connection.default_channel
    # a channel that outlived its transport: collect() detaches the transport
    # but keeps a channel whose close was cut short (apps/common/broker.py, 2.)
    connection._do_close_transport()
    unpatched = kombu_redis.Channel._connparams.__wrapped__
    with pytest.raises(AttributeError, match="hostname"):
        unpatched(channel)
    # and with the workaround, a connection error that every caller ignores
    with pytest.raises(connection.connection_errors):
        channel._connparams()
