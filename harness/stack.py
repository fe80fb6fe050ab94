"""The whole portal, started for real: simcluster, a fresh database, sync, uvicorn.

Used by the browser tests (``tests/e2e/conftest.py``) and the UI benchmark
(``python -m bench.ui``). Everything runs on this machine's loopback address and
is stopped by ``Stack.stop()``:

- ``SimCluster`` in this process (threads), with its kubeconfig in a temp dir;
- a temporary SQLite file as the database (never the developer's or CI's
  PostgreSQL: ``DATABASE_URL`` is overridden for the child processes);
- ``manage.py migrate`` and ``manage.py demo --kubeconfig`` (admin/admin and
  the cluster ``demo``);
- ``manage.py sync --cluster demo --seconds N`` in the background (live watches);
- ``uvicorn vnpuportal.asgi:application`` on a free port, with the settings of
  production (``DEBUG=false``) and the database outbox for live deltas, since
  sync runs in another process.
"""

from __future__ import annotations

import http.cookiejar
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.migrated import drop_database, postgres_copy, sqlite_copy
from harness.processes import (
    ProcessSet,
    free_port,
    uvicorn_command,
    wait_for_http,
    wait_until,
)
from kubestack.build import wait_for_background_build

ROOT = Path(__file__).resolve().parents[1]
FRONTEND = ROOT / "frontend"
DIST_INDEX = FRONTEND / "dist" / "index.html"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]

if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


class StackError(RuntimeError):
    """The stack could not be started; the message says why and where the logs are."""


# --- the built frontend ------------------------------------------------------------


def _newest_source_mtime() -> float:
    paths = [
        *FRONTEND.joinpath("src").rglob("*"),
        *FRONTEND.joinpath("public").rglob("*"),
        FRONTEND / "index.html",
        FRONTEND / "package.json",
        FRONTEND / "package-lock.json",
        FRONTEND / "vite.config.ts",
        FRONTEND / "tsconfig.json",
    ]
    return max((p.stat().st_mtime for p in paths if p.is_file()), default=0.0)


def frontend_is_stale() -> bool:
    return (
        not DIST_INDEX.is_file() or DIST_INDEX.stat().st_mtime < _newest_source_mtime()
    )


def ensure_frontend_built(log: Callable[[str], None] = print) -> None:
    """Build ``frontend/dist`` when it is missing or older than the sources."""
    if not frontend_is_stale():
        return
    npm = shutil.which("npm")
    if npm is None:
        raise StackError(
            "frontend/dist is missing or stale and npm is not installed: "
            "install Node 20+ and run (cd frontend && npm ci && npm run build)"
        )
    steps = []
    if not (FRONTEND / "node_modules" / ".bin" / "vite").exists():
        steps.append([npm, "ci", "--no-audit", "--no-fund"])
    steps.append([npm, "run", "build"])
    for cmd in steps:
        log(f"==> {' '.join(cmd[1:])} (frontend/)")
        result = subprocess.run(
            cmd, cwd=FRONTEND, capture_output=True, text=True, check=False
        )
        if result.returncode != 0:
            raise StackError(
                f"`{' '.join(cmd)}` in frontend/ failed ({result.returncode}):\n"
                f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
            )


# --- a small HTTP client for the portal's API -------------------------------------


