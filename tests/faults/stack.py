"""The portal as deployed, on private PostgreSQL and Redis: web (uvicorn), a Celery
worker and beat as real processes, and simcluster in this process.

Used by the restart tests: they restart the private services under it and
watch it recover. Logs are in the stack's temp directory.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from harness.processes import (
    ProcessSet,
    WaitTimeout,
    celery_command,
    free_port,
    uvicorn_command,
    wait_until,
)
from harness.services import PrivatePostgres, PrivateRedis, production_env
from simcluster.server import SimCluster

ROOT = Path(__file__).resolve().parents[2]
LIVENESS_SECONDS = 15.0
SETUP = """
import json, sys
from pathlib import Path
import django
django.setup()
from django.core.management import call_command
call_command("migrate", "--noinput", verbosity=0)
from apps.accounts.services import token_create, user_ensure
from apps.inventory import services
from apps.inventory.choices import ConnectionKind
admin = user_ensure(username="ada", role="admin")
operator = user_ensure(username="otto", role="operator")
cluster = services.cluster_create(
    actor=None, name="sim", connection=ConnectionKind.KUBECONFIG, kubeconfig=Path(sys.argv[1]).read_text()
)
def _default_queue(cluster):
    from apps.scheduling.models import Queue
    Queue.objects.get_or_create(cluster=cluster, name="default", defaults={"open_to_all": True})
    return f"{cluster.name}/default"
print(json.dumps({
    "cluster": cluster.pk,
    "admin": token_create(user=admin).plaintext,
    # a non-admin token is limited to queues: the default one, made as a
    # first submission would make it
    "operator": token_create(user=operator, queues=[_default_queue(cluster)]).plaintext,
}))
"""


class Stack:
    """Start with ``start()``, stop with ``stop()``; processes are restartable by name."""

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="vnpu-stack-"))
        self.pg = PrivatePostgres()
        self.redis = PrivateRedis(appendonly=True)
        self.sim = SimCluster(
            scenario="guide",
            port=0,
            ready_delay=0.1,
            pod_shutdown_seconds=0.3,
            bookmark_interval=0.5,
        ).start()
        self.kubeconfig = self.sim.write_kubeconfig(self.dir / "kubeconfig")
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.processes = ProcessSet(self.dir, lambda: self.env)
        self.env = {
            **production_env(
                "stack-", self.pg.create_database("portal"), self.redis.url(0)
            ),
            "CACHE_URL": self.redis.url(1),
            "LOCK_DIR": str(self.dir / "locks"),
            "SCHEDULING_PASS_SECONDS": "1",
            "SYNC_STALE_AFTER_SECONDS": "30",
            "CELERY_VISIBILITY_TIMEOUT": "900",
            "LOG_LEVEL": "INFO",
            "WORKER_ALIVE_FILE": str(self.dir / "worker-alive"),
            "VOLCANO_SCHEDULER_CONFIGMAP": "volcano-system/volcano-scheduler-configmap",
            "DEVICE_PLUGIN_DAEMONSET": "kube-system/hami-ascend-device-plugin",
            "WATCHED_DEPLOYMENTS": "volcano-system/volcano-scheduler,kube-system/hami-scheduler",
        }
        self.secrets: dict[str, Any] = {}
        # Like compose's `restart: unless-stopped` and a Pod's restartPolicy: a
        # process that exits is started again (counted, for the report).
        self.restarts: dict[str, int] = {}
        self._supervising = threading.Event()
        self.started_at: dict[str, float] = {}

    # --- processes ----------------------------------------------------------------
    COMMANDS = {
        "web": lambda s: uvicorn_command(s.port),
        "worker": lambda s: celery_command(
            "worker", concurrency=8, name=f"worker-{time.monotonic_ns()}@%h"
        ),
        "beat": lambda s: celery_command("beat", schedule=s.dir / "beat-schedule"),
    }

    def run_python(self, code: str, *args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-c", code, *args],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(done.stderr[-3000:])
        return done.stdout

    def launch(self, name: str) -> None:
        self.started_at[name] = time.time()
        self.processes.launch(name, self.COMMANDS[name](self))

    def _worker_stale(self) -> bool:
        """The worker's liveness probe (deploy/40-worker.yaml), with a test-sized threshold."""
        alive = self.dir / "worker-alive"
        started = self.started_at.get("worker", time.time())
        last = alive.stat().st_mtime if alive.exists() else started
        return time.time() - max(last, started) > LIVENESS_SECONDS

    def _supervise(self) -> None:
        while not self._supervising.wait(0.5):
            for name, process in list(self.processes.procs.items()):
                if self.processes.procs.get(name) is not process:
                    continue
                if process.poll() is None and name == "worker" and self._worker_stale():
                    self.kill(name)  # what kubelet does when the probe fails
                elif process.poll() is None:
                    continue
                self.restarts[name] = self.restarts.get(name, 0) + 1
                self.launch(name)

    def kill(self, name: str, sig: int = signal.SIGKILL) -> None:
        self.processes.kill(name, sig)

    def start(self) -> Stack:
        self.secrets = json.loads(
            self.run_python(SETUP, str(self.kubeconfig)).strip().splitlines()[-1]
        )
        for name in ("web", "worker", "beat"):
            self.launch(name)
        threading.Thread(target=self._supervise, daemon=True).start()
        self.wait(lambda: self.http("GET", "/readyz")[0] == 200, 60, "web ready")
        return self

    def stop(self) -> None:
        self._supervising.set()
        self.processes.stop_all(signal.SIGKILL)  # throw-away processes
        self.sim.stop()
        self.redis.stop()
        self.pg.stop()

    def log(self, name: str) -> str:
        return self.processes.log(name)

    # --- talking to it ------------------------------------------------------------------
    def http(
        self, method: str, path: str, body: Any = None, token: str | None = None
    ) -> tuple[int, Any]:
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {self.secrets[token]}"
        request = urllib.request.Request(  # noqa: S310 - http://127.0.0.1 only
            self.url + path,
            data=json.dumps(body).encode() if body is not None else None,
            headers=headers,
            method=method,
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:  # noqa: S310 - loopback
                raw = answer.read()
                status = answer.status
        except urllib.error.HTTPError as exc:
            raw, status = exc.read(), exc.code
        except (urllib.error.URLError, OSError):
            return 0, None
        try:
            return status, json.loads(raw)
        except ValueError:
            return status, raw.decode(errors="replace")

    def wait(self, predicate: Any, timeout: float, what: str) -> float:
        """Poll until ``predicate()`` (a poll may fail while things restart);
        returns the seconds it took."""
        started = time.monotonic()
        try:
            wait_until(predicate, what, timeout, 0.25, ignore=(Exception,))
        except WaitTimeout as error:
            raise WaitTimeout(
                f"{error}\n--- web\n{self.log('web')[-3000:]}"
                f"\n--- worker\n{self.log('worker')[-3000:]}"
            ) from None
        return time.monotonic() - started
