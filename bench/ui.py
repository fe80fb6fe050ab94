"""Benchmark: the web UI at the reference scale, in headless Chromium.

Run: ``python -m bench.ui [--quick] [--nodes 1000] [--pods 30000] [--slice-pods 20000]``.

Starts the whole portal the way the browser tests do (``harness/stack.py``:
simcluster ``scale``, a temp SQLite database, ``sync``, ``uvicorn``), waits
for the initial sync, then measures in Chromium:

- navigation to the chips page being usable (8,000 chips counted, the heat
  map drawn, the table's first rows in the DOM), cold and warm. The page
  stamps ``performance.now()`` (milliseconds since navigation start) in the
  animation frame that first finds it usable, the frame painted next; the
  time Playwright takes to notice and ask (its poll and one round trip,
  some 20-70 ms) is printed beside it. Each load starts once the page before
  it has no request left in flight: the overview's (seventeen before its
  socket said when it joined: eleven, and six again when its snapshot
  arrived; the count per load is printed) otherwise keep the (single) server process
  busy into the next load, whose own requests then wait 100-400 ms. The chips page is also timed
  as this benchmark timed it before issue 19 (right after the overview,
  noticed by Playwright), for comparison;
- the same for the overview;
- a node filter applied (keystroke to table updated);
- scrolling, frame by frame, each a 0.9 viewport step per frame (a fast
  fling, set through ``scrollTop`` between frames, as a wheel's input
  arrives; not a compositor-driven touch fling). A frame's time is the
  interval between the timestamps Chromium gives successive
  ``requestAnimationFrame`` callbacks: each is the start of a frame on the
  display's beat, so 16.7 ms is a frame at 60 a second, and a beat that
  passed without a frame shows as 33.3 ms. A p95 of 16.7 ms thus means at
  most 5% of frames late; the frames per second and the beats missed are
  printed beside it, and so is each frame's main-thread work (from its start
  to its style, layout and paint being done, timed by a task posted from the
  frame), which must stay under 16.7 ms for every frame to make its beat. In
  brackets, the interval as the script saw it (``performance.now()`` in the
  callback), which also counts how late in the frame the callback ran (what
  this benchmark printed before: it reads 17-19 ms on an idle page here, and
  under-reads a missed beat). A control (a box whose every scroll costs 20 ms
  of script) shows the measure catching missed beats and the work over
  budget. Measured:
  the virtualised table; the heat map, which at 8,000 chips scrolls in its
  own box only in the per-chip view (per node, the default there, it fits:
  a user scrolls the page over it, so that is what is measured for that
  view); each with the sync running and with it paused (the UI's own cost),
  next to frames while the page does nothing (the machine's floor: a loaded
  machine misses the 60 Hz beat even then);
- a change in the simulator (a pod created on a chosen chip) to the page
  showing it, next to the time the database shows it (the sync's share), so
  the UI's own share (WebSocket relay + render) can be read off in one run.

Figures are printed; ratios are measured in the same run so a noisy machine
does not hide a regression. The aims of issue 19 (the chips page usable in
400 ms warm, every scroll at 60 frames a second: p95 frame <= 16.7 ms) are
printed against the figures at the end. Chromium clamps its clock to 0.1 ms,
so a frame on the beat reads 16.6 to 16.8 ms: the frame aim is judged within
that resolution.
"""

from __future__ import annotations

import argparse
import math
import os
import signal
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from harness.processes import wait_until  # noqa: E402
from harness.stack import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_ARGS,
    ApiClient,
    Stack,
    ensure_frontend_built,
    pinned_pod,
)

