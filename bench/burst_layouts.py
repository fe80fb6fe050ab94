"""Where ``bench.burst`` runs the portal: in its own process, or as deployed.

``in-process``: sync (list + watch), the beat's passes and the pass worker as
threads of the benchmark (``harness.portal.Running``), the POSTs through
DRF's in-process client. Cheap to start, but the POSTs, sync's parsing and
the passes share one interpreter with the benchmark's own clients and its
phase watch, which a deployment never does.

``processes`` (the default): the portal's processes as ``docker/`` runs them
(``entrypoint-web.sh``: uvicorn, a process per CPU up to 4, each with a pool
of PostgreSQL connections; ``entrypoint-worker.sh``: a prefork Celery worker,
``-O fair``, with beat beside it), a private Redis for broker, cache and
channel layer, the benchmark's database; the pipelines POST over HTTP with
their tokens. The benchmark process only submits, watches pod phases and
reads the rows.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from bench.rest import DEFAULT_WEB_WORKERS, POOL_MAX_SIZE, Pool, web_args
from harness.processes import (
    ProcessSet,
    free_port,
    uvicorn_command,
    wait_for_http,
)

#: A submission: (cluster name, templates, pipelines, idempotency prefix) -> ids.
Submit = Callable[[str, list[str], int, str], list[int]]

#: Prefork processes of the worker: docker/entrypoint-worker.sh's default.
WORKER_CONCURRENCY = 4


@contextlib.contextmanager
def in_process(cluster: Any, *, worker: bool) -> Iterator[Submit]:
    """Sync the cluster once, then serve it from threads of this process
    (``worker``: passes in a thread, as a Celery worker takes them; else
    inline in the submitting request, the embedded mode)."""
    from apps.inventory.sync.engine import sync_once
    from harness.portal import Running, submit_burst

    sync_once(cluster)
    with Running(cluster, worker=worker):
        yield lambda name, templates, workers, prefix: submit_burst(
            name, templates, workers=workers, prefix=prefix
        )


class DeployedPortal:
    """The portal's web, worker and beat processes on this process's settings
    (database, Redis, secret), as ``docker/`` starts them."""

    def __init__(self, *, web_workers: int = DEFAULT_WEB_WORKERS) -> None:
        self.workdir = Path(tempfile.mkdtemp(prefix="vnpu-bench-deployed-"))
        self.web_workers = web_workers
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.processes = ProcessSet(self.workdir, self._env)
        # BENCH_LOG_LEVEL=INFO (with BENCH_KEEP=1) keeps each task's time.
        self.loglevel = os.environ.get("BENCH_LOG_LEVEL", "WARNING")

    def _env(self) -> dict[str, str]:
        return {
            **os.environ,
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
            "PYTHONUNBUFFERED": "1",
            "WORKER_ALIVE_FILE": str(self.workdir / "worker-alive"),
        }

    def start(self) -> None:
        """Start web, worker and beat (bench.rest's ``Pool``); return once the
        web answers and the worker answers a ping."""
        web = self.processes.launch(
            "web",
            uvicorn_command(self.port, *web_args(self.web_workers)),
            {"DATABASE_POOL_MAX_SIZE": POOL_MAX_SIZE},
        )
        Pool(
            self,
            WORKER_CONCURRENCY,
            hostname=f"bench-burst-{os.getpid()}@%h",
            loglevel=self.loglevel,
        ).start()
        wait_for_http(self.url + "/healthz", 120, status={200}, watched=[web])

    def stop(self) -> None:
        """Kill them (a warm shutdown would wait for the sync task's watch)
        and remove their folder (``BENCH_KEEP`` keeps it, with the logs)."""
        self.processes.stop_all(signal.SIGKILL, grace=10)
        if not os.environ.get("BENCH_KEEP"):
            shutil.rmtree(self.workdir, ignore_errors=True)

    def log_tails(self) -> str:
        return "\n".join(
            f"--- {name}\n{self.processes.log(name, 2000)}"
            for name in ("web", "worker", "beat")
        )


def _warm_up(url: str, posts: int = 20) -> None:
    """Submissions that fail validation, each on a new connection so that
    every web process answers some: a deployed portal has answered requests
    before a burst comes, and a process's first requests load what a
    submission needs (400: nothing is written)."""
    from harness.portal import token_client

    client = token_client("bench-warm-up", "operator", base_url=url)
    for _ in range(posts):
        answer = client.post("/api/requests/", {}, format="json")
        client.close()  # the next POST connects again
        if answer.status_code != 400:
            raise RuntimeError(f"warm-up: {answer.status_code} {answer.json()}")


@contextlib.contextmanager
def deployed(cluster: Any, *, timeout: float = 300) -> Iterator[Submit]:
    """Start the deployed portal, let its worker sync ``cluster`` (every
    stream listed once), serve the burst, then stop it and forget the cluster
    (so the next burst's worker syncs nothing else) and the queued tasks."""
    import redis
    from django.conf import settings

    from apps.inventory.services import cluster_delete
    from bench.rest import sync_all_now, wait_listed
    from harness.portal import submit_burst

    portal = DeployedPortal()
    try:
        portal.start()
        sync_all_now()
        try:
            wait_listed([cluster.pk], time.perf_counter(), timeout)
        except AssertionError:
            print(portal.log_tails(), flush=True)
            raise
        _warm_up(portal.url)
        yield lambda name, templates, workers, prefix: submit_burst(
            name, templates, workers=workers, prefix=prefix, base_url=portal.url
        )
    finally:
        portal.stop()
        cluster_delete(cluster=cluster, actor=None)
        redis.Redis.from_url(settings.CELERY_BROKER_URL).flushdb()
