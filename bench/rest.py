"""Benchmark: the REST API at the reference scale under concurrent load, alone
and while one worker pool syncs five clusters with churn.

Run: ``python -m bench.rest [--clients 50] [--seconds 20] [--clusters 5]``
(``--quick``: a tenth of the scale, 6 s windows; about 4 minutes; the full run
about 7; ``--rest-only``: part 1 alone). Needs PostgreSQL's server binaries (``initdb``: a private server
is made in a temp directory, because the sync of six clusters holds about 150
connections, more than a shared server's default 100; ``--postgres shared``
uses ``DATABASE_URL``'s server instead) and ``redis-server`` (a private one:
broker, cache and channel layer, as in a deployment). Everything it starts is
stopped and removed at the end, also after an error or Ctrl-C.

The portal runs as deployed (``docker/entrypoint-web.sh``,
``docker/entrypoint-worker.sh``): a uvicorn process per CPU, at most 4
(``WEB_CONCURRENCY=auto``; ``--web-workers``), each with a pool of 4 PostgreSQL
connections (``DATABASE_POOL_MAX_SIZE``)
with the production flags, DEBUG off, Redis for the cache (the API-token
throttle counts there) and the channel layer; the cluster ``demo`` of
simcluster ``scale`` (``bench.ui.scale_stack``) is watched by the stack's
``manage.py sync`` throughout. The load comes from a process of its own:
``--clients`` threads, each with a kept-alive HTTP/1.1 connection and an API
token of its own (service accounts, viewer), asking as fast as answers come.

Prints, all measured in the same run:
1. REST under load, no sync load, on ``demo``: the chip list
   (``/api/chips/?cluster=``, first page), chip usage
   (``/api/clusters/<id>/chip-usage/``, every chip) and the summary
   (``/api/clusters/<id>/summary/``) and a submission (``POST
   /api/requests/``), each in a mix where every client alternates it with
   ``/api/me/`` (trivial), and ``/api/me/`` alone:
   p50/p95/p99, requests/s, p95 over the trivial endpoint's p95 in the same
   mix and alone; the CPU each process used meanwhile (and the whole
   machine's, which others share), PostgreSQL connections and sessions opened;
   and the line ``clients= post_p95_ms= chips_p95_ratio=`` (issue 38's aims:
   at most 250 ms and 2.0);
2. ``--clusters`` more simcluster processes (each at the same scale)
   registered and synced by one real Celery worker (prefork, ``-O fair``,
   concurrency one above the number of clusters, as the Helm values ask) with
   beat, as production runs sync (``sync_cluster_task`` -> ``sync_run``):
   one cluster's initial sync alone, then all at once (a fresh worker each
   time), and the ratio; then the table of 1 again while every cluster is
   watched under churn (pod label patches at ``--churn-rate`` per cluster, by
   ``bench.sync._patch_load``), with each p95 over 1's, the events sent and
   applied, and how far the pods watches are behind at the end;
3. peak memory (``VmHWM``) of the web, sync, worker, beat and simcluster
   processes.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import math
import multiprocessing
import os
import shutil
import signal
import ssl
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.sync import _kubeconfig_endpoint, _patch_load, _start_sim  # noqa: E402
from bench.ui import line, pick_postgres, scale_stack  # noqa: E402
from harness import processes  # noqa: E402
from harness.processes import ProcessSet, celery_command, wait_until  # noqa: E402
from harness.services import PrivatePostgres, PrivateRedis  # noqa: E402
from harness.stack import Stack  # noqa: E402

ME = "me"
SUBMIT = "submit"
# (mix label, endpoints asked in turn by every client)
MIXES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("me alone", (ME,)),
    ("chip list", ("chips", ME)),
    ("chip usage", ("usage", ME)),
    ("summary", ("summary", ME)),
    ("submit", (SUBMIT, ME)),
)
READ_MIXES = tuple(mix for mix in MIXES if SUBMIT not in mix[1])
# A pipeline's submission (POST /api/requests/): a 5,000 MB 310P slice at
# batch-medium, each
# with its own idempotency key. Nothing
# consumes the scheduling task in part 1 (no worker yet), so the POSTs measure
# the API alone: validation, the row, the audit event, the task sent.
SUBMISSION = {
    "cluster": "demo",
    "namespace": "default",
    "chip_type": "Ascend310P",
    "memory": 5000,
    "priority": "batch-medium",
    "workload": {"image": "busybox", "command": ["sleep", "60"]},
}
# The production layout (docker/entrypoint-web.sh, WEB_CONCURRENCY=auto): a
# uvicorn process per CPU, at most 4, each with a pool of 4 connections.
DEFAULT_WEB_WORKERS = min(len(os.sched_getaffinity(0)), 4)
POOL_MAX_SIZE = "4"


# docker/entrypoint-web.sh's uvicorn flags besides --workers (a later flag
# wins over the Stack's --no-access-log).
WEB_FLAGS = [
    "--proxy-headers",
    "--forwarded-allow-ips",
    "127.0.0.1",
    "--no-server-header",
    "--timeout-graceful-shutdown",
    "20",
    "--access-log",
]


def web_args(workers: int) -> list[str]:
    """The web entrypoint's uvicorn arguments with ``workers`` processes."""
    return ["--workers", str(workers), *WEB_FLAGS]