USABLE_JS = """(expected) => {
  const count = document.querySelector('[data-testid=chip-count]');
  const canvas = document.querySelector('[data-testid=heatmap] canvas');
  const rows = document.querySelectorAll('[data-testid=chip-row]').length;
  return !!count && count.textContent.startsWith(expected + ' of ' + expected)
    && !!canvas && canvas.height > 10 && rows > 0;
}"""
# The same test, answering the time it first held (ms since navigation start):
# polled in every animation frame, so that is the frame painted next.
USABLE_AT_JS = "(expected) => (" + USABLE_JS + ")(expected) ? performance.now() : false"
OVERVIEW_JS = """(expected) => {
  const k = document.querySelector('[data-testid=kpi-chips] .value');
  return !!k && k.textContent === expected;
}"""
# Every frame measure: `step(i)` before each frame (a scroll, or nothing),
# then three clocks: the frame's own timestamp (its start on the display's
# beat), the script's clock in the animation-frame callback, and the script's
# clock in a task posted from that callback, which runs once the frame's
# rendering (style, layout, paint) is done: the frame's main-thread work.
# The next step runs in that task, between frames, as a user's input would.
MEASURE_FRAMES = """async function measureFrames(steps, step) {
    const channel = new MessageChannel();
    const afterRendering = () => new Promise((resolve) => {
      channel.port1.onmessage = () => resolve(performance.now());
      channel.port2.postMessage(0);
    });
    const frames = [];
    const callbacks = [];
    const works = [];
    let lastFrame = await new Promise(requestAnimationFrame);
    let last = performance.now();
    await afterRendering();
    for (let i = 0; i < steps; i++) {
      step(i);
      const frame = await new Promise(requestAnimationFrame);
      const now = performance.now();
      const rendered = await afterRendering();
      frames.push(frame - lastFrame);
      callbacks.push(now - last);
      works.push(rendered - frame);
      lastFrame = frame;
      last = now;
    }
    return { frames, callbacks, works };
  }"""
SCROLL_JS = (
    """async (steps) => {
  const el = document.querySelector('[data-testid=chips-table]');
  """
    + MEASURE_FRAMES
    + """
  const measured = await measureFrames(steps, () => { el.scrollTop += el.clientHeight * 0.9; });
  return { ...measured, rows: document.querySelectorAll('[data-testid=chip-row]').length, top: el.scrollTop };
}"""
)
# The heat map: its own box when it scrolls (the per-chip view at 8,000
# chips), else the page (main) over it. Its scroll range is a few hundred
# pixels, so the steps turn back at either end: every frame moves.
HEAT_SCROLL_JS = (
    """async (steps) => {
  const heat = document.querySelector('[data-testid=heatmap]');
  const own = heat.scrollHeight > heat.clientHeight + 1;
  const el = own ? heat : document.querySelector('main');
  el.scrollTop = 0;
  await new Promise(requestAnimationFrame);
  const range = el.scrollHeight - el.clientHeight;
  let dir = 1;
  """
    + MEASURE_FRAMES
    + """
  const measured = await measureFrames(steps, () => {
    const step = Math.min(el.clientHeight * 0.9, range);
    if (dir > 0 && el.scrollTop + step > range - 0.5) dir = -1;
    else if (dir < 0 && el.scrollTop - step < 0.5) dir = 1;
    el.scrollTop += dir * step;
  });
  el.scrollTop = 0;
  return { ...measured, own, range };
}"""
)
# The floor: frames while the page does nothing. On a loaded machine even
# these miss the 60 Hz beat now and then, and no scroll can do better.
IDLE_FRAMES_JS = (
    """async (steps) => {
  """
    + MEASURE_FRAMES
    + """
  return await measureFrames(steps, () => {});
}"""
)
# The control: a box whose every scroll costs `busy` ms of script, so a frame
# over budget is seen to miss a beat (the measure can fail).
BUSY_SCROLL_JS = (
    """async ([steps, busy]) => {
  const el = document.createElement('div');
  el.style.cssText = 'position:fixed;top:0;left:0;width:200px;height:300px;overflow:auto;z-index:9';
  el.innerHTML = '<div style="height:10000000px"></div>';
  el.onscroll = () => { const t = performance.now(); while (performance.now() - t < busy) {} };
  document.body.appendChild(el);
  """
    + MEASURE_FRAMES
    + """
  const measured = await measureFrames(steps, () => { el.scrollTop += 270; });
  el.remove();
  return measured;
}"""
)
CONTROL_BUSY_MS = 20
FRAME_AIM_MS = 1000 / 60
CLOCK_RESOLUTION_MS = 0.1  # Chromium's clamp on performance.now() and frame timestamps
USABLE_AIM_S = 0.400


