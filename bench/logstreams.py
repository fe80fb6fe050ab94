"""The load side of ``bench.logs``: what its followers and long polls do (a
process of their own: asyncio, aiohttp), what they read checked against the
jobs' lines, and the web process's threads and sockets read from ``/proc``.
Pure functions first: they need no portal."""

from __future__ import annotations

import asyncio
import calendar
import contextlib
import itertools
import json
import math
import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.rest import _tree, cpu_seconds, machine_busy

FINISHED = ("succeeded", "failed", "cancelled", "expired")
LAG_BEHIND_S = 1.0  # a follower whose line arrived later than this fell behind


# --- pure parts: the jobs' lines, what a follower read, percentiles ---------------------


def job_lines(job: int, count: int, width: int) -> list[str]:
    """The lines job ``job`` prints: numbered, padded to ``width`` bytes."""
    out = []
    for i in range(count):
        head = f"job {job:03d} line {i:05d} of {count:05d} "
        out.append(head + "x" * max(0, width - len(head)))
    return out


def stamp_ns(stamp: str) -> int:
    """Nanoseconds since the epoch of a kubelet timestamp
    (``2026-12-06T20:00:00.123456789Z``)."""
    whole, _, fraction = stamp.rstrip("Z").partition(".")
    seconds = calendar.timegm(time.strptime(whole, "%Y-%m-%dT%H:%M:%S"))
    return seconds * 1_000_000_000 + int((fraction + "000000000")[:9])


def split_stamped(raw: bytes) -> tuple[int, str]:
    """A ``timestamps=true`` line: its timestamp (ns) and its text."""
    decoded = raw.decode("utf-8", "replace")
    stamp, _, text = decoded.partition(" ")
    try:
        return stamp_ns(stamp), text
    except ValueError:  # not a stamped line (none should come): kept whole
        return 0, decoded


@dataclass(frozen=True)
class Compared:
    """A follower's lines against its job's."""

    received: int
    lost: int
    duplicated: int
    unexpected: int
    in_order: bool


def compare_lines(expected: Sequence[str], received: Sequence[str]) -> Compared:
    want, got = Counter(expected), Counter(received)
    lost = sum((want - got).values())
    duplicated = sum(n - 1 for text, n in got.items() if text in want and n > 1)
    unexpected = sum(n for text, n in got.items() if text not in want)
    rank = {text: i for i, text in enumerate(expected)}
    order = [rank[text] for text in received if text in rank]
    return Compared(
        len(received),
        lost,
        duplicated,
        unexpected,
        all(a <= b for a, b in itertools.pairwise(order)),
    )


def percentile(values: Sequence[float], share: float) -> float:
    """Nearest rank (nan for none), as ``bench.rest.Figures.p``."""
    ordered = sorted(values)
    if not ordered:
        return math.nan
    return ordered[max(0, math.ceil(share * len(ordered)) - 1)]


# --- the streams (a process of its own: asyncio, aiohttp) -------------------------------


async def _follow(
    session: Any, url: str, token: str, opened: Callable[[], None]
) -> dict[str, Any]:
    """Follow one log to its end: timings, bytes, and each line (arrival ns, raw);
    ``opened`` is called at the first byte (or the end, without one)."""
    out: dict[str, Any] = {"status": 0, "error": "", "bytes": 0, "lines": []}
    out["source"], out["headers_s"], out["first_byte_s"] = "", math.nan, math.nan
    out["sent_ns"] = time.time_ns()
    started = time.perf_counter()
    try:
        async with session.get(url, headers={"Authorization": f"Bearer {token}"}) as r:
            out["status"], out["source"] = r.status, r.headers.get("X-Log-Source", "")
            out["headers_s"] = time.perf_counter() - started
            if r.status != 200:  # a refusal: its body says why
                out["error"] = (await r.read())[:160].decode("utf-8", "replace")
            rest = b""
            while chunk := await r.content.readany():
                now = time.time_ns()
                if not out["bytes"]:
                    out["first_byte_s"] = time.perf_counter() - started
                    out["first_ns"] = now
                    opened()
                out["bytes"] += len(chunk)
                *whole, rest = (rest + chunk).split(b"\n")
                out["lines"] += [(now, text) for text in whole]
            if rest:
                out["lines"].append((time.time_ns(), rest))
    except Exception as exc:  # counted and printed: the run goes on
        out["error"] = f"{type(exc).__name__}: {exc}"
    out["end_ns"] = time.time_ns()
    if not out["bytes"]:
        opened()
    return out