# Every call is counted by the token throttle, as in production, but none is
# refused: each client has its own token, and the limit is out of reach.
API_RATE_LIMIT = "10000000/min"
PG_MAX_CONNECTIONS = 400


def endpoints(cluster_id: int) -> dict[str, str]:
    return {
        ME: "/api/me/",
        "chips": f"/api/chips/?cluster={cluster_id}",
        "usage": f"/api/clusters/{cluster_id}/chip-usage/",
        "summary": f"/api/clusters/{cluster_id}/summary/",
        SUBMIT: "/api/requests/",
    }


# --- the load (in a process of its own) ----------------------------------------------


def _get(
    conn: http.client.HTTPConnection,
    path: str,
    headers: dict[str, str],
    body: bytes | None = None,
) -> tuple[str, int]:
    """GET ``path`` (POST ``body`` when given) on the kept-alive connection:
    (status, body bytes). A dropped connection is opened again once
    (http.client reconnects after close())."""
    method = "GET" if body is None else "POST"
    for attempt in (0, 1):
        try:
            conn.request(method, path, body=body, headers=headers)
            response = conn.getresponse()
            answer = response.read()
            if response.status >= 400 and path not in _FIRST_ERRORS:
                # what the first refusal of each endpoint said, for the table
                _FIRST_ERRORS[path] = answer[:300].decode(errors="replace")
            return str(response.status), len(answer)
        except (http.client.HTTPException, OSError) as exc:
            conn.close()
            if attempt:
                return type(exc).__name__, 0
    raise AssertionError("unreachable")


_FIRST_ERRORS: dict[str, str] = {}  # in the clients' process


def _submission(client: int, n: int) -> bytes:
    body = {**SUBMISSION, "idempotency_key": f"bench-rest-{os.getpid()}-{client}-{n}"}
    return json.dumps(body).encode()


def hammer(
    base_url: str,
    tokens: list[str],
    paths: list[str],
    seconds: float,
    warmup: float,
) -> dict[str, dict[str, Any]]:
    """``len(tokens)`` clients asking ``paths`` in turn for ``warmup + seconds``.

    Counted: requests started in the last ``seconds`` (each is waited for).
    Returns per path: latencies (s) of the 200s, errors by status, body bytes,
    and every request sent (the warm-up's too).
    """
    url = urlsplit(base_url)
    submit_path = endpoints(0)[SUBMIT]
    begin = time.perf_counter() + warmup
    end = begin + seconds
    per_client: list[dict[str, dict[str, Any]]] = []

    def client(k: int) -> None:
        conn = http.client.HTTPConnection(url.hostname, url.port, timeout=300)
        headers = {
            "Authorization": f"Bearer {tokens[k]}",
            "Accept": "application/json",
            "Content-Type": "application/json",
        }
        mine: dict[str, dict[str, Any]] = {
            p: {"latencies": [], "errors": {}, "bytes": 0, "sent": 0} for p in paths
        }
        per_client.append(mine)
        n = k  # clients start at different endpoints: the mix holds at every moment
        while (started := time.perf_counter()) < end:
            path = paths[n % len(paths)]
            n += 1
            body = _submission(k, n) if path == submit_path else None
            status, size = _get(conn, path, headers, body)
            elapsed = time.perf_counter() - started
            mine[path]["sent"] += 1
            if started < begin:
                continue
            if status in ("200", "201"):
                mine[path]["latencies"].append(elapsed)
                mine[path]["bytes"] = size
            else:
                errors = mine[path]["errors"]
                errors[status] = errors.get(status, 0) + 1
        conn.close()

    threads = [threading.Thread(target=client, args=(k,)) for k in range(len(tokens))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    merged: dict[str, dict[str, Any]] = {}
    for path in paths:
        latencies: list[float] = []
        errors: dict[str, int] = {}
        size = 0
        for mine in per_client:
            latencies += mine[path]["latencies"]
            size = max(size, mine[path]["bytes"])
            for status, count in mine[path]["errors"].items():
                errors[status] = errors.get(status, 0) + count
        merged[path] = {
            "latencies": sorted(latencies),
            "errors": errors,
            "first_error": _FIRST_ERRORS.pop(path, ""),
            "bytes": size,
            "sent": sum(mine[path]["sent"] for mine in per_client),
        }
    return merged


# --- figures ---------------------------------------------------------------------------


@dataclass
class Figures:
    """One endpoint in one mix."""

    latencies: list[float]  # sorted, seconds
    errors: dict[str, int]
    size: int
    seconds: float
    sent: int  # the warm-up's too
    first_error: str = ""  # the body of the first refusal

    def p(self, share: float) -> float:
        """Nearest-rank percentile in ms (nan when nothing answered)."""
        if not self.latencies:
            return float("nan")
        rank = max(0, math.ceil(share * len(self.latencies)) - 1)
        return self.latencies[rank] * 1000

    @property
    def rate(self) -> float:
        return len(self.latencies) / self.seconds


Run = dict[str, dict[str, Figures]]  # mix -> endpoint -> figures


def rest_run(
    base_url: str,
    tokens: list[str],
    cluster_id: int,
    seconds: float,
    warmup: float,
    mixes: Sequence[tuple[str, tuple[str, ...]]] = MIXES,
) -> Run:
    """Every mix in turn, the load from one spawned process."""
    paths = endpoints(cluster_id)
    out: Run = {}
    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=spawn) as pool:
        for mix, names in mixes:
            raw = pool.submit(
                hammer, base_url, tokens, [paths[n] for n in names], seconds, warmup
            ).result()
            out[mix] = {
                n: Figures(
                    raw[paths[n]]["latencies"],
                    raw[paths[n]]["errors"],
                    raw[paths[n]]["bytes"],
                    seconds,
                    raw[paths[n]]["sent"],
                    raw[paths[n]]["first_error"],
                )
                for n in names
            }
    return out