def frame_stats(frames: list[float]) -> tuple[float, float, float]:
    """Median, p95 (nearest rank) and max of frame times (ms)."""
    ordered = sorted(frames)
    return (
        statistics.median(ordered),
        ordered[max(0, math.ceil(len(ordered) * 0.95) - 1)],
        ordered[-1],
    )


def beats_missed(frames: list[float]) -> int:
    """Display beats that passed without a new frame (a 50 ms frame misses two)."""
    return sum(max(0, round(f / FRAME_AIM_MS) - 1) for f in frames)


def frames_text(result: dict[str, Any]) -> str:
    """Frame intervals (from the frames' own timestamps), the rate and the
    beats missed, each frame's main-thread work (frame start to its rendering
    done), and in brackets the intervals as the script saw them
    (``performance.now()`` in the callback, which adds the wait for the
    callback to run: what this benchmark printed before)."""
    frames = result["frames"]
    median, p95, worst = frame_stats(frames)
    rate = 1000 * len(frames) / sum(frames)
    work = frame_stats(result["works"])
    seen = frame_stats(result["callbacks"])
    return (
        f"median {median:5.1f} ms  p95 {p95:5.1f}  max {worst:5.1f}  "
        f"{rate:4.1f} frames/s, {beats_missed(frames)} beats missed in {len(frames)}; "
        f"work p95 {work[1]:5.1f} max {work[2]:5.1f}  [callback p95 {seen[1]:5.1f}]"
    )


def against(value: float, aim: float, unit: str = "ms") -> str:
    """``value`` next to its aim: met or how far over."""
    verdict = "met" if value <= aim + 1e-9 else f"{value / aim:.2f}x the aim"
    return f"(aim {aim:g} {unit}: {verdict})"


def fmt(values: list[float]) -> str:
    if not values:
        return "-"
    if len(values) == 1:
        return f"{values[0] * 1000:7.0f} ms"
    return (
        f"median {statistics.median(values) * 1000:7.0f} ms"
        f"  min {min(values) * 1000:6.0f}  max {max(values) * 1000:6.0f}  (n={len(values)})"
    )


def against_frame(p95: float) -> str:
    """A p95 frame next to the 60 Hz aim, judged within Chromium's clock resolution."""
    aim = round(FRAME_AIM_MS, 1)
    met = p95 <= aim + CLOCK_RESOLUTION_MS + 1e-9
    verdict = "met" if met else f"{p95 / aim:.2f}x the aim"
    return f"(aim {aim:g} ms, within the clock's {CLOCK_RESOLUTION_MS:g} ms: {verdict})"


def wait_slices(stack: Stack, expected: int, timeout: float) -> None:
    """Until the pods' initial list has landed (99% of the slice pods)."""
    client = stack.api()

    def landed() -> bool:
        status, body = client.call(
            "GET", f"/api/slices/?cluster={stack.cluster_id}&page_size=1"
        )
        return status == 200 and body["count"] >= expected * 0.99

    wait_until(landed, f"{expected} slice pods synced", timeout, 1)


def line(label: str, value: str) -> None:
    print(f"{label:<52} {value}", flush=True)