async def _wait(
    session: Any, url: str, token: str, opened: Callable[[], None]
) -> dict[str, Any]:
    """One long poll: when its status line came, when its answer came, the state."""
    out: dict[str, Any] = {"status": 0, "error": "", "state": "", "headers_s": math.nan}
    started, out["sent_ns"] = time.perf_counter(), time.time_ns()
    try:
        async with session.get(url, headers={"Authorization": f"Bearer {token}"}) as r:
            out["status"] = r.status
            out["headers_s"] = time.perf_counter() - started
            opened()
            body = await r.read()
            if r.status != 200:  # a refusal: its body says why
                out["error"] = body[:160].decode("utf-8", "replace")
            else:
                out["state"] = json.loads(body).get("state", "")
    except Exception as exc:  # counted and printed: the run goes on
        out["error"] = f"{type(exc).__name__}: {exc}"
    out["answered_ns"] = time.time_ns()
    if not out["status"]:
        opened()
    return out


async def _streams(
    base: str,
    follows: list[tuple[int, str]],
    waits: list[tuple[int, str]],
    wait_timeout: int,
    deadline: float,
    all_open: Any,
) -> dict[str, Any]:
    import aiohttp

    started, left = time.perf_counter(), [len(follows) + len(waits)]
    out: dict[str, Any] = {"open_s": math.nan}

    def opened() -> None:
        left[0] -= 1
        if not left[0]:
            out["open_s"] = time.perf_counter() - started
            all_open.set()

    timeout = aiohttp.ClientTimeout(total=None, sock_connect=30, sock_read=None)
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(timeout=timeout, connector=connector) as session:
        tasks = [
            _follow(
                session,
                f"{base}/api/requests/{rid}/logs/?follow=true&timestamps=true",
                t,
                opened,
            )
            for rid, t in follows
        ] + [
            _wait(
                session,
                f"{base}/api/requests/{rid}/?wait=finished&timeout={wait_timeout}",
                t,
                opened,
            )
            for rid, t in waits
        ]
        done = await asyncio.wait_for(asyncio.gather(*tasks), deadline)
    return {**out, "follows": done[: len(follows)], "waits": done[len(follows) :]}


def streams(
    base: str,
    follows: list[tuple[int, str]],
    waits: list[tuple[int, str]],
    wait_timeout: int,
    deadline: float,
    all_open: Any,
) -> dict[str, Any]:
    """Open every follow and long poll at once (``all_open``, an Event, is set
    once each had its first byte or status line); back when all have ended."""
    return asyncio.run(_streams(base, follows, waits, wait_timeout, deadline, all_open))


def ready() -> int:
    """A load process is up (its pid)."""
    time.sleep(0.5)  # so that the pool starts both of its processes
    return os.getpid()


# --- the web process, sampled ------------------------------------------------------------


def _socket_inodes(pids: Sequence[int]) -> set[str]:
    inodes = set()
    for pid in pids:
        with contextlib.suppress(OSError):
            for fd in Path(f"/proc/{pid}/fd").iterdir():
                with contextlib.suppress(OSError):
                    target = os.readlink(fd)
                    if target.startswith("socket:["):
                        inodes.add(target[8:-1])
    return inodes


def _port(address: str) -> int:
    return int(address.rsplit(":", 1)[1], 16)


def web_sockets(pids: Sequence[int], ports: dict[str, int]) -> Counter[str]:
    """The established TCP connections of ``pids``, by peer: ``ports`` names
    remote ports (postgres, cluster, redis); ``clients`` were accepted on
    ``ports["web"]``."""
    mine = _socket_inodes(pids)
    names = {port: name for name, port in ports.items() if name != "web"}
    out: Counter[str] = Counter()
    for table in ("tcp", "tcp6"):
        with contextlib.suppress(OSError):
            rows = Path(f"/proc/{pids[0]}/net/{table}").read_text().splitlines()[1:]
            for row in rows:
                cols = row.split()
                if cols[3] != "01" or cols[9] not in mine:  # 01: ESTABLISHED
                    continue
                if _port(cols[1]) == ports["web"]:
                    out["clients"] += 1
                else:
                    out[names.get(_port(cols[2]), "other")] += 1
    return out