class ApiClient:
    """Session-authenticated JSON calls to the portal (as a script would make them)."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(self.jar)
        )

    def _csrf(self) -> str:
        return next((c.value for c in self.jar if c.name == "csrftoken"), "")

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(  # noqa: S310 - our own http://127.0.0.1 URL
            self.base_url + path,
            data=data,
            method=method,
            headers={
                "Content-Type": "application/json",
                "X-CSRFToken": self._csrf(),
                "Referer": self.base_url + "/",
            },
        )
        try:
            with self.opener.open(request, timeout=60) as response:
                text = response.read().decode()
                status = response.status
        except urllib.error.HTTPError as exc:
            text, status = exc.read().decode(), exc.code
        try:
            return status, json.loads(text) if text else None
        except json.JSONDecodeError:
            return status, text

    def login(self, credentials: tuple[str, str] = ("admin", "admin")) -> None:
        """Sign in (the demo's admin by default) and keep the session cookie."""
        username, password = credentials
        self.call("GET", "/api/auth/login/")  # the CSRF cookie the POST needs
        status, body = self.call(
            "POST", "/api/auth/login/", {"username": username, "password": password}
        )
        if status != 200:
            raise StackError(f"login failed: {status} {body}")


# --- the stack ------------------------------------------------------------------------


class Stack:
    """Start with ``Stack(...).start()``; ``stop()`` ends every process it started."""

    def __init__(
        self,
        scenario: str = "guide",
        *,
        sim_options: dict[str, Any] | None = None,
        sync_seconds: float = 600,
        workdir: Path | None = None,
        log: Callable[[str], None] = print,
        postgres_url: str | None = None,
    ) -> None:
        """``postgres_url``: a PostgreSQL server (``postgres://user@host:port/db``) on
        which a fresh database is created for this stack and dropped by ``stop()``;
        without it the stack uses a temporary SQLite file."""
        self.scenario = scenario
        self.sim_options = sim_options or {}
        self.sync_seconds = sync_seconds
        self.log = log
        self._own_workdir = workdir is None
        self.workdir = Path(workdir or tempfile.mkdtemp(prefix="vnpu-e2e-"))
        self.kubeconfig = self.workdir / "kubeconfig"
        self.database = self.workdir / "portal.sqlite3"
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.sim: Any = None
        self.processes = ProcessSet(self.workdir, self.env)
        self.procs = self.processes.procs
        self.cluster_id: int | None = None
        self.postgres_url = postgres_url
        self._pg_database: str | None = None
        # Settings added to the portal's processes (read when one is started).
        self.extra_env: dict[str, str] = {}
        # Arguments added to uvicorn's (read by ``start_web``; a later flag wins).
        self.web_args: list[str] = []
        # Settings of the web process only (as docker/entrypoint-web.sh exports
        # DATABASE_POOL_MAX_SIZE for it alone).
        self.web_env: dict[str, str] = {}

    # -- environment of the portal's processes

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        for key in ("REDIS_URL", "CACHE_URL", "DJANGO_DEBUG"):
            env.pop(key, None)
        env.update(
            {
                "DJANGO_SETTINGS_MODULE": "vnpuportal.settings.base",
                "DJANGO_SECRET_KEY": "e2e-secret-key-not-for-production-0123456789",
                "DJANGO_DEBUG": "false",
                # production settings over plain http on 127.0.0.1: no HTTPS
                # redirect, no Secure-only cookies (docs/security.md)
                "DJANGO_SECURE": "false",
                "DATABASE_URL": self.database_url(),
                "REDIS_URL": "",
                "REALTIME_OUTBOX": "true",
                "CELERY_BROKER_URL": "memory://",
                "LOCK_DIR": str(self.workdir / "locks"),
                # STACK_LOG_LEVEL=INFO when a failing test needs the story
                "LOG_LEVEL": os.environ.get("STACK_LOG_LEVEL", "WARNING"),
                "PYTHONUNBUFFERED": "1",
                # Every browser test signs in (as several roles) within the same
                # minute, from 127.0.0.1; the throttle has its own tests
                # (tests/security/test_throttling.py).
                "THROTTLE_LOGIN": "600/min",
            }
        )
        env.update(self.extra_env)
        return env

    def database_url(self) -> str:
        if self._pg_database is None:
            return f"sqlite:///{self.database}"
        base = urllib.parse.urlsplit(self.postgres_url or "")
        return urllib.parse.urlunsplit(base._replace(path=f"/{self._pg_database}"))

    def _create_database(self) -> None:
        """A migrated database of its own: a copy of the run's template
        (harness.migrated), which the first stack migrates."""
        if self.postgres_url:
            name = f"vnpu_e2e_{os.getpid()}_{self.port}"
            postgres_copy(self.postgres_url, name, self._migrate_at)
            self._pg_database = name
        else:
            sqlite_copy(self.database, self._migrate_at)

    def _migrate_at(self, database_url: str) -> None:
        """``manage.py migrate`` on ``database_url`` (the template's build)."""
        self.manage("migrate", "--noinput", database_url=database_url)

    def manage(
        self, *args: str, timeout: float = 600, database_url: str | None = None
    ) -> str:
        """``manage.py`` with the stack's environment (on another database
        when ``database_url`` is given); its output."""
        env = self.env()
        if database_url is not None:
            env["DATABASE_URL"] = database_url
        result = subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if result.returncode != 0:
            raise StackError(
                f"manage.py {' '.join(args)} failed ({result.returncode}):\n"
                f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
            )
        return result.stdout

    def _spawn(
        self, name: str, cmd: list[str], extra_env: dict[str, str] | None = None
    ) -> subprocess.Popen[bytes]:
        return self.processes.launch(name, cmd, extra_env)

    def logs(self, name: str, tail: int = 4000) -> str:
        return self.processes.log(name, tail)

    # -- start and stop

    def start(
        self, *, wait_for_chips: int | None = None, timeout: float = 300
    ) -> Stack:
        from simcluster.server import SimCluster

        try:
            t0 = time.monotonic()
            self.sim = SimCluster(scenario=self.scenario, port=0, **self.sim_options)
            self.sim.start()
            self.sim.write_kubeconfig(self.kubeconfig)
            self.log(f"simcluster ({self.scenario}) at {self.sim.url}")
            self._create_database()
            self.log(f"database: {self.database_url()}")
            self.manage("demo", "--kubeconfig", str(self.kubeconfig))
            self._spawn(
                "sync",
                [
                    sys.executable,
                    "manage.py",
                    "sync",
                    "--cluster",
                    "demo",
                    "--seconds",
                    str(self.sync_seconds),
                ],
            )
            self.start_web()
            client = self.api()
            status, clusters = client.call("GET", "/api/clusters/")
            if status != 200 or not clusters["results"]:
                raise StackError(f"no cluster registered: {status} {clusters}")
            self.cluster_id = int(clusters["results"][0]["id"])
            if wait_for_chips:
                self._wait_chips(client, wait_for_chips, timeout)
            self.log(f"portal at {self.url} ready in {time.monotonic() - t0:.1f}s")
        except BaseException:
            self.stop()
            raise
        return self

    def start_web(self) -> None:
        """Start uvicorn on this stack's port and wait until it answers."""
        self._spawn("web", uvicorn_command(self.port, *self.web_args), self.web_env)
        self._wait_http(timeout=60)

    def stop_web(self) -> None:
        """Stop the web process (browsers lose their WebSocket); sync keeps running."""
        self.processes.kill("web", signal.SIGTERM, grace=10)

    def api(self) -> ApiClient:
        client = ApiClient(self.url)
        client.login()
        return client

    def _wait_http(self, timeout: float) -> None:
        # any answer will do (405 for a GET of the login endpoint)
        wait_for_http(
            self.url + "/api/auth/login/", timeout, watched=[self.procs["web"]]
        )

    def _wait_chips(self, client: ApiClient, count: int, timeout: float) -> None:
        def synced() -> bool:
            status, body = client.call(
                "GET", f"/api/clusters/{self.cluster_id}/chip-usage/"
            )
            return status == 200 and len(body["rows"]) >= count

        wait_until(
            synced,
            f"{count} chips synced",
            timeout,
            0.5,
            watched=[self.procs["sync"]],
        )

    def kubectl(self, *args: str, stdin: str | None = None, timeout: float = 60) -> str:
        # A cold run builds kubectl beside the tests: wait for it outside
        # ``timeout`` (without scripts/test.sh's build this returns at once).
        wait_for_background_build("kubectl")
        result = subprocess.run(
            ["kubectl", "--kubeconfig", str(self.kubeconfig), *args],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if result.returncode != 0:
            raise StackError(f"kubectl {' '.join(args)}: {result.stderr}")
        return result.stdout

    def stop(self) -> None:
        self.processes.stop_all(signal.SIGTERM, grace=10)
        if self.sim is not None:
            self.sim.stop()
            self.sim = None
        if self._pg_database is not None:
            try:
                drop_database(self.postgres_url or "", self._pg_database)
            except Exception as exc:  # report it, never mask the error that stopped us
                self.log(f"could not drop database {self._pg_database}: {exc}")
            self._pg_database = None
        if self._own_workdir and not os.environ.get("E2E_KEEP"):
            shutil.rmtree(self.workdir, ignore_errors=True)


if __name__ == "__main__":  # a dev stack: python -m harness.stack [scenario]

    def _interrupt(*_: Any) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, _interrupt)
    stack = Stack(sys.argv[1] if len(sys.argv) > 1 else "guide", sync_seconds=86400)
    stack.start(wait_for_chips=1)
    sys.stdout.write(
        f"portal: {stack.url}  kubeconfig: {stack.kubeconfig}  (Ctrl-C stops)\n"
    )
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        stack.stop()


def pinned_pod(
    name: str,
    uuid: str,
    *,
    chip_type: str = "Ascend310P",
    memory: int | None = 3072,
    priority_class: str | None = None,
) -> str:
    """A pod manifest (JSON, for ``kubectl apply -f -``) pinned to one chip with
    ``hami.io/use-<type>-uuid``: ``memory`` MB of it, or the whole card for None.
    HAMi's scheduler places it (it honours the pin; Volcano does not).

    The e2e tests and bench.ui create such pods to watch a change reach the page.
    """
    limits = {f"huawei.com/{chip_type}": "1"}
    if memory is not None:
        limits[f"huawei.com/{chip_type}-memory"] = str(memory)
    spec: dict[str, Any] = {
        "schedulerName": "hami-scheduler",
        "containers": [
            {
                "name": "main",
                "image": "busybox",
                "command": ["sleep", "3600"],
                "resources": {"limits": limits},
            }
        ],
    }
    if priority_class:
        spec["priorityClassName"] = priority_class
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": name,
                "namespace": "default",
                "annotations": {f"hami.io/use-{chip_type}-uuid": uuid},
            },
            "spec": spec,
        }
    )
