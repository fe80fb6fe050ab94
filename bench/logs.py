"""Benchmark: many pipelines following their jobs' logs and long-polling at once,
beside the REST API, on the portal as deployed.

Run: ``python -m bench.logs [--followers 50] [--waiters 200] [--seconds 20]``
(``--quick``: 6 s windows after 2 s of warm-up, the same followers and
waiters; about 2 minutes). Needs PostgreSQL's server binaries (a private
server in a temp directory, as ``bench.rest`` makes it; ``--postgres shared``
uses ``DATABASE_URL``'s) and ``redis-server``. Everything it starts is stopped
and removed at the end, also after an error or Ctrl-C.

The portal runs as ``bench.rest`` runs it (``docker/entrypoint-web.sh``'s
uvicorn flags, a process per CPU with a pool of PostgreSQL connections each
(``--web-workers``), DEBUG off, Redis for the cache, the channel layer
and the broker, a Celery worker and beat: ``bench.rest.Pool``) on simcluster's
``burst`` scenario (the guide with enough 310P nodes for the jobs), watched by
``manage.py sync``. ``--followers`` jobs (vir01 each, queue ``ci``) are
submitted by tokens of role ``ci`` limited to that queue, with the job
contract's env: each prints ``--line-rate`` lines a second of ``--line-bytes``
bytes (``SIMCLUSTER_LOG``) for as long as both windows last
(``SIMCLUSTER_RUN_SECONDS``), then ends with code 0.

Once every job runs, measured in the same run, from load processes of their
own (spawned: no GIL shared with the portal or each other):

(a) the API alone: ``--clients`` threads with a kept-alive connection and a
    token each, alternating ``/api/me/`` (trivial) and
    ``/api/requests/<id>/`` (the jobs in turn), as fast as answers come:
    p50/p95/p99 of each;
(b) the same, while ``--followers`` clients follow the jobs' logs
    (``/logs/?follow=true&timestamps=true``, one per job) and ``--waiters``
    long polls (``?wait=finished``, spread over the jobs) are open, from a
    second process (asyncio, aiohttp): time to the status line and to the
    first log byte; lines and bytes a second received; how late each line
    printed while followed arrived (its kubelet timestamp against the
    arrival); every follower's lines against its job's (lost, duplicated, out
    of order); when each stream ended and each waiter was answered after its
    job ended (the first line's timestamp plus the run time); and the API's
    p95 over (a)'s.
During both: the web processes' CPU, their threads and sockets (to
PostgreSQL, to the cluster's API server, from clients; read from ``/proc``),
and the connections to the portal's database (``pg_stat_activity``), sampled
every 0.25 s: the most seen.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import signal
import sys
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.logstreams import (  # noqa: E402
    FINISHED,
    LAG_BEHIND_S,
    Followed,
    WebSampler,
    followed,
    job_lines,
    percentile,
    ready,
    split_stamped,
    streams,
)
from bench.rest import (  # noqa: E402
    API_RATE_LIMIT,
    DEFAULT_WEB_WORKERS,
    POOL_MAX_SIZE,
    WEB_FLAGS,
    Figures,
    Pool,
    hammer,
    web_args,
    with_cleanups,
)
from bench.ui import line, pick_postgres  # noqa: E402
from harness.services import PrivatePostgres, PrivateRedis  # noqa: E402
from harness.stack import Stack  # noqa: E402

ME = "/api/me/"
DETAIL = "detail"
VIR01_PER_NODE = 20  # a 310P node of 4 chips holds 28 vir01; room to spare


def run_seconds(warmup: float, seconds: float, margin: float) -> float:
    """How long each job runs: both windows, their warm-ups and ``margin``
    (spawning the load, the streams' end), so the jobs outlive window (b)."""
    return 2 * (warmup + seconds) + margin


# --- the portal: stack, tokens, jobs ----------------------------------------------------


@dataclass
class Portal:
    stack: Stack
    admin_url: str
    ports: dict[str, int]
    database: str


def start_portal(
    args: argparse.Namespace, cleanups: list[Callable[[], None]]
) -> Portal:
    """bench.rest's deployment (``--web-workers`` uvicorn processes with the
    production flags and a connection pool each, Redis, a worker and beat) on
    simcluster ``burst`` with room for the jobs."""
    redis = PrivateRedis(appendonly=False)
    cleanups.append(redis.stop)
    if args.postgres == "private":
        pg = PrivatePostgres()
        cleanups.append(pg.stop)
        postgres_url = pg.url("postgres")
        database = f"a private PostgreSQL {pg.bin.parent.name} (fsync=off)"
    else:
        postgres_url = pick_postgres("postgres") or ""
        database = f"PostgreSQL at {postgres_url}"
    nodes = math.ceil(args.followers / VIR01_PER_NODE) + 1
    stack = Stack(
        "burst",
        sim_options={"nodes": nodes, "ready_delay": 0.1, "pod_shutdown_seconds": 0.3},
        sync_seconds=7200,
        log=lambda msg: line("  " + msg, ""),
        postgres_url=postgres_url,
    )
    cleanups.append(stack.stop)
    stack.extra_env.update(
        {
            "REDIS_URL": redis.url(0),
            "CELERY_BROKER_URL": redis.url(0),
            "CACHE_URL": redis.url(1),
            "REALTIME_OUTBOX": "false",
            "THROTTLE_TOKEN": API_RATE_LIMIT,
            "THROTTLE_REQUEST_CREATE": "100000/min",
            "WORKER_ALIVE_FILE": str(stack.workdir / "worker-alive"),
        }
    )
    stack.web_args = web_args(args.web_workers)
    stack.web_env["DATABASE_POOL_MAX_SIZE"] = POOL_MAX_SIZE
    stack.start(wait_for_chips=nodes * 4, timeout=300)
    os.environ.update(stack.env())
    import django

    django.setup()
    from django.db import connections

    cleanups.append(connections.close_all)
    Pool(stack, 2).start()  # stopped with the stack (its processes)
    line("  database", database)
    line(
        "  web",
        f"uvicorn, {args.web_workers} processes, DATABASE_POOL_MAX_SIZE="
        f"{POOL_MAX_SIZE}, " + " ".join(WEB_FLAGS),
    )
    pg_port = urlsplit(postgres_url).port or 5432
    ports = {
        "web": stack.port,
        "postgres": pg_port,
        "cluster": urlsplit(stack.sim.url).port or 443,
        "redis": redis.port,
    }
    return Portal(stack, postgres_url, ports, stack.database_url().rsplit("/", 1)[1])


def _call(base: str, method: str, path: str, token: str, body: Any = None) -> Any:
    request = urllib.request.Request(  # noqa: S310 - our own http://127.0.0.1 URL
        base + path,
        data=json.dumps(body).encode() if body is not None else None,
        method=method,
        headers={
            "Authorization": f"Bearer {token}",
            "Content-Type": "application/json",
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=120) as response:  # noqa: S310
            return json.loads(response.read())
    except urllib.error.HTTPError as exc:
        raise SystemExit(f"{method} {path}: {exc.code} {exc.read()[:300]!r}") from None


def make_tokens(stack: Stack, count: int) -> list[str]:
    """Pipelines' tokens: role ci, limited to queue ci (as docs/pipelines.md says)."""
    admin = stack.api()
    out = []
    for k in range(count):
        status, body = admin.call(
            "POST",
            "/api/tokens/",
            {"username": f"bench-logs-{k}", "role": "ci", "queues": ["ci"]},
        )
        if status != 201:
            raise SystemExit(f"token: {status} {body}")
        out.append(body["token"])
    return out


def submit_jobs(
    base: str, tokens: list[str], logs: list[list[str]], run_s: float
) -> list[int]:
    ids = []
    for k, lines in enumerate(logs):
        env = {
            "SIMCLUSTER_RUN_SECONDS": f"{run_s:g}",
            "SIMCLUSTER_LOG": "\n".join(lines),
        }
        body = {
            "cluster": "demo",
            "namespace": "ci",
            "queue": "ci",
            "chip_type": "Ascend310P",
            "template": "vir01",
            "priority": "batch-medium",
            "workload": {"image": "busybox", "command": ["train"], "env": env},
            "time_limit_seconds": int(run_s) + 600,
        }
        ids.append(_call(base, "POST", "/api/requests/", tokens[k], body)["id"])
    return ids


def wait_running(ids: list[int], timeout: float) -> list[Any]:
    """Until every job runs (its ``running_at``, by the database)."""
    from apps.scheduling.models import Request

    deadline = time.monotonic() + timeout
    while True:
        rows = list(Request.objects.filter(pk__in=ids).order_by("pk"))
        if all(r.state == "running" for r in rows):
            return [r.running_at for r in rows]
        if time.monotonic() > deadline:
            late = Counter(f"{r.state} ({r.reason})"[:90] for r in rows)
            raise SystemExit(f"not all jobs run after {timeout:g} s: {dict(late)}")
        time.sleep(0.5)  # the figure is how long it took; 0.5 s is its resolution


# --- the two windows ---------------------------------------------------------------------


def api_figures(raw: dict[str, dict[str, Any]], seconds: float) -> dict[str, Figures]:
    """``hammer``'s answer by endpoint: /api/me/, and every request detail as one."""
    out: dict[str, Figures] = {}
    for path, got in raw.items():
        name = ME if path == ME else DETAIL
        fig = out.setdefault(name, Figures([], {}, 0, seconds, 0))
        fig.latencies = sorted(fig.latencies + got["latencies"])
        fig.size, fig.sent = max(fig.size, got["bytes"]), fig.sent + got["sent"]
        for status, n in got["errors"].items():
            fig.errors[status] = fig.errors.get(status, 0) + n
    return out


def api_paths(ids: list[int]) -> list[str]:
    """``/api/me/`` and a job's detail in turn (ten jobs at most)."""
    out = []
    for rid in ids[:10]:
        out += [ME, f"/api/requests/{rid}/"]
    return out


def print_api(alone: dict[str, Figures], loaded: dict[str, Figures]) -> None:
    print(
        f"  {'':<4}{'endpoint':<24}{'n':>6}{'req/s':>7}{'p50 ms':>8}"
        f"{'p95 ms':>8}{'p99 ms':>8}{'err':>4}  p95 (b) : (a)",
        flush=True,
    )
    for label, run in (("(a)", alone), ("(b)", loaded)):
        for name, fig in run.items():
            shown = ME if name == ME else "/api/requests/<id>/"
            row = (
                f"  {label:<4}{shown:<24}{len(fig.latencies):>6}{fig.rate:>7.1f}"
                f"{fig.p(0.50):>8.0f}{fig.p(0.95):>8.0f}{fig.p(0.99):>8.0f}"
                f"{sum(fig.errors.values()):>4}"
            )
            if run is loaded:
                row += f"  {fig.p(0.95) / alone[name].p(0.95):12.2f}x"
            if fig.errors:
                row += f"  {fig.errors}"
            print(row, flush=True)


def print_sampled(label: str, peak: dict[str, float], last: dict[str, float]) -> None:
    def both(key: str) -> str:
        return f"{peak.get(key, 0):.0f}/{last.get(key, 0):.0f}"

    line(
        f"  {label}",
        f"threads {both('threads')}; sockets from clients {both('clients')}, to "
        f"PostgreSQL {both('postgres')}, the cluster {both('cluster')}, Redis "
        f"{both('redis')}; database sessions (every process) {both('db_sessions')};"
        f" web CPU {peak['cpu_cores']:.2f} cores (machine {peak['machine_cores']:.2f}"
        f" of {os.cpu_count()})",
    )


def print_followed(got: Followed, args: argparse.Namespace) -> None:
    ms = 1000
    line(
        "  time to the status line p50 / p95 / max",
        f"{percentile(got.headers, 0.5) * ms:.0f} / "
        f"{percentile(got.headers, 0.95) * ms:.0f} / "
        f"{max(got.headers, default=math.nan) * ms:.0f} ms",
    )
    line(
        "  time to the first log byte p50 / p95 / max",
        f"{percentile(got.ttfb, 0.5) * ms:.0f} / {percentile(got.ttfb, 0.95) * ms:.0f}"
        f" / {max(got.ttfb, default=math.nan) * ms:.0f} ms",
    )
    line(
        "  received, all followers",
        f"{got.lines} lines, {got.bytes / 1e6:.2f} MB in {got.seconds:.1f} s: "
        f"{got.lines / got.seconds:.0f} lines/s, {got.bytes / got.seconds / 1e3:.0f} kB/s"
        f" (the jobs print {args.followers * args.line_rate:g} lines/s; the lines "
        "already printed came at once)",
    )
    line(
        "  lines printed while followed: late by p50 / p95 / max",
        f"{percentile(got.live_lags, 0.5) * ms:.0f} / "
        f"{percentile(got.live_lags, 0.95) * ms:.0f} / "
        f"{max(got.live_lags, default=math.nan) * ms:.0f} ms "
        f"({len(got.live_lags)} lines); followers behind by > {LAG_BEHIND_S:g} s: "
        f"{got.behind}",
    )
    lost = sum(c.lost for c in got.compared)
    line(
        "  against the jobs' lines",
        f"lost {lost}, duplicated {sum(c.duplicated for c in got.compared)}, "
        f"unexpected {sum(c.unexpected for c in got.compared)}, followers out of "
        f"order {sum(not c.in_order for c in got.compared)}; followers with every "
        f"line {sum(c.lost == 0 for c in got.compared)} of {len(got.compared)}",
    )
    line(
        "  stream ended after its job p50 / max",
        f"{percentile(got.ended_after, 0.5):.2f} / "
        f"{max(got.ended_after, default=math.nan):.2f} s",
    )
    if got.errors:
        line("  followers failed", f"{len(got.errors)}: {Counter(got.errors)}")


def print_waited(
    waits: list[dict[str, Any]], job_end_ns: dict[int, int], rids: list[int]
) -> None:
    states = Counter(w["state"] or f"{w['status']} {w['error']}"[:80] for w in waits)
    late = [
        (w["answered_ns"] - job_end_ns[rid]) / 1e9
        for w, rid in zip(waits, rids, strict=True)
        if rid in job_end_ns and w["state"] in FINISHED
    ]
    heads = [w["headers_s"] * 1000 for w in waits if w["status"]]
    line(
        "  long polls: status line p50 / p95",
        f"{percentile(heads, 0.5):.0f} / {percentile(heads, 0.95):.0f} ms",
    )
    line(
        "  long polls: answered after the job ended p50 / p95 / max",
        f"{percentile(late, 0.5):.2f} / {percentile(late, 0.95):.2f} / "
        f"{max(late, default=math.nan):.2f} s; states {dict(states)}",
    )
    early = [
        (w["answered_ns"] - w["sent_ns"]) / 1e9
        for w in waits
        if w["status"] == 200 and w["state"] not in FINISHED
    ]
    if early:
        line(
            "  long polls answered before their job ended",
            f"{len(early)}, after {min(early):.1f} to {max(early):.1f} s",
        )


# --- main --------------------------------------------------------------------------------

Sampled = list[tuple[str, dict[str, float], dict[str, float]]]


def start_jobs(
    args: argparse.Namespace, stack: Stack, tokens: list[str]
) -> tuple[list[int], list[list[str]], float]:
    """Submit the jobs and wait until each runs: their ids, lines and run time."""
    run_s = run_seconds(args.warmup, args.seconds, args.margin)
    count = max(1, round(run_s * args.line_rate))
    logs = [job_lines(k, count, args.line_bytes) for k in range(args.followers)]
    t0 = time.perf_counter()
    ids = submit_jobs(stack.url, tokens, logs, run_s)
    posted = time.perf_counter() - t0
    started = wait_running(ids, args.run_timeout)
    spread = (max(started) - min(started)).total_seconds()
    line(
        f"{len(ids)} jobs running ({count} lines of {args.line_bytes} B over "
        f"{run_s:g} s each)",
        f"POSTs {posted:.1f} s, all running {time.perf_counter() - t0:.1f} s "
        f"(first to last start {spread:.1f} s)",
    )
    return ids, logs, run_s


def measure(args: argparse.Namespace, portal: Portal, cleanups: list[Any]) -> None:
    stack = portal.stack
    tokens = make_tokens(stack, max(args.clients, args.followers))
    ids, logs, run_s = start_jobs(args, stack, tokens)
    web = stack.procs["web"].pid
    sampler = WebSampler(web, portal.ports, portal.admin_url, portal.database).start()
    cleanups.append(sampler.stop)
    sampled: Sampled = []
    spawn = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(max_workers=2, mp_context=spawn)
    with pool, spawn.Manager() as manager:
        for up in [pool.submit(ready), pool.submit(ready)]:
            up.result()  # both load processes up before anything is timed
        paths, clients = api_paths(ids), tokens[: args.clients]
        print(f"-- (a) the API alone: {args.clients} clients", flush=True)
        sampler.begin()
        raw = pool.submit(hammer, stack.url, clients, paths, args.seconds, args.warmup)
        alone = api_figures(raw.result(), args.seconds)
        sampled.append(("(a) the API alone", *sampler.take()))
        follows = [(rid, tokens[k]) for k, rid in enumerate(ids)]
        waits = [(ids[k % len(ids)], tokens[k % len(ids)]) for k in range(args.waiters)]
        wait_timeout = min(300, math.ceil(run_s) + 60)
        print(
            f"-- (b) the same once {len(follows)} follow the logs and "
            f"{len(waits)} long polls wait (?wait=finished&timeout={wait_timeout})",
            flush=True,
        )
        sampler.begin()
        all_open = manager.Event()
        opened = pool.submit(
            streams, stack.url, follows, waits, wait_timeout, run_s + 120, all_open
        )
        if not all_open.wait(args.run_timeout):
            raise SystemExit(f"not every stream opened in {args.run_timeout:g} s")
        sampled.append(("opening them (no API load)", *sampler.take()))
        sampler.begin()
        raw = pool.submit(hammer, stack.url, clients, paths, args.seconds, args.warmup)
        loaded = api_figures(raw.result(), args.seconds)
        sampled.append(("(b) the API, all of them open", *sampler.take()))
        seen = opened.result()
    report(args, alone, loaded, sampled, seen, logs, ids, run_s)


def report(
    args: argparse.Namespace,
    alone: dict[str, Figures],
    loaded: dict[str, Figures],
    sampled: Sampled,
    seen: dict[str, Any],
    logs: list[list[str]],
    ids: list[int],
    run_s: float,
) -> None:
    print("-- the API, p95 (b) over (a) in the same run", flush=True)
    print_api(alone, loaded)
    print("-- the web processes: the most seen (every 0.25 s) / at the end", flush=True)
    for label, peak, last in sampled:
        print_sampled(label, peak, last)
    print(
        f"-- the {len(seen['follows'])} followers (every stream open after "
        f"{seen['open_s']:.1f} s)",
        flush=True,
    )
    got = followed(seen["follows"], logs, run_s)
    print_followed(got, args)
    ends = {
        rid: split_stamped(f["lines"][0][1])[0] + int(run_s * 1e9)
        for rid, f in zip(ids, seen["follows"], strict=True)
        if f["lines"] and f["status"] == 200
    }
    print_waited(seen["waits"], ends, [ids[k % len(ids)] for k in range(args.waiters)])
    ratio = {n: loaded[n].p(0.95) / alone[n].p(0.95) for n in (ME, DETAIL)}
    held = sampled[-1][2]
    print(
        f"logs_ttfb_p50_ms={percentile(got.ttfb, 0.5) * 1000:.0f} "
        f"logs_ttfb_p95_ms={percentile(got.ttfb, 0.95) * 1000:.0f} "
        f"logs_all_open_s={seen['open_s']:.1f} "
        f"logs_lines_per_s={got.lines / got.seconds:.0f} "
        f"logs_kbytes_per_s={got.bytes / got.seconds / 1e3:.0f} "
        f"logs_live_lag_p95_ms={percentile(got.live_lags, 0.95) * 1000:.0f} "
        f"logs_lost={sum(c.lost for c in got.compared)} "
        f"logs_behind={got.behind} "
        f"api_p95_ms_me={alone[ME].p(0.95):.0f}/{loaded[ME].p(0.95):.0f} "
        f"api_p95_ms_detail={alone[DETAIL].p(0.95):.0f}/{loaded[DETAIL].p(0.95):.0f} "
        f"api_p95_ratio_me={ratio[ME]:.2f} api_p95_ratio_detail={ratio[DETAIL]:.2f} "
        f"web_threads_held={held.get('threads', 0):.0f} "
        f"web_pg_connections_held={held.get('postgres', 0):.0f}",
        flush=True,
    )


def _interrupt(*_: Any) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.logs")
    parser.add_argument("--quick", action="store_true", help="6 s windows")
    parser.add_argument("--followers", type=int, default=50, help="jobs followed")
    parser.add_argument("--waiters", type=int, default=200, help="long polls open")
    parser.add_argument("--clients", type=int, default=20, help="API clients")
    parser.add_argument(
        "--web-workers",
        type=int,
        default=DEFAULT_WEB_WORKERS,
        help="uvicorn processes (default: as WEB_CONCURRENCY=auto here)",
    )
    parser.add_argument("--seconds", type=float, default=20, help="each window")
    parser.add_argument("--warmup", type=float, default=3, help="before each window")
    parser.add_argument("--line-rate", type=float, default=10, help="per job, /s")
    parser.add_argument("--line-bytes", type=int, default=80)
    parser.add_argument(
        "--margin", type=float, default=20, help="seconds the jobs run past (b)"
    )
    parser.add_argument("--run-timeout", type=float, default=180)
    parser.add_argument("--postgres", choices=["private", "shared"], default="private")
    args = parser.parse_args(argv)
    if args.quick:
        args.seconds, args.warmup = 6, 2
    if args.followers < 1 or args.clients < 1 or args.waiters < 0:
        parser.error("--followers and --clients must be at least 1")
    signal.signal(signal.SIGTERM, _interrupt)
    print(
        f"== vNPU Portal logs benchmark: {args.followers} followers, {args.waiters} "
        f"long polls, {args.clients} API clients; {os.cpu_count()} CPUs",
        flush=True,
    )
    return with_cleanups(
        lambda cleanups: measure(args, start_portal(args, cleanups), cleanups)
    )


if __name__ == "__main__":
    raise SystemExit(main())