def requests_sent(run: Run) -> int:
    return sum(fig.sent for by_name in run.values() for fig in by_name.values())


def print_run(run: Run, cluster_id: int, baseline: Run | None = None) -> None:
    """The table: per mix and endpoint, and p95 over the trivial endpoint's
    p95 in the same mix, over its p95 alone, and (with ``baseline``) over
    the same cell of the baseline run."""
    paths = endpoints(cluster_id)
    alone = run[MIXES[0][0]][ME].p(0.95)
    print(
        f"  {'mix':<11}{'endpoint':<36}{'n':>6}{'req/s':>7}{'p50 ms':>8}{'p95 ms':>8}"
        f"{'p99 ms':>8}{'err':>4}  p95 : me  : me alone"
        + ("  : unloaded" if baseline else ""),
        flush=True,
    )
    for mix, by_name in run.items():
        me = by_name[ME].p(0.95)
        for name, fig in sorted(by_name.items(), key=lambda kv: kv[0] == ME):
            row = (
                f"  {mix:<11}{paths[name]:<36}{len(fig.latencies):>6}{fig.rate:>7.1f}"
                f"{fig.p(0.50):>8.0f}{fig.p(0.95):>8.0f}{fig.p(0.99):>8.0f}"
                f"{sum(fig.errors.values()):>4}"
            )
            row += f"  {fig.p(0.95) / me:7.1f}x" if name != ME else " " * 10
            row += f"  {fig.p(0.95) / alone:8.1f}x" if mix != MIXES[0][0] else " " * 11
            if baseline:
                row += f"  {fig.p(0.95) / baseline[mix][name].p(0.95):9.2f}x"
            if fig.errors:
                row += f"  {fig.errors}"
            if fig.first_error:
                row += f"\n  {'':<11}first refusal: {fig.first_error}"
            print(row, flush=True)
    sizes = {
        name: fig.size for by_name in run.values() for name, fig in by_name.items()
    }
    print(
        "  body sizes: "
        + ", ".join(f"{paths[n]} {s / 1000:.1f} kB" for n, s in sizes.items()),
        flush=True,
    )


def key_figures(run: Run, suffix: str = "") -> str:
    """One line of name=value: each endpoint's p95 and its ratio to the trivial
    endpoint's p95 in the same mix."""
    parts = []
    for by_name in run.values():
        for name, fig in by_name.items():
            if name == ME and len(by_name) > 1:
                continue
            parts.append(f"rest_p95_ms_{name}{suffix}={fig.p(0.95):.0f}")
            if name != ME:
                ratio = fig.p(0.95) / by_name[ME].p(0.95)
                parts.append(f"rest_p95_ratio_{name}{suffix}={ratio:.1f}")
    return " ".join(parts)


def headline(run: Run, clients: int) -> str:
    """Issue 38's two figures: a submission's p95 (aim <= 250 ms) and the chip
    list's p95 over the trivial endpoint's in the same mix (aim <= 2.0)."""
    post = run["submit"][SUBMIT].p(0.95)
    chips = run["chip list"]["chips"].p(0.95) / run["chip list"][ME].p(0.95)
    return f"clients={clients} post_p95_ms={post:.0f} chips_p95_ratio={chips:.2f}"


# --- processes: memory, connections ---------------------------------------------------


def _hwm_mib(pid: int) -> float:
    """Peak resident set (VmHWM) of ``pid`` in MiB, 0 when it is gone."""
    try:
        for text in Path(f"/proc/{pid}/status").read_text().splitlines():
            if text.startswith("VmHWM:"):
                return int(text.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _children(pid: int) -> list[int]:
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):
            out += [int(c) for c in (task / "children").read_text().split()]
    return out


def _tree(pid: int) -> list[int]:
    """``pid`` and its descendants."""
    out, todo = [], [pid]
    while todo:
        out.append(todo.pop())
        todo += _children(out[-1])
    return out


