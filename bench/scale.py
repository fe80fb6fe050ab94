"""Benchmark: the portal at 1x, 3x and 10x the reference scale, and how it grows.

Run: ``python -m bench.scale`` (sizes 1x, 3x and 10x of 1,000 nodes x 8 chips and
30,000 pods, 20,000 of them holding slices); ``--quick`` for 0.1x, 0.3x and 1x;
``--factors 1,10`` to choose; ``--no-browser`` to skip Chromium. Needs
PostgreSQL (``BENCH_DATABASE_URL``, default
``postgres://postgres@127.0.0.1:5432/test``: a database ``vnpu_bench_scale`` is
made beside it for each size and dropped after) and, for the page loads,
Debian's Chromium. About 15 minutes on two cores with 10x; 10x needs ~8 GB RAM.

Every part runs in a process of its own, as in production, so that each one's
time and peak memory can be read on its own. For each size:

1. simcluster serves the ``scale`` scenario at that size;
2. **download + parse**: a process that only lists the nodes and pods the way
   sync does (``kubeapi.list_all``): its time and peak RSS, the floor of a sync;
3. **initial sync**: ``manage.py sync --once`` (what a worker runs first): its
   time, its peak RSS, both as ratios to (2); PostgreSQL's memory during it
   (the peak of the summed proportional set size of its processes, minus what
   they held before) and the database's size after;
4. **the web process** (uvicorn, as ``scripts/run.sh`` runs it) on that
   database: the REST reads the pages make (median of runs), the chips page
   and the overview usable in Chromium (warm, median), and its peak RSS;
5. **the allocator**: placements per second of the pure allocator on that
   many chips (``bench.allocator``'s reference scenario at that node count).

Then every figure's growth from the first size to the others, beside the growth
of the size itself: a figure that grows by no more than the size grows linearly
or better.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.sync import (  # noqa: E402
    _bench_db_url,
    _drop_db,
    _recreate_db,
    _start_sim,
)
from harness import processes  # noqa: E402

REFERENCE = {"nodes": 1000, "pods": 30000, "slice_pods": 20000}
DB_NAME = "vnpu_bench_scale"
PAGE_AIM_S = 2.0


@dataclass
class Figures:
    """What one size measured (seconds, MiB, counts)."""

    factor: float
    nodes: int
    pods: int
    slice_pods: int
    download_s: float = 0.0
    download_rss_mib: float = 0.0
    sync_s: float = 0.0
    sync_rss_mib: float = 0.0
    postgres_mib: float = 0.0
    database_mib: float = 0.0
    chips: int = 0
    slices: int = 0
    rest_ms: dict[str, float] = field(default_factory=dict)
    page_s: dict[str, float] = field(default_factory=dict)
    web_rss_mib: float = 0.0
    placements_per_s: float = 0.0


# --- processes and their memory ---------------------------------------------------


def _run_measured(
    command: list[str], env: dict[str, str], what: str
) -> tuple[float, float, str]:
    """Run a command to its end: (seconds, peak RSS in MiB, its output).

    ``wait4`` gives the child's own peak RSS (``ru_maxrss``), however short
    its peak was; sampling /proc would miss it.
    """
    with tempfile.TemporaryFile(mode="w+") as out:
        started = time.perf_counter()
        proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=out)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read()
    if proc.returncode != 0:
        raise SystemExit(f"{what} failed ({proc.returncode}):\n{text[-3000:]}")
    return seconds, usage.ru_maxrss / 1024, text


def _postgres_pids() -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            if (entry / "comm").read_text().strip() in ("postgres", "postmaster"):
                pids.append(int(entry.name))
    return pids


def _pss_mib(pids: list[int]) -> float:
    """Summed proportional set size: shared buffers counted once, not per process."""
    total_kib = 0
    for pid in pids:
        with contextlib.suppress(OSError):
            for row in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if row.startswith("Pss:"):
                    total_kib += int(row.split()[1])
                    break
    return total_kib / 1024


@contextlib.contextmanager
def _postgres_peak() -> Iterator[Callable[[], float]]:
    """Sample PostgreSQL's memory every 0.2 s; yields a reader of the peak growth."""
    before = _pss_mib(_postgres_pids())
    peak = [before]
    stop = threading.Event()

    def sample() -> None:
        while not stop.wait(0.2):
            peak[0] = max(peak[0], _pss_mib(_postgres_pids()))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        yield lambda: peak[0] - before
    finally:
        stop.set()
        sampler.join()