def _threads(pids: Sequence[int]) -> int:
    total = 0
    for pid in pids:
        with contextlib.suppress(OSError):
            for text in Path(f"/proc/{pid}/status").read_text().splitlines():
                if text.startswith("Threads:"):
                    total += int(text.split()[1])
    return total


class WebSampler:
    """Every 0.25 s: the web process's threads and sockets, and the sessions
    on the portal's database; the most of each since the last ``take``."""

    def __init__(self, pid: int, ports: dict[str, int], admin_url: str, db: str):
        self.pid, self.ports, self.admin_url, self.db = pid, ports, admin_url, db
        self.peak: Counter[str] = Counter()
        self.last: Counter[str] = Counter()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._lock = threading.Lock()
        self._started = (0.0, 0.0, 0.0)

    def start(self) -> WebSampler:
        self._thread.start()
        return self

    def begin(self) -> None:
        with self._lock:
            self.peak = Counter()
        self._started = (time.perf_counter(), self.cpu(), machine_busy())

    def take(self) -> tuple[dict[str, float], dict[str, float]]:
        """The most seen since ``begin`` with the web's CPU in cores and the
        machine's; and the last sample (what is held at the end)."""
        wall = time.perf_counter() - self._started[0]
        with self._lock:
            out: dict[str, float] = dict(self.peak)
            last: dict[str, float] = dict(self.last)
        out["cpu_cores"] = (self.cpu() - self._started[1]) / wall
        out["machine_cores"] = (machine_busy() - self._started[2]) / wall
        return out, last

    def cpu(self) -> float:
        return cpu_seconds(_tree(self.pid))

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        import psycopg

        conn = None
        while not self._stop.wait(0.25):
            pids = _tree(self.pid)
            now = web_sockets(pids, self.ports)
            now["threads"] = _threads(pids)
            try:
                if conn is None:
                    conn = psycopg.connect(self.admin_url, autocommit=True)
                row = conn.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = %s",
                    (self.db,),
                ).fetchone()
                now["db_sessions"] = int(row[0]) if row else 0
            except Exception:  # the server going away at the end is no failure
                conn = None
            with self._lock:
                self.peak |= now  # the most of each
                self.last = now
        if conn is not None:
            conn.close()


# --- what the followers and waiters saw --------------------------------------------------


@dataclass
class Followed:
    ttfb: list[float]
    headers: list[float]
    lines: int
    live_lags: list[float]
    bytes: int
    seconds: float
    compared: list[Compared]
    behind: int
    ended_after: list[float]
    errors: list[str]


def followed(
    follows: list[dict[str, Any]], logs: list[list[str]], run_s: float
) -> Followed:
    """Each follower's lines against its job's; the lag of the lines printed
    while it followed; when its stream ended after its job's run."""
    lags: list[float] = []
    compared, ended_after, errors, behind = [], [], [], 0
    for got, expected in zip(follows, logs, strict=True):
        if got["error"] or got["status"] != 200 or got["source"] != "live":
            errors.append(f"{got['status']} {got['source']} {got['error']}"[:200])
        parsed = [(at, *split_stamped(raw)) for at, raw in got["lines"]]
        since = got.get("first_ns", got["end_ns"])  # lines printed once it was open
        mine = [(at - stamp) / 1e9 for at, stamp, _ in parsed if stamp > since]
        lags += mine
        behind += bool(mine) and max(mine) > LAG_BEHIND_S
        compared.append(compare_lines(expected, [text for _, _, text in parsed]))
        if parsed and got["status"] == 200:
            job_end = parsed[0][1] + run_s * 1e9  # line 0 is printed at the start
            ended_after.append((got["end_ns"] - job_end) / 1e9)
    first = min(f["sent_ns"] for f in follows)
    last = max(f["end_ns"] for f in follows)
    return Followed(
        ttfb=[f["first_byte_s"] for f in follows if f["bytes"]],
        headers=[f["headers_s"] for f in follows if f["status"]],
        lines=sum(c.received for c in compared),
        live_lags=lags,
        bytes=sum(f["bytes"] for f in follows),
        seconds=(last - first) / 1e9,
        compared=compared,
        behind=behind,
        ended_after=ended_after,
        errors=errors,
    )