def cpu_seconds(pids: Iterable[int]) -> float:
    """CPU time used by each process and its reaped children (user + system)."""
    total = 0
    for pid in pids:
        with contextlib.suppress(OSError, ValueError):
            # after the ")" of the command: utime, stime, cutime, cstime are 12..15
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += sum(int(v) for v in fields[11:15])
    return total / os.sysconf("SC_CLK_TCK")


class ConnectionPeak:
    """The most connections to the portal's database, sampled every 0.2 s."""

    def __init__(self, admin_url: str, database: str) -> None:
        self.admin_url = admin_url
        self.database = database
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> ConnectionPeak:
        self._thread.start()
        return self

    def take(self) -> int:
        """The peak since the last take."""
        peak, self.peak = self.peak, 0
        return peak

    def sessions(self) -> int:
        """Sessions ever opened on the portal's database (PostgreSQL 14+)."""
        import psycopg

        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            row = conn.execute(
                "SELECT sessions FROM pg_stat_database WHERE datname = %s",
                (self.database,),
            ).fetchone()
        return int(row[0]) if row else 0

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        import psycopg

        conn = None
        while not self._stop.wait(0.2):
            try:
                if conn is None:
                    conn = psycopg.connect(self.admin_url, autocommit=True)
                row = conn.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = %s",
                    (self.database,),
                ).fetchone()
                self.peak = max(self.peak, int(row[0]) if row else 0)
            except Exception:  # the server going away at the end is no failure
                conn = None
        if conn is not None:
            conn.close()


# --- the portal's side: clusters, worker, sync progress --------------------------------


class Deployment(Protocol):
    """Where a :class:`Pool` starts its processes: a ``Stack``, or
    ``bench.burst_layouts.DeployedPortal``."""

    processes: ProcessSet
    workdir: Path


@dataclass
class Pool:
    """The Celery worker and beat, as processes of the stack (its logs, its stop())."""

    stack: Deployment
    concurrency: int
    hostname: str = field(default_factory=lambda: f"bench-rest-{os.getpid()}@%h")
    loglevel: str = "WARNING"

    def command(self) -> list[str]:
        # docker/entrypoint-worker.sh, with its concurrency raised as the Helm
        # values ask (above the number of clusters: each sync task holds a slot).
        return celery_command(
            "worker",
            pool="prefork",
            concurrency=self.concurrency,
            loglevel=self.loglevel,
            name=self.hostname,
            extra=["-O", "fair"],
        )

    def start(self) -> None:
        from vnpuportal.celery import app

        worker = self.stack.processes.launch("worker", self.command())
        wait_until(
            lambda: app.control.ping(timeout=1.0),  # a private Redis: only this worker
            "the worker to answer a ping",
            120,
            watched=[worker],
        )
        self.stack.processes.launch(
            "beat",
            celery_command(
                "beat",
                schedule=self.stack.workdir / "beat-schedule",
                loglevel=self.loglevel,
            ),
        )

    def stop(self) -> None:
        # Throw-away: a warm shutdown would wait for the sync tasks (600 s).
        self.stack.processes.kill("beat", signal.SIGKILL)
        self.stack.processes.kill("worker", signal.SIGKILL)


def sync_all_now() -> None:
    """What beat does every 30 s, at once (as scripts/run.sh does at start)."""
    from apps.inventory.tasks import sync_all_clusters_task

    sync_all_clusters_task.delay()


def wait_listed(
    cluster_ids: Sequence[int],
    started: float,
    timeout: float,
    check: Callable[[], None] | None = None,
) -> dict[int, float]:
    """Seconds from ``started`` until every stream of each cluster was listed once
    (its cursor has ``last_list_at``, or the cluster does not serve it).
    ``check`` is called between polls (it raises when waiting is pointless)."""
    from django.db.models import Q

    from apps.inventory.models import Cluster, SyncCursor
    from apps.inventory.sync.targets import targets_for

    need = {cid: len(targets_for(Cluster.objects.get(pk=cid))) for cid in cluster_ids}
    done: dict[int, float] = {}

    def all_listed() -> bool:
        for cid in need:
            if cid in done:
                continue
            listed = (
                SyncCursor.objects.filter(cluster_id=cid)
                .filter(Q(last_list_at__isnull=False) | Q(served=False))
                .count()
            )
            if listed >= need[cid]:
                done[cid] = time.perf_counter() - started
        if check:
            check()
        return len(done) == len(need)

    wait_until(all_listed, f"the initial syncs of clusters {sorted(need)}", timeout)
    return done


def counts(cluster_id: int) -> tuple[int, int]:
    from apps.inventory.models import Chip, Slice

    return (
        Chip.objects.filter(cluster_id=cluster_id).count(),
        Slice.objects.filter(cluster_id=cluster_id).count(),
    )


def register(name: str, kubeconfig: Path) -> int:
    from apps.inventory.choices import ConnectionKind
    from apps.inventory.services import cluster_create

    return cluster_create(
        actor=None,
        name=name,
        connection=ConnectionKind.KUBECONFIG,
        kubeconfig=kubeconfig.read_text(),
    ).pk