def _vm_hwm_mib(pid: int) -> float:
    for row in Path(f"/proc/{pid}/status").read_text().splitlines():
        if row.startswith("VmHWM:"):
            return int(row.split()[1]) / 1024
    return 0.0


# --- the parts ----------------------------------------------------------------------


def child(part: str, kubeconfig: str) -> None:
    """``--child download|sync KUBECONFIG``: one part in a process of its own.

    Both parts start Django, so their peak RSS have the same floor, and both
    time themselves, so neither counts the interpreter's start. ``download``
    lists nodes and pods as sync does and stops there; ``sync`` is the
    initial sync of the cluster ``demo`` (``manage.py sync --once``).
    Prints the seconds.
    """
    import django

    django.setup()
    from apps.inventory.kube import api_client_for
    from apps.inventory.models import Cluster
    from apps.inventory.sync import kubeapi
    from apps.inventory.sync.engine import sync_once

    cluster = Cluster.objects.get(name="demo")
    started = time.perf_counter()
    if part == "download":
        api = api_client_for(cluster)
        kubeapi.list_all(api, "/api/v1/nodes")
        kubeapi.list_all(api, "/api/v1/pods")
    else:
        sync_once(cluster)
    print(f"{time.perf_counter() - started:.3f}")


def _portal_env(database_url: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        DJANGO_SETTINGS_MODULE="vnpuportal.settings.base",
        DATABASE_URL=database_url,
        DJANGO_SECRET_KEY=os.environ.get("DJANGO_SECRET_KEY", "bench-" + "x" * 50),
        DJANGO_DEBUG="false",
        DJANGO_SECURE="false",
        REDIS_URL="",
        REALTIME_OUTBOX="true",
        CELERY_BROKER_URL="memory://",
        LOG_LEVEL="WARNING",
        THROTTLE_LOGIN="600/min",
        PYTHONPATH=str(ROOT),
    )
    return env


def _manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"manage.py {' '.join(args)} failed:\n{done.stderr[-3000:]}")
    return done.stdout


def _database_counts(database_url: str) -> tuple[int, int, float]:
    """(chips, slices, the database's size in MiB)."""
    import psycopg

    url = database_url.replace("postgres://", "postgresql://")
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT (SELECT count(*) FROM inventory_chip),"
            " (SELECT count(*) FROM inventory_slice),"
            " pg_database_size(current_database())"
        ).fetchone()
    if row is None:
        raise SystemExit("the database did not answer its counts")
    return row[0], row[1], row[2] / 2**20


def _web_figures(
    env: dict[str, str], figures: Figures, runs: int, browser: bool
) -> None:
    """Start uvicorn on the size's database; REST and page loads; its peak RSS."""
    from harness.stack import ApiClient

    port = processes.free_port()
    url = f"http://127.0.0.1:{port}"
    web = processes.start(
        "web",
        processes.uvicorn_command(port, "--log-level", "warning"),
        Path(tempfile.mkdtemp(prefix="vnpu-bench-scale-")),
        env=env,
    )
    try:
        # any answer will do (405 for a GET of the login endpoint)
        processes.wait_for_http(url + "/api/auth/login/", watched=[web])
        client = ApiClient(url)
        client.login()
        status, clusters = client.call("GET", "/api/clusters/")
        if status != 200:
            raise SystemExit(f"GET /api/clusters/: {status}")
        cid = (
            clusters["results"][0]["id"] if "results" in clusters else clusters[0]["id"]
        )
        reads = {
            "trivial (/api/me/)": "/api/me/",
            "chip-usage (every chip)": f"/api/clusters/{cid}/chip-usage/",
            "summary": f"/api/clusters/{cid}/summary/",
            "chip list (first page)": f"/api/chips/?cluster={cid}",
        }
        for name, path in reads.items():
            times = []
            for _ in range(runs):
                started = time.perf_counter()
                status, _ = client.call("GET", path)
                times.append(time.perf_counter() - started)
                if status != 200:
                    raise SystemExit(f"GET {path}: {status}")
            figures.rest_ms[name] = statistics.median(times) * 1000
        if browser:
            figures.page_s.update(_page_loads(url, figures.nodes * 8, runs))
        figures.web_rss_mib = _vm_hwm_mib(web.pid)
    finally:
        processes.stop(web, grace=20)


