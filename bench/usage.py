"""Benchmark: usage (booked vs used from a real Prometheus) at the reference scale.

Run: ``python -m bench.usage [--quick] [--nodes 1000] [--slice-pods 20000]``.

Starts the portal as the browser tests do (``harness/stack.py``: simcluster
``scale``, a fresh database, ``sync``, ``uvicorn``), and a real Prometheus
(Debian's ``prometheus``) scraping every simulated node's npu-exporter
(``harness/prometheus.py``); the web process is pointed at it. Then, on the
same server and in the same run:

- REST: ``/api/usage/chips/`` (every chip: the database's booking joined with
  three Prometheus queries) beside ``/api/clusters/<id>/chip-usage/`` (the
  plain chip list, same rows, database only) and ``/api/me/`` (trivial), as
  ratios; and Prometheus' own time for the three queries, so its share reads
  off directly;
- the browser: the usage page usable (every chip counted, rows drawn) beside
  the chips page, warm, as a ratio.

``--quick``: 100 nodes, 2,000 slice pods, fewer runs (a minute or two).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.ui import (  # noqa: E402
    USABLE_JS,
    fmt,
    line,
    pick_postgres,
    scale_stack,
    timed_get,
    wait_slices,
)
from harness.prometheus import Prometheus, binary  # noqa: E402
from harness.stack import CHROMIUM, CHROMIUM_ARGS, Stack, ensure_frontend_built  # noqa: E402

USAGE_USABLE_JS = """(expected) => {
  const count = document.querySelector('[data-testid=usage-chip-count]');
  const rows = document.querySelectorAll('[data-testid=usage-chip-row]').length;
  return !!count && count.textContent.startsWith(expected + ' of ' + expected) && rows > 0;
}"""


def ratio(a: list[float], b: list[float]) -> str:
    return f"{statistics.median(a) / statistics.median(b):6.1f}x"


def prometheus_share(prom: Prometheus, runs: int) -> list[float]:
    """Prometheus' time for the usage page's queries, asked directly and at
    once, as the portal asks them."""
    from apps.metering.prometheus import Prometheus as Client
    from apps.metering.queries import Vocabulary

    vocabulary = Vocabulary.for_site({}, "", "demo")
    queries = vocabulary.chips_now(1, 3600)
    client = Client(prom.url, timeout=60)
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        client.query_many(queries)
        out.append(time.perf_counter() - t)
    return out


def each_query(prom: Prometheus, runs: int) -> None:
    """Each of the six queries alone: where Prometheus' time goes."""
    from apps.metering.prometheus import Prometheus as Client
    from apps.metering.queries import Vocabulary

    vocabulary = Vocabulary.for_site({}, "", "demo")
    client = Client(prom.url, timeout=60)
    for name, query in {
        **{f"chip {k}": q for k, q in vocabulary.chips_now(1, 3600).items()},
        **{f"slice {k}": q for k, q in vocabulary.slices_now(1, 3600).items()},
    }.items():
        times = []
        for _ in range(runs):
            t = time.perf_counter()
            rows = client.query(query)
            times.append(time.perf_counter() - t)
        line(f"    {name} ({len(rows)} series)", fmt(times))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.usage")
    parser.add_argument("--quick", action="store_true", help="100 nodes, fewer runs")
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--pods", type=int, default=30000)
    parser.add_argument("--slice-pods", type=int, default=20000)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--scrape-interval", type=float, default=15.0)
    parser.add_argument("--sync-timeout", type=float, default=1800)
    parser.add_argument(
        "--database", choices=["auto", "postgres", "sqlite"], default="auto"
    )
    parser.add_argument("--no-browser", action="store_true", help="REST figures only")
    args = parser.parse_args(argv)
    if args.quick:
        args.nodes, args.pods, args.slice_pods, args.runs = 100, 3000, 2000, 5
    if binary() is None:
        raise SystemExit("prometheus is not installed (apt-get install prometheus)")
    chips = args.nodes * 8
    ensure_frontend_built()
    print(
        f"== usage benchmark: {args.nodes} nodes x 8 chips, {args.pods} pods "
        f"({args.slice_pods} with slices), Prometheus scraping every {args.scrape_interval:g} s",
        flush=True,
    )
    stack = scale_stack(args, pick_postgres(args.database))
    prom: Prometheus | None = None
    try:
        t0 = time.perf_counter()
        stack.start(wait_for_chips=chips, timeout=args.sync_timeout)
        line("stack started and chips synced", f"{time.perf_counter() - t0:7.1f} s")
        wait_slices(stack, args.slice_pods, args.sync_timeout)
        line("slices synced", f"{time.perf_counter() - t0:7.1f} s")
        t1 = time.perf_counter()
        prom = Prometheus(
            stack.sim,
            Path(tempfile.mkdtemp(prefix="bench-prom-")),
            scrape_interval=args.scrape_interval,
        )
        prom.start(timeout=600)
        line(
            f"Prometheus up, {args.nodes} targets scraped once",
            f"{time.perf_counter() - t1:7.1f} s",
        )
        series = prom.query("count(vnpu_pod_aicore_utilization)")
        line("vNPU series in Prometheus", series[0]["value"][1] if series else "0")
        # The web process learns where Prometheus is (a restart, as a deploy would).
        # First every load asks Prometheus (no cache); later, the default cache.
        stack.extra_env["PROMETHEUS_URL"] = prom.url
        stack.extra_env["USAGE_CACHE_SECONDS"] = "0"
        stack.stop_web()
        stack.start_web()
        client = stack.api()
        cid = stack.cluster_id
        status, body = client.call("GET", f"/api/usage/chips/?cluster={cid}")
        if status != 200 or not body["metrics"]["available"]:
            raise SystemExit(f"usage/chips: {status} {body.get('metrics')}")
        measured = sum(c["aicore_used_percent"] is not None for c in body["results"])
        line(
            "chips with a measured AICore use", f"{measured} of {len(body['results'])}"
        )

        print("-- REST on the same server (median of runs)", flush=True)
        me = timed_get(client, "/api/me/", args.runs)
        plain = timed_get(client, f"/api/clusters/{cid}/chip-usage/", args.runs)
        usage = timed_get(client, f"/api/usage/chips/?cluster={cid}", args.runs)
        slices = timed_get(
            client, f"/api/usage/slices/?cluster={cid}", max(2, args.runs // 2)
        )
        share = prometheus_share(prom, args.runs)
        line("GET /api/me/ (trivial)", fmt(me))
        line(f"GET chip-usage (plain chip list, {chips} rows)", fmt(plain))
        line(f"GET usage/chips (booked + used, {chips} rows)", fmt(usage))
        line("  Prometheus alone: the page's five queries, at once", fmt(share))
        each_query(prom, max(2, args.runs // 2))
        line(f"GET usage/slices ({args.slice_pods} slice pods)", fmt(slices))
        line("ratio usage/chips : plain chip list", ratio(usage, plain))
        line("ratio usage/chips : trivial endpoint", ratio(usage, me))

        print(
            "-- the same with the default USAGE_CACHE_SECONDS (10 s): loads within one"
            " scrape share Prometheus' answer",
            flush=True,
        )
        stack.extra_env.pop("USAGE_CACHE_SECONDS")
        stack.stop_web()
        stack.start_web()
        client = stack.api()
        timed_get(client, f"/api/usage/chips/?cluster={cid}", 1)  # fills the cache
        cached = timed_get(client, f"/api/usage/chips/?cluster={cid}", args.runs)
        line(f"GET usage/chips, cached ({chips} rows)", fmt(cached))
        line("ratio usage/chips cached : plain chip list", ratio(cached, plain))

        if not args.no_browser:
            page_loads(stack, chips, args.runs)
    finally:
        if prom is not None:
            prom.stop()
        stack.stop()
    return 0


def page_loads(stack: Stack, chips: int, runs: int) -> None:
    from playwright.sync_api import sync_playwright

    expected = f"{chips:,}"
    print("-- page loads, warm, default cache (navigation start -> usable)", flush=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        page = browser.new_context(viewport={"width": 1440, "height": 900}).new_page()
        page.set_default_timeout(120_000)
        page.goto(stack.url + "/")
        page.fill("input[name=username]", "admin")
        page.fill("input[name=password]", "admin")
        page.click("button[type=submit]")
        page.wait_for_selector("[data-testid=connection][data-state=live]")
        loads: dict[str, list[float]] = {"chips": [], "usage": []}
        for _ in range(runs):
            for name, path, check in (
                ("chips", "/chips", USABLE_JS),
                ("usage", "/usage", USAGE_USABLE_JS),
            ):
                page.goto(stack.url + path)
                page.wait_for_function(check, arg=expected, polling="raf")
                loads[name].append(page.evaluate("performance.now()") / 1000)
        line(f"chips page usable ({expected} chips)", fmt(loads["chips"]))
        line(
            f"usage page usable ({expected} chips, booked + used)", fmt(loads["usage"])
        )
        line("ratio usage page : chips page", ratio(loads["usage"], loads["chips"]))
        shots = ROOT / "tests" / "e2e" / "screenshots"
        shots.mkdir(exist_ok=True)
        page.screenshot(path=str(shots / "bench-usage.png"))
        browser.close()


if __name__ == "__main__":
    raise SystemExit(main())