def pods_events(cluster_ids: Sequence[int]) -> int:
    """Events the pods streams of these clusters have applied (their cursors)."""
    from django.db.models import Sum

    from apps.inventory.models import SyncCursor

    total = SyncCursor.objects.filter(
        cluster_id__in=cluster_ids, resource="pods"
    ).aggregate(n=Sum("events"))["n"]
    return int(total or 0)


# --- simulated clusters and their churn ---------------------------------------------------


def _sim_get(kubeconfig: Path, path: str) -> dict[str, Any]:
    """One GET on a simcluster with its kubeconfig's token (no client models)."""
    server, token, ca = _kubeconfig_endpoint(kubeconfig)
    url = urlsplit(server)
    context = ssl.create_default_context(cadata=ca.decode() if ca else None)
    context.check_hostname = False  # the simulator's certificate names 127.0.0.1 by IP
    conn = http.client.HTTPSConnection(url.hostname, url.port, context=context)
    try:
        conn.request("GET", path, headers={"Authorization": f"Bearer {token}"})
        response = conn.getresponse()
        body = response.read()
        if response.status != 200:
            raise SystemExit(f"GET {path}: {response.status} {body[:200]!r}")
        return json.loads(body)
    finally:
        conn.close()


def pod_names(kubeconfig: Path, limit: int) -> list[tuple[str, str]]:
    items = _sim_get(kubeconfig, f"/api/v1/pods?limit={limit}")["items"]
    return [(p["metadata"]["namespace"], p["metadata"]["name"]) for p in items]


def current_rv(kubeconfig: Path) -> int:
    return int(
        _sim_get(kubeconfig, "/api/v1/pods?limit=1")["metadata"]["resourceVersion"]
    )


class Churn:
    """``_patch_load`` against each cluster, a process each (no shared GIL)."""

    def __init__(self, kubeconfigs: Sequence[Path], rate: float) -> None:
        spawn = multiprocessing.get_context("spawn")
        self.stop_event = spawn.Event()
        self.sent = [spawn.Value("l", 0) for _ in kubeconfigs]
        self.procs = [
            spawn.Process(
                target=_patch_load,
                args=(str(kc), pod_names(kc, 2000), rate, self.stop_event, sent),
                kwargs={"threads": 4},
                daemon=True,
            )
            for kc, sent in zip(kubeconfigs, self.sent, strict=True)
        ]

    def start(self) -> Churn:
        for proc in self.procs:
            proc.start()
        return self

    def total(self) -> int:
        return sum(int(v.value) for v in self.sent)

    def stop(self) -> None:
        self.stop_event.set()
        for proc in self.procs:
            proc.join(timeout=10)
            if proc.is_alive():
                proc.kill()
                proc.join(timeout=5)


# --- main --------------------------------------------------------------------------------


@dataclass
class Bench:
    """What the run started, and how to read their CPU time and memory."""

    args: argparse.Namespace
    stack: Stack
    pool: Pool
    kubeconfigs: list[Path]
    sims: list[processes.Process]
    pg_pid: Callable[[], int] | None
    redis_pid: int
    connections: ConnectionPeak

    def groups(self) -> dict[str, list[int]]:
        """Process trees by role (the bench's own processes are not counted)."""
        procs = self.stack.procs
        out = {
            name: _tree(procs[name].pid) if name in procs else []
            for name in ("web", "sync", "worker", "beat")
        }
        out["simclusters"] = [p.pid for p in self.sims]
        if self.pg_pid is not None:
            out["postgres"] = _tree(self.pg_pid())
        out["redis"] = [self.redis_pid]
        # This process (the demo's simcluster runs in it) and its helpers: the
        # clients' process, the churn's processes (the others are its children too).
        others = {pid for pids in out.values() for pid in pids}
        out["bench"] = [pid for pid in _tree(os.getpid()) if pid not in others]
        return out

    def check_sims(self) -> None:
        """Stop the run when a simulator has exited (nothing here stops them
        before the end: a signal from outside, or a crash)."""
        for k, sim in enumerate(self.sims):
            if sim.poll() is not None:
                output = sim.output()
                raise SystemExit(
                    f"simcluster {k} (pid {sim.pid}) exited with {sim.returncode}; "
                    f"its output:\n{output[-2000:]}"
                )

    def cpu(self) -> dict[str, float]:
        """CPU seconds used so far by each role, by the machine, and the time."""
        used = {name: cpu_seconds(pids) for name, pids in self.groups().items()}
        return {**used, "machine": machine_busy(), "at": time.perf_counter()}