def _page_loads(url: str, chips: int, runs: int) -> dict[str, float]:
    """Median warm navigation-start-to-usable of the chips page and the overview."""
    from playwright.sync_api import sync_playwright

    from bench.ui import OVERVIEW_JS, USABLE_JS
    from harness.stack import CHROMIUM, CHROMIUM_ARGS

    expected = f"{chips:,}"
    loads: dict[str, list[float]] = {"chips page": [], "overview": []}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        try:
            page = browser.new_context(
                viewport={"width": 1440, "height": 900}
            ).new_page()
            page.set_default_timeout(300_000)
            page.goto(url + "/")
            page.fill("input[name=username]", "admin")
            page.fill("input[name=password]", "admin")
            page.click("button[type=submit]")
            page.wait_for_selector("[data-testid=connection]")
            # One load of each first: the warm figures below are what an admin
            # who has the portal open sees (bundle and fonts cached).
            for attempt in range(runs + 1):
                for name, path, check in (
                    ("chips page", "/chips", USABLE_JS),
                    ("overview", "/", OVERVIEW_JS),
                ):
                    page.goto(url + path)
                    page.wait_for_function(check, arg=expected, polling="raf")
                    usable = page.evaluate("performance.now()") / 1000
                    if attempt:
                        loads[name].append(usable)
        finally:
            browser.close()
    return {name: statistics.median(values) for name, values in loads.items()}


def _placements_per_s(nodes: int, requests: int) -> float:
    from apps.scheduling.allocator import Policy, Strategy, allocate
    from bench.allocator import RULES, reference_scenario

    scenario = reference_scenario(
        seed=20_240_601, nodes=nodes, chips_per_node=8, requests=requests
    )
    started = time.perf_counter()
    result = allocate(
        scenario.requests,
        scenario.chips,
        RULES,
        policy=Policy(Strategy.BINPACK),
        quotas=scenario.quotas,
        running=scenario.running,
        now_s=90_000.0,
    )
    return len(result.placements) / (time.perf_counter() - started)


# --- one size --------------------------------------------------------------------------


def measure(factor: float, base: str, args: argparse.Namespace) -> Figures:
    size = {key: round(value * factor) for key, value in REFERENCE.items()}
    figures = Figures(factor=factor, **size)
    print(
        f"== {factor:g}x: {size['nodes']:,} nodes x 8 chips, {size['pods']:,} pods "
        f"({size['slice_pods']:,} with slices)",
        flush=True,
    )
    _recreate_db(base, DB_NAME)
    database_url = _bench_db_url(base, DB_NAME)
    env = _portal_env(database_url)
    tmp = Path(tempfile.mkdtemp(prefix="vnpu-bench-scale-"))
    kubeconfig = tmp / "kubeconfig"
    started = time.perf_counter()
    sim = _start_sim(argparse.Namespace(**size), kubeconfig, timeout=120 + 60 * factor)
    try:
        print(f"  simcluster up in {time.perf_counter() - started:.1f} s", flush=True)
        _manage(env, "migrate", "--noinput")
        _manage(env, "demo", "--kubeconfig", str(kubeconfig))

        # The floor, twice (the best): the second has the server's caches warm.
        download = [_child(env, "download", kubeconfig) for _ in range(2)]
        figures.download_s = min(seconds for seconds, _ in download)
        figures.download_rss_mib = max(rss for _, rss in download)
        with _postgres_peak() as postgres_growth:
            figures.sync_s, figures.sync_rss_mib = _child(env, "sync", kubeconfig)
            figures.postgres_mib = postgres_growth()
        figures.chips, figures.slices, figures.database_mib = _database_counts(
            database_url
        )
        print(
            f"  download + parse {figures.download_s:.2f} s ({figures.download_rss_mib:,.0f} MiB); "
            f"initial sync {figures.sync_s:.2f} s ({figures.sync_rss_mib:,.0f} MiB), "
            f"{figures.chips:,} chips, {figures.slices:,} slices",
            flush=True,
        )
        _web_figures(env, figures, args.runs, browser=not args.no_browser)
    finally:
        processes.stop(sim, grace=30)
        if not args.keep_database:
            _drop_db(base, DB_NAME)
    figures.placements_per_s = _placements_per_s(size["nodes"], args.requests)
    return figures