def timed_get(client: ApiClient, path: str, runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        status, _ = client.call("GET", path)
        out.append(time.perf_counter() - t0)
        if status != 200:
            raise RuntimeError(f"GET {path}: {status}")
    return out


def idle_310p_chips(
    client: ApiClient, cluster_id: int, count: int
) -> list[dict[str, Any]]:
    status, usage = client.call("GET", f"/api/clusters/{cluster_id}/chip-usage/")
    if status != 200:
        raise RuntimeError(f"chip-usage: {status}")
    cols = usage["columns"]
    chips = [dict(zip(cols, row, strict=True)) for row in usage["rows"]]
    free = [
        c
        for c in chips
        if c["common_word"] == "Ascend310P"
        and c["healthy"]
        and c["slots_used"] < c["slots"]
        and c["memory"] - c["memory_used"] >= 3072
    ]
    step = max(1, len(free) // max(1, count))
    return free[::step][:count]


def scale_stack(
    args: argparse.Namespace, postgres_url: str | None, **sim: Any
) -> Stack:
    """The portal on simcluster ``scale`` at ``args``' size (not started)."""
    return Stack(
        "scale",
        sim_options={
            "nodes": args.nodes,
            "pods": args.pods,
            "slice_pods": args.slice_pods,
            "ready_delay": 0.1,
            **sim,
        },
        sync_seconds=args.sync_timeout + 3600,
        log=lambda msg: line("  " + msg, ""),
        postgres_url=postgres_url,
    )


def pick_postgres(choice: str) -> str | None:
    """The PostgreSQL server to create the benchmark's database on, or None for SQLite."""
    if choice == "sqlite":
        return None
    url = os.environ.get("DATABASE_URL", "")
    if url.startswith(("postgres://", "postgresql://")):
        return url
    local = "postgres://postgres@127.0.0.1:5432/postgres"
    try:
        import psycopg

        with psycopg.connect(local, connect_timeout=2):
            return local
    except Exception:  # no server: fall back to SQLite, or refuse below
        if choice == "postgres":
            raise SystemExit(
                "--database postgres: no PostgreSQL server (set DATABASE_URL)"
            ) from None
        return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.ui")
    parser.add_argument("--quick", action="store_true", help="100 nodes, 3 runs")
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--pods", type=int, default=30000)
    parser.add_argument("--slice-pods", type=int, default=20000)
    parser.add_argument("--runs", type=int, default=5, help="page loads per page")
    parser.add_argument(
        "--changes", type=int, default=5, help="simulator changes timed"
    )
    parser.add_argument(
        "--sync-timeout", type=float, default=1800, help="seconds for the initial sync"
    )
    parser.add_argument(
        "--database",
        choices=["auto", "postgres", "sqlite"],
        default="auto",
        help="auto: a fresh PostgreSQL database on DATABASE_URL's server (or "
        "postgres://postgres@127.0.0.1:5432 when it answers), else a temp SQLite file",
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.nodes, args.pods, args.slice_pods, args.runs, args.changes = (
            100,
            3000,
            2000,
            3,
            3,
        )
    chips_expected = args.nodes * 8
    expected_text = f"{chips_expected:,}"

    from playwright.sync_api import sync_playwright

    ensure_frontend_built()
    postgres_url = pick_postgres(args.database)
    print(
        f"== vNPU Portal UI benchmark: {args.nodes} nodes x 8 chips, {args.pods} pods "
        f"({args.slice_pods} with slices)",
        flush=True,
    )
    t0 = time.perf_counter()
    stack = scale_stack(args, postgres_url, pod_shutdown_seconds=0.3)
    try:
        stack.start()
        line(
            "stack started (simcluster built, migrate, demo)",
            f"{time.perf_counter() - t0:7.1f} s",
        )
        t1 = time.perf_counter()
        client = stack.api()
        stack._wait_chips(client, chips_expected, args.sync_timeout)
        line(
            f"initial sync: {chips_expected} chips in the database",
            f"{time.perf_counter() - t1:7.1f} s",
        )
        # Let the pods' initial list land too (slices), then settle.
        wait_slices(stack, args.slice_pods, args.sync_timeout)
        line(
            "initial sync: slices in the database", f"{time.perf_counter() - t1:7.1f} s"
        )
        cid = stack.cluster_id

        print("-- REST (reference for the page loads)", flush=True)
        me = timed_get(client, "/api/me/", 10)
        usage = timed_get(client, f"/api/clusters/{cid}/chip-usage/", 5)
        line("GET /api/me/ (trivial endpoint)", fmt(me))
        line(f"GET chip-usage ({chips_expected} rows)", fmt(usage))

        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
            )
            context = browser.new_context(viewport={"width": 1440, "height": 900})
            page = context.new_page()
            page.set_default_timeout(120_000)
            page.goto(stack.url + "/")
            page.fill("input[name=username]", "admin")
            page.fill("input[name=password]", "admin")
            page.click("button[type=submit]")
            page.wait_for_selector("[data-testid=connection][data-state=live]")

            print("-- page loads (navigation start -> usable)", flush=True)
            # Every load starts with the server idle: a page left at once goes on
            # costing the (single) server process until it has answered the
            # requests that page made (the overview makes eleven), and the next
            # load waits behind them. That wait is timed too (before_19, below),
            # apart from the page's own time.
            page.wait_for_load_state("networkidle")
            # Cold: a new context (empty HTTP cache) with the same session.
            cold_context = browser.new_context(viewport={"width": 1440, "height": 900})
            cold_context.add_cookies(context.cookies())
            cold = cold_context.new_page()
            cold.set_default_timeout(120_000)
            cold.goto(stack.url + "/chips")
            cold_time = (
                cold.wait_for_function(
                    USABLE_AT_JS, arg=expected_text, polling="raf"
                ).json_value()
                / 1000
            )
            cold_context.close()
            loads: dict[str, list[float]] = {"chips": [], "overview": []}
            # The chips page once Playwright's raf poll has seen it and asked the
            # page for the time again, and (before_19) that way right after the
            # overview, its requests still in flight: as measured before issue 19.
            noticed: list[float] = []
            before_19: list[float] = []
            # The API requests each (settled) overview load made, until the
            # network is idle: it refetched all it had fetched when its live
            # snapshot came, until the socket said when it had joined.
            api_requests: list[str] = []
            page.on(
                "request",
                lambda request: (
                    api_requests.append(request.url) if "/api/" in request.url else None
                ),
            )
            overview_requests: list[int] = []
            for settle in (True, False):
                for _ in range(args.runs):
                    for name, path, check in (
                        ("chips", "/chips", USABLE_JS),
                        ("overview", "/", OVERVIEW_JS),
                    ):
                        if settle:
                            page.wait_for_load_state("networkidle")
                        api_requests.clear()
                        page.goto(stack.url + path)
                        if name == "chips":
                            usable_at = page.wait_for_function(
                                USABLE_AT_JS, arg=expected_text, polling="raf"
                            )
                            now = page.evaluate("performance.now()") / 1000
                            if settle:
                                noticed.append(now)
                                loads[name].append(usable_at.json_value() / 1000)
                            else:
                                before_19.append(now)
                        else:
                            page.wait_for_function(
                                check, arg=expected_text, polling="raf"
                            )
                            if settle:
                                loads[name].append(
                                    page.evaluate("performance.now()") / 1000
                                )
                                page.wait_for_load_state("networkidle")
                                overview_requests.append(len(api_requests))
            # In the app (no reload): the store is already filled, only the view renders.
            spa_nav = []
            for _ in range(args.runs):
                page.locator("nav").get_by_role("link", name="Overview").click()
                page.wait_for_function(OVERVIEW_JS, arg=expected_text, polling="raf")
                t = time.perf_counter()
                page.locator("nav").get_by_role("link", name="Nodes & chips").click()
                page.wait_for_function(USABLE_JS, arg=expected_text, polling="raf")
                spa_nav.append(time.perf_counter() - t)
            line("chips page usable, cold cache", fmt([cold_time]))
            line(
                f"chips page usable, warm (heat map + table, {expected_text} chips)",
                fmt(loads["chips"]),
            )
            line("  the same once Playwright noticed", fmt(noticed))
            line(
                "  noticed, right after the overview (as before #19)",
                fmt(before_19),
            )
            line(
                "overview usable (totals from the live snapshot)",
                fmt(loads["overview"]),
            )
            line("in-app click overview -> chips page usable", fmt(spa_nav))
            line(
                "overview load: API requests until the network is idle",
                " ".join(map(str, overview_requests)),
            )
            shots = ROOT / "tests" / "e2e" / "screenshots"
            shots.mkdir(exist_ok=True)
            page.goto(stack.url + "/")
            page.wait_for_function(OVERVIEW_JS, arg=expected_text, polling="raf")
            page.screenshot(path=str(shots / "bench-overview-8000.png"))
            page.goto(stack.url + "/chips")
            page.wait_for_function(USABLE_JS, arg=expected_text, polling="raf")
            page.screenshot(
                path=str(
                    ROOT / "tests" / "e2e" / "screenshots" / "bench-chips-8000.png"
                )
            )
            heap = page.evaluate(
                "performance.memory ? performance.memory.usedJSHeapSize : 0"
            )
            if heap:
                line("JS heap on the chips page", f"{heap / 1e6:7.1f} MB")
            page.get_by_test_id("node-filter").fill("")

            print("-- interaction", flush=True)
            filters = []
            names = [f"npu-node-{i:04d}" for i in range(args.nodes)]
            last = names[-1]
            for term in ("npu-node-00", last, ""):
                expect_nodes = sum(term in n for n in names)
                t = time.perf_counter()
                page.get_by_test_id("node-filter").fill(term)
                page.wait_for_function(
                    "(n) => document.querySelector('[data-testid=chip-count]').textContent.includes(n + ' nodes')",
                    arg=f"{expect_nodes:,}",
                    polling="raf",
                )
                filters.append(time.perf_counter() - t)
            line(
                "node filter typed -> table and heat map updated",
                fmt(filters) + "  (incl. 150 ms debounce)",
            )
            print(
                "-- scrolling (frame times; 16.7 ms = 60 frames a second)", flush=True
            )
            scrolls: dict[str, dict[str, Any]] = {}
            sync_pid = stack.procs["sync"].pid
            for label, quiet in (("", False), (", sync paused", True)):
                if quiet:  # the UI's own cost, without the sync process competing for the 2 cores
                    os.killpg(sync_pid, signal.SIGSTOP)
                    # pacing, not a wait on a condition: the page's work
                    # started before the pause ends before it is measured
                    time.sleep(1)
                try:
                    page.goto(stack.url + "/chips")
                    page.wait_for_function(USABLE_JS, arg=expected_text, polling="raf")
                    result = page.evaluate(IDLE_FRAMES_JS, 120)
                    scrolls["no scroll, idle page (the floor)" + label] = result
                    line(
                        f"frames with nothing to do (the floor){label}",
                        frames_text(result),
                    )
                    if not quiet:
                        result = page.evaluate(BUSY_SCROLL_JS, [60, CONTROL_BUSY_MS])
                        line(
                            f"control: a scroll costing {CONTROL_BUSY_MS} ms of script a frame",
                            frames_text(result),
                        )
                    result = page.evaluate(SCROLL_JS, 120)
                    scrolls["scroll the table" + label] = result
                    line(
                        f"scroll the {expected_text}-row table{label}: frame time",
                        frames_text(result) + f"  (rows in DOM: {result['rows']})",
                    )
                    # The heat map in both views: the default at this many chips
                    # (per node below 3,000 chips: per chip) and the other one.
                    for view in ("chip", "node"):
                        page.goto(stack.url + f"/chips?view={view}")
                        page.wait_for_function(
                            USABLE_JS, arg=expected_text, polling="raf"
                        )
                        result = page.evaluate(HEAT_SCROLL_JS, 90)
                        what = (
                            "heat map's own box"
                            if result["own"]
                            else "page over the heat map (which fits)"
                        )
                        scrolls[f"scroll the heat map, per-{view} view{label}"] = result
                        line(
                            f"scroll the {what}, per {view}{label}",
                            frames_text(result) + f"  (range {result['range']:.0f} px)",
                        )
                finally:
                    if quiet:
                        os.killpg(sync_pid, signal.SIGCONT)
            page.goto(stack.url + "/chips")
            page.wait_for_function(USABLE_JS, arg=expected_text, polling="raf")

            print(
                "-- live: a pod created in the simulator -> shown in the browser",
                flush=True,
            )
            targets = idle_310p_chips(client, cid, args.changes)
            poller = stack.api()  # signed in before the clock starts
            browser_times: list[float] = []
            db_times: list[float] = []
            for k, chip in enumerate(targets):
                page.evaluate(
                    "(id) => { history.replaceState(null, '', '/chips?chip=' + id); dispatchEvent(new PopStateEvent('popstate')); }",
                    chip["id"],
                )
                before = f"{chip['slots_used']} / {chip['slots']}"
                after = f"{chip['slots_used'] + 1} / {chip['slots']}"
                page.wait_for_function(
                    "(t) => (document.querySelector('[data-testid=chip-metrics]')?.textContent || '').includes(t)",
                    arg=before,
                )
                seen_db: list[float] = []
                done = threading.Event()

                def poll_db(
                    uuid: str = chip["uuid"],
                    want: int = chip["slots_used"] + 1,
                    done: threading.Event = done,
                    seen_db: list[float] = seen_db,
                ) -> None:
                    while not done.is_set():
                        status, body = poller.call(
                            "GET", f"/api/chips/?cluster={cid}&uuid={uuid}"
                        )
                        if (
                            status == 200
                            and body["results"]
                            and body["results"][0]["slots_used"] >= want
                        ):
                            seen_db.append(time.perf_counter())
                            return
                        time.sleep(0.01)

                started = time.perf_counter()
                thread = threading.Thread(target=poll_db, daemon=True)
                stack.kubectl(
                    "apply",
                    "-f",
                    "-",
                    stdin=pinned_pod(f"bench-{k}", chip["uuid"]),
                )
                thread.start()
                page.wait_for_function(
                    "(t) => (document.querySelector('[data-testid=chip-metrics]')?.textContent || '').includes(t)",
                    arg=after,
                    polling="raf",
                    timeout=60_000,
                )
                browser_times.append(time.perf_counter() - started)
                thread.join(timeout=30)
                done.set()
                if seen_db:
                    db_times.append(seen_db[0] - started)
            line("kubectl apply -> database shows the slice (sync)", fmt(db_times))
            line(
                "kubectl apply -> browser shows it (sync + WS + render)",
                fmt(browser_times),
            )
            if db_times and browser_times:
                ui_share = statistics.median(browser_times) - statistics.median(
                    db_times
                )
                line(
                    "  the UI's share (median browser - median database)",
                    f"{ui_share * 1000:7.0f} ms",
                )
            usable = statistics.median(loads["chips"])
            line(
                "ratio: chips page usable / chip-usage GET",
                f"{usable / statistics.median(usage):7.1f} x",
            )
            print("-- the aims of issue 19", flush=True)
            line(
                "chips page usable, warm (median)",
                f"{usable * 1000:7.0f} ms  {against(usable * 1000, USABLE_AIM_S * 1000)}",
            )
            for name, result in scrolls.items():
                median, p95, _ = frame_stats(result["frames"])
                work_p95 = frame_stats(result["works"])[1]
                line(
                    f"{name}: frame median / p95 (work p95)",
                    f"{median:5.1f} / {p95:5.1f} ms ({work_p95:4.1f})  "
                    f"{against_frame(p95)}",
                )
            browser.close()
    finally:
        stack.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