def machine_busy() -> float:
    """CPU seconds this machine has been busy (every process, anyone's)."""
    values = [
        int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    ]
    idle = values[3] + values[4]  # idle, iowait
    return (sum(values[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def cpu_line(before: dict[str, float], after: dict[str, float]) -> str:
    """CPU seconds each role used between two readings (a role started in
    between counts from zero); in cores busy, theirs and the whole machine's."""
    wall = after["at"] - before["at"]
    used = {k: after[k] - before.get(k, 0.0) for k in after if k != "at"}
    machine = used.pop("machine")
    return (
        " ".join(f"{k} {v:.1f}" for k, v in used.items() if v >= 0.05)
        + f" CPU-s in {wall:.1f} s: {sum(used.values()) / wall:.2f} cores busy with"
        f" these, the machine {machine / wall:.2f} of {os.cpu_count()}"
    )


def initial_syncs(bench: Bench, names: list[str], kubeconfigs: list[Path]) -> float:
    """Register the clusters, start the worker pool and time their initial syncs."""
    args = bench.args
    ids = [register(n, kc) for n, kc in zip(names, kubeconfigs, strict=True)]
    bench.pool.start()
    cpu0, started = bench.cpu(), time.perf_counter()
    sync_all_now()
    done = wait_listed(ids, started, args.sync_timeout, bench.check_sims)
    wall = max(done.values())
    cpu = cpu_line(cpu0, bench.cpu())
    sizes = ", ".join(f"{c}/{s}" for c, s in map(counts, ids))
    if len(ids) == 1:
        line(
            f"one cluster's initial sync alone ({sizes} chips/slices)", f"{wall:7.1f} s"
        )
    else:
        line(
            f"{len(ids)} initial syncs at once: each done after",
            " ".join(f"{done[cid]:.1f}" for cid in ids) + " s",
        )
        line(f"{len(ids)} initial syncs at once: all done", f"{wall:7.1f} s")
        line("  chips/slices per cluster", sizes)
    line("  CPU used meanwhile", cpu)
    line("  PostgreSQL connections (most seen)", str(bench.connections.take()))
    return wall


def part_two(bench: Bench, tokens: list[str], demo: int, unloaded: Run) -> None:
    args = bench.args
    print(
        f"-- 2. {args.clusters} clusters synced by one worker pool "
        f"(prefork, concurrency {bench.pool.concurrency}, and beat)",
        flush=True,
    )
    bench.connections.take()
    alone = initial_syncs(bench, ["solo"], bench.kubeconfigs[:1])
    # A fresh pool and queue for the five; "solo" goes (it was the first simulator's).
    bench.pool.stop()
    import redis

    redis.Redis.from_url(bench.stack.env()["CELERY_BROKER_URL"]).flushdb()
    from apps.inventory.models import Cluster
    from apps.inventory.services import cluster_delete

    cluster_delete(cluster=Cluster.objects.get(name="solo"), actor=None)
    names = [f"pool-{k}" for k in range(args.clusters)]
    together = initial_syncs(bench, names, bench.kubeconfigs)
    print(
        f"sync_together_over_alone={together / alone:.2f}  "
        f"({args.clusters} clusters, {os.cpu_count()} CPUs, one worker pool)",
        flush=True,
    )
    ids = [Cluster.objects.get(name=name).pk for name in names]

    print(
        f"-- 2b. REST again while the {args.clusters} clusters are watched under "
        f"churn ({args.churn_rate:g} pod patches/s each)",
        flush=True,
    )
    churn = Churn(bench.kubeconfigs, args.churn_rate).start()
    try:
        # pacing, not a wait on a condition: the churn reaches its rate before
        # it is measured
        time.sleep(3)
        sent0, applied0 = churn.total(), pods_events(ids)
        cpu0, started = bench.cpu(), time.perf_counter()
        bench.connections.take()
        # Reads only: under the worker, submissions would be placed and change
        # the load being measured.
        loaded = rest_run(
            bench.stack.url, tokens, demo, args.seconds, args.warmup, READ_MIXES
        )
        wall = time.perf_counter() - started
        cpu = cpu_line(cpu0, bench.cpu())
        sent, applied = churn.total() - sent0, pods_events(ids) - applied0
        bench.check_sims()
        from apps.inventory.models import SyncCursor

        behind = [
            current_rv(kc)
            - int(
                SyncCursor.objects.get(cluster_id=cid, resource="pods").resource_version
                or 0
            )
            for cid, kc in zip(ids, bench.kubeconfigs, strict=True)
        ]
    finally:
        churn.stop()
    print_run(loaded, demo, baseline=unloaded)
    print(key_figures(loaded, "_churn"), flush=True)
    line(
        "churn meanwhile: pod patches sent",
        f"{sent / wall:7.0f} /s (target {args.churn_rate * args.clusters:g}/s)",
    )
    line("churn meanwhile: pod events applied by the pool", f"{applied / wall:7.0f} /s")
    line(
        "pods watches behind at the end (resourceVersions)",
        " ".join(str(n) for n in behind),
    )
    line("CPU used meanwhile", cpu)
    line("PostgreSQL connections (most seen)", str(bench.connections.take()))


def memory(bench: Bench) -> None:
    print(
        "-- 3. peak memory (VmHWM, each process's own peak; a pool's sum counts "
        "the pages its processes share since the fork once for each)",
        flush=True,
    )
    for name, pids in bench.groups().items():
        if name == "postgres" or not pids:
            continue
        peaks = [_hwm_mib(pid) for pid in pids]
        label = {"sync": "sync (demo)", "web": "web (uvicorn)"}.get(name, name)
        if len(peaks) == 1:
            line(f"  {label}", f"{peaks[0]:7.0f} MiB")
        else:
            line(
                f"  {label}: {len(peaks)} processes",
                f"{sum(peaks):7.0f} MiB in all, largest {max(peaks):.0f} MiB",
            )


def _interrupt(*_: Any) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.rest")
    parser.add_argument("--quick", action="store_true", help="a tenth of the scale")
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--pods", type=int, default=30000)
    parser.add_argument("--slice-pods", type=int, default=20000)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument(
        "--web-workers",
        type=int,
        default=DEFAULT_WEB_WORKERS,
        help="uvicorn processes (default: as WEB_CONCURRENCY=auto here)",
    )
    parser.add_argument(
        "--seconds", type=float, default=20, help="measured window per mix"
    )
    parser.add_argument(
        "--warmup", type=float, default=3, help="unmeasured load before each window"
    )
    parser.add_argument("--clusters", type=int, default=5, help="synced together")
    parser.add_argument(
        "--concurrency",
        type=int,
        default=0,
        help="the worker's processes (default: clusters + 1)",
    )
    parser.add_argument(
        "--churn-rate", type=float, default=50, help="pod patches/s per cluster"
    )
    parser.add_argument("--sync-timeout", type=float, default=1800)
    parser.add_argument(
        "--rest-only",
        action="store_true",
        help="part 1 only (REST under load), then the memory table",
    )
    parser.add_argument(
        "--postgres",
        choices=["private", "shared"],
        default="private",
        help="shared: a database on DATABASE_URL's server (it needs about "
        "20 free connections per cluster synced, and 20 for the web)",
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.nodes, args.pods, args.slice_pods = 100, 3000, 2000
        args.seconds, args.warmup = 6, 2
    signal.signal(signal.SIGTERM, _interrupt)
    print(
        f"== vNPU Portal REST benchmark: {args.nodes} nodes x 8 chips, {args.pods} pods "
        f"({args.slice_pods} with slices) per cluster; {os.cpu_count()} CPUs",
        flush=True,
    )
    return with_cleanups(lambda cleanups: run(args, cleanups))


def with_cleanups(work: Callable[[list[Callable[[], None]]], None]) -> int:
    """Run ``work(cleanups)``, then every cleanup it registered, newest first,
    also after an error or Ctrl-C (exit status 130)."""
    cleanups: list[Callable[[], None]] = []
    try:
        work(cleanups)
    except KeyboardInterrupt:
        print("interrupted; cleaning up", flush=True)
        return 130
    finally:
        for cleanup in reversed(cleanups):
            try:
                cleanup()
            except Exception as exc:  # the others must still run
                print(f"cleanup {cleanup}: {exc}", file=sys.stderr)
    return 0


def run(args: argparse.Namespace, cleanups: list[Callable[[], None]]) -> None:
    """The whole benchmark; ``cleanups`` undo what it started, last first."""
    private_redis = PrivateRedis(appendonly=False)
    cleanups.append(private_redis.stop)
    pg_pid: Callable[[], int] | None = None
    if args.postgres == "private":
        import psycopg

        pg = PrivatePostgres()
        cleanups.append(pg.stop)
        with psycopg.connect(pg.url("postgres"), autocommit=True) as conn:
            conn.execute(f"ALTER SYSTEM SET max_connections = {PG_MAX_CONNECTIONS}")
        pg.restart()
        postgres_url: str | None = pg.url("postgres")
        pg_pid = pg.server_pid
        database = (
            f"a private PostgreSQL {pg.bin.parent.name} (initdb in a temp dir as "
            f"harness/services.py makes it: fsync=off; max_connections="
            f"{PG_MAX_CONNECTIONS})"
        )
    else:
        postgres_url = pick_postgres("postgres")
        database = f"PostgreSQL at {postgres_url}"
    stack = scale_stack(args, postgres_url)
    cleanups.append(stack.stop)
    stack.extra_env.update(
        {
            "REDIS_URL": private_redis.url(0),
            "CELERY_BROKER_URL": private_redis.url(0),
            "CACHE_URL": private_redis.url(1),
            "REALTIME_OUTBOX": "false",
            "THROTTLE_TOKEN": API_RATE_LIMIT,
            "WORKER_ALIVE_FILE": str(stack.workdir / "worker-alive"),
        }
    )
    # The web image's pool, for the web processes only (a sync thread keeps its
    # connection for the whole watch, so the sync runs without a pool).
    stack.web_env["DATABASE_POOL_MAX_SIZE"] = POOL_MAX_SIZE
    stack.web_args = web_args(args.web_workers)

    # The pool's simulators build while the stack starts (idle until part 2).
    tmp = Path(tempfile.mkdtemp(prefix="vnpu-bench-rest-"))
    cleanups.append(lambda: shutil.rmtree(tmp, ignore_errors=True))
    simulators = 0 if args.rest_only else args.clusters
    kubeconfigs = [tmp / f"sim-{k}.kubeconfig" for k in range(simulators)]
    starter = ThreadPoolExecutor(max_workers=max(simulators, 1))
    futures = [starter.submit(_start_sim, args, kc, 900) for kc in kubeconfigs]

    def stop_sims() -> None:
        # Those still building too: their _start_sim then returns at once.
        for pid in _children(os.getpid()):
            with contextlib.suppress(OSError):
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
                if b"simcluster" in cmdline and str(tmp).encode() in cmdline:
                    os.kill(pid, signal.SIGTERM)
        starter.shutdown(wait=True)
        for future in futures:
            if future.exception() is None:
                processes.stop(future.result(), grace=15)

    cleanups.append(stop_sims)
    t0 = time.perf_counter()
    stack.start(wait_for_chips=args.nodes * 8, timeout=args.sync_timeout)
    os.environ.update(stack.env())
    import django

    django.setup()
    from django.db import connections

    cleanups.append(connections.close_all)
    demo = stack.cluster_id
    if demo is None:
        raise SystemExit("the stack registered no cluster")
    wait_listed([demo], time.perf_counter(), args.sync_timeout)
    demo_chips, demo_slices = counts(demo)
    line(
        f"stack up, cluster demo synced ({demo_chips} chips, {demo_slices} slices)",
        f"{time.perf_counter() - t0:7.1f} s",
    )
    sims = [f.result() for f in futures]
    line(f"{simulators} more simclusters up", f"{time.perf_counter() - t0:7.1f} s")

    admin = stack.api()
    tokens = []
    for k in range(args.clients):
        status, body = admin.call(
            "POST",
            "/api/tokens/",
            # admin: a viewer's token must be limited to queues, and these
            # read the whole cluster as the UI does
            {"username": f"bench-rest-{k}", "role": "admin", "name": "bench"},
        )
        if status != 201:
            raise SystemExit(f"token: {status} {body}")
        tokens.append(body["token"])

    connections_peak = ConnectionPeak(
        postgres_url or "", stack.database_url().rsplit("/", 1)[1]
    ).start()
    cleanups.append(connections_peak.stop)
    pool = Pool(stack, args.concurrency or args.clusters + 1)
    redis_pid = private_redis.process.pid if private_redis.process else 0
    bench = Bench(
        args, stack, pool, kubeconfigs, sims, pg_pid, redis_pid, connections_peak
    )

    print("-- configuration", flush=True)
    line(
        "  web",
        f"uvicorn vnpuportal.asgi:application, {args.web_workers} processes "
        f"(WEB_CONCURRENCY={args.web_workers}; auto on this machine: "
        f"{DEFAULT_WEB_WORKERS}), DATABASE_POOL_MAX_SIZE={POOL_MAX_SIZE}, "
        + " ".join(WEB_FLAGS),
    )
    line(
        "  settings",
        "vnpuportal.settings.base, DEBUG off; cache (the token throttle counts "
        "there), channel layer and broker on a private redis-server",
    )
    line("  database", database)
    line(
        "  clients",
        f"{args.clients} threads in one process, keep-alive HTTP/1.1, an API token "
        f"each (viewer); THROTTLE_TOKEN={API_RATE_LIMIT}: counted, never refused",
    )
    line(
        "  sync of demo", "manage.py sync --cluster demo (the e2e stack's), throughout"
    )
    line(
        "  sync pool (part 2)",
        "celery -A vnpuportal worker "
        + " ".join(pool.command()[6:])
        + ", and celery beat: sync_cluster_task -> sync_run, a thread per stream",
    )

    print(
        f"-- 1. REST, {args.clients} clients, {args.seconds:g} s per mix "
        f"(after {args.warmup:g} s warm-up), no sync load; cluster demo "
        f"({demo_chips} chips)",
        flush=True,
    )
    connections_peak.take()
    cpu0, sessions0 = bench.cpu(), connections_peak.sessions()
    unloaded = rest_run(stack.url, tokens, demo, args.seconds, args.warmup)
    cpu = cpu_line(cpu0, bench.cpu())
    # PostgreSQL counts a session as it ends and reports its statistics within
    # about a second; there is no event to wait on
    time.sleep(1)
    sessions = connections_peak.sessions() - sessions0
    print_run(unloaded, demo)
    print(key_figures(unloaded), flush=True)
    print(headline(unloaded, args.clients), flush=True)
    line("CPU used meanwhile", cpu)
    line(
        "PostgreSQL connections (most seen)",
        f"{connections_peak.take()}; sessions opened {sessions} for "
        f"{requests_sent(unloaded)} requests",
    )

    if not args.rest_only:
        part_two(bench, tokens, demo, unloaded)
    memory(bench)


if __name__ == "__main__":
    raise SystemExit(main())