def _child(env: dict[str, str], part: str, kubeconfig: Path) -> tuple[float, float]:
    """(seconds the part took, the process's peak RSS in MiB)."""
    _, rss, output = _run_measured(
        [sys.executable, "-m", "bench.scale", "--child", part, str(kubeconfig)],
        env,
        part,
    )
    return float(output.strip().splitlines()[-1]), rss


# --- the report ------------------------------------------------------------------------


def report(all_figures: list[Figures]) -> None:
    first = all_figures[0]
    print("== figures", flush=True)
    header = f"{'':44s}" + "".join(f"{f.factor:>12g}x" for f in all_figures)
    print(header)

    def row(label: str, value: Callable[[Figures], float], fmt: str) -> None:
        print(
            f"{label:44s}"
            + "".join(f"{format(value(f), fmt):>13s}" for f in all_figures)
        )

    row("chips", lambda f: f.chips, ",.0f")
    row("slices", lambda f: f.slices, ",.0f")
    row("download + parse (s)", lambda f: f.download_s, ".2f")
    row("initial sync (s)", lambda f: f.sync_s, ".2f")
    row(
        "  ratio to download + parse (aim <= 2.0)",
        lambda f: f.sync_s / f.download_s,
        ".2f",
    )
    row("peak RSS, download + parse (MiB)", lambda f: f.download_rss_mib, ",.0f")
    row("peak RSS, sync worker (MiB)", lambda f: f.sync_rss_mib, ",.0f")
    row("PostgreSQL memory growth during sync (MiB)", lambda f: f.postgres_mib, ",.0f")
    row("database size after sync (MiB)", lambda f: f.database_mib, ",.0f")
    for name in first.rest_ms:
        row(f"GET {name} (ms)", lambda f, n=name: f.rest_ms[n], ",.0f")
    for name in first.page_s:
        row(
            f"{name} usable, warm (s; aim <= {PAGE_AIM_S:g})",
            lambda f, n=name: f.page_s[n],
            ".2f",
        )
    row("peak RSS, web process (MiB)", lambda f: f.web_rss_mib, ",.0f")
    row("allocator placements/s", lambda f: f.placements_per_s, ",.0f")

    print("== growth from the first size (linear: the size's own growth)", flush=True)
    print(
        f"{'':44s}"
        + "".join(f"{f.factor / first.factor:>12g}x" for f in all_figures[1:])
    )

    def growth(label: str, value: Callable[[Figures], float]) -> None:
        cells = []
        for f in all_figures[1:]:
            ratio = value(f) / value(first) if value(first) else float("nan")
            cells.append(f"{ratio:>13.2f}")
        print(f"{label:44s}" + "".join(cells))

    growth("initial sync time", lambda f: f.sync_s)
    growth("peak RSS, sync worker", lambda f: f.sync_rss_mib)
    growth("PostgreSQL memory growth", lambda f: f.postgres_mib)
    growth("database size", lambda f: f.database_mib)
    for name in first.rest_ms:
        growth(f"GET {name}", lambda f, n=name: f.rest_ms[n])
    for name in first.page_s:
        growth(f"{name} usable", lambda f, n=name: f.page_s[n])
    growth("peak RSS, web process", lambda f: f.web_rss_mib)
    growth("time per placement", lambda f: 1 / f.placements_per_s)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.scale")
    parser.add_argument("--quick", action="store_true", help="0.1x, 0.3x and 1x")
    parser.add_argument(
        "--factors", default=None, help="comma-separated sizes (default 1,3,10)"
    )
    parser.add_argument("--runs", type=int, default=5, help="REST reads and page loads")
    parser.add_argument(
        "--requests", type=int, default=5000, help="allocator requests per size"
    )
    parser.add_argument("--no-browser", action="store_true")
    parser.add_argument(
        "--keep-database",
        action="store_true",
        help=f"leave the last size's database ({DB_NAME}) for a closer look",
    )
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(*args.child)
        return 0
    default = "0.1,0.3,1" if args.quick else "1,3,10"
    factors = [float(x) for x in (args.factors or default).split(",")]
    if args.quick:
        args.runs = min(args.runs, 3)
    if not args.no_browser:
        from harness.stack import ensure_frontend_built

        ensure_frontend_built()
    base = os.environ.get(
        "BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/test"
    )
    results = [measure(factor, base, args) for factor in factors]
    report(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
