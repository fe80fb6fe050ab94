"""Benchmark: the real control plane (kubestack) beside simcluster, at 1x.

Run: ``python -m bench.realstack [--nodes 1000 --pods 30000 --slice-pods 20000]``
(the reference scale, 1x; ``--quick``: 50 nodes, 1,000 pods). Needs the built
control plane (``python -m kubestack build``) and PostgreSQL
(``BENCH_DATABASE_URL``, default ``postgres://postgres@127.0.0.1:5432/test``; a
database ``vnpu_bench_real`` is created beside it and dropped at the end).

Prints, measured in this run unless said otherwise:
1. the build: the cold build's time (recorded by the build that made the
   cached binaries) and a warm ``python -m kubestack build`` now;
2. time from start to a ready guide cluster (API server, controllers, Volcano,
   KWOK, the scenario's pods placed by the real Volcano);
3. time to bring up the real stack with the ``scale`` scenario, its steps, and
   how fast its pods were created (each created bound, then its status written
   as a kubelet would: two writes a pod);
4. for the same ``scale`` scenario on the real API server and on simcluster:
   the download and parse of every list the initial sync makes (through the
   portal's gateway, nothing written), and the portal's initial sync into
   PostgreSQL, best of two each (alternating), the sync's ratio to download
   and parse on each server against issue 19's aim (2.0), and the
   real/simcluster ratios: whether a difference is the server or the write;
5. the peak resident memory (VmHWM) of kube-apiserver and etcd, and of
   simcluster's process, at that scale.

The scale scenario leaves the machine to the benchmark where a real cluster
would not (see ``kubestack.scenarios.Scale``): nodes post their status every 2
to 3 min, Volcano opens a session once a minute, the device plugin registers
once, and KWOK leaves the 30,000 pods (their creator writes their status). On
two cores a thousand nodes at a kubelet's and Volcano's own pace took both
cores away from the portal being measured.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.sync import _bench_db_url, _drop_db, _recreate_db, _start_sim  # noqa: E402
from harness import processes  # noqa: E402

DB_NAME = "vnpu_bench_real"  # not bench.sync's: the two may run at once
SYNC_RATIO_AIM = 2.0  # issue 19: initial sync <= 2x the download and parse of its lists


def _build_figures() -> tuple[str, float]:
    from kubestack import build

    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "kubestack", "build"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    warm = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"kubestack build failed:\n{done.stderr}")
    recorded = json.loads((build.bin_dir().parent / "versions.json").read_text())
    cold = recorded.get("built_in_seconds")
    return (f"{cold} s" if cold is not None else "not recorded"), warm


def _peak_rss_mib(pid: int) -> float | None:
    """The peak resident set (VmHWM) of a running process, in MiB."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def _cpu_seconds(pid: int) -> float:
    """User and system CPU seconds a process has used (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _download(cluster: Any) -> tuple[float, dict[str, int], float]:
    """List every stream of the initial sync through the portal's gateway,
    parsed but not written. Returns the seconds, the objects per stream, and
    (measured apart, after) how many bytes a pod takes in a list's JSON."""
    from apps.inventory.kube import KubeError, gateway_for
    from apps.inventory.sync.targets import targets_for

    gateway = gateway_for(cluster)
    counts: dict[str, int] = {}
    started = time.perf_counter()
    try:
        for target in targets_for(cluster):
            try:
                found = gateway.list_all(
                    target.path, field_selector=target.field_selector
                )
            except KubeError:
                counts[target.key] = 0  # not served (an optional stream)
                continue
            counts[target.key] = len(found.items)
        seconds = time.perf_counter() - started
        page = (
            gateway.api()
            .call_api(
                "/api/v1/pods",
                "GET",
                query_params=[("limit", 1000)],
                header_params={"Accept": "application/json"},
                auth_settings=["BearerToken"],
                _preload_content=False,
                _return_http_data_only=True,
            )
            .data
        )
        pod_bytes = len(page) / max(1, len(json.loads(page).get("items") or []))
    finally:
        gateway.close()
    return seconds, counts, pod_bytes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.realstack")
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--pods", type=int, default=30000)
    parser.add_argument("--slice-pods", type=int, default=20000)
    parser.add_argument("--quick", action="store_true", help="50 nodes, 1,000 pods")
    args = parser.parse_args(argv)
    if args.quick:
        args.nodes, args.pods, args.slice_pods = 50, 1000, 600
    bench_started = time.perf_counter()

    cold, warm = _build_figures()
    print(
        f"build: the one that made this cache took {cold} (with Go's own build "
        f"cache empty too, about 11 min on two cores); a warm build now: {warm:.1f} s",
        flush=True,
    )

    base = os.environ.get(
        "BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/test"
    )
    _recreate_db(base, DB_NAME)
    os.environ.update(
        DJANGO_SETTINGS_MODULE="vnpuportal.settings.base",
        DATABASE_URL=_bench_db_url(base, DB_NAME),
        DJANGO_SECRET_KEY=os.environ.get("DJANGO_SECRET_KEY", "bench-" + "x" * 50),
        DJANGO_DEBUG="false",
        REALTIME_OUTBOX="false",
        CELERY_BROKER_URL="memory://",
        LOG_LEVEL="WARNING",
    )
    import django

    django.setup()
    from django.core.management import call_command

    from apps.inventory.choices import ConnectionKind
    from apps.inventory.models import Chip, Slice
    from apps.inventory.services import cluster_create
    from apps.inventory.sync.engine import sync_once
    from kubestack.stack import KubeStack

    call_command("migrate", verbosity=0)
    tmp = Path(tempfile.mkdtemp(prefix="vnpu-bench-real-"))
    stack: KubeStack | None = None
    sim: subprocess.Popen[str] | None = None
    try:
        with KubeStack(scenario="guide") as guide:
            print(
                f"start to a ready guide cluster: {guide.started_in:.1f} s", flush=True
            )

        print(
            f"scale: {args.nodes} nodes x 8 chips, {args.pods} pods "
            f"({args.slice_pods} with slices), the same on both",
            flush=True,
        )
        started = time.perf_counter()

        def progress(text: str) -> None:
            print(f"    {time.perf_counter() - started:6.1f} s  {text}", flush=True)

        own_cpu = sum(os.times()[:2])
        stack = KubeStack(
            scenario="scale",
            progress=progress,
            scenario_options={
                "nodes": args.nodes,
                "pods": args.pods,
                "slice_pods": args.slice_pods,
            },
        ).start()
        created_in = getattr(stack.scenario, "created_in", 0.0)
        print(
            f"real stack with the scale scenario up in {stack.started_in:.1f} s "
            f"(its {args.pods} pods created and started in {created_in:.1f} s: "
            f"{args.pods / max(created_in, 1e-9):.0f} pods/s)",
            flush=True,
        )
        used = {
            name: _cpu_seconds(process.popen.pid)
            for name, process in stack.processes.items()
        }
        used["this process (creates, device plugin)"] = sum(os.times()[:2]) - own_cpu
        print(
            f"  CPU seconds used meanwhile ({os.cpu_count()} cores, "
            f"{stack.started_in:.0f} s): "
            + ", ".join(f"{name} {seconds:.0f}" for name, seconds in used.items()),
            flush=True,
        )
        # After the real stack, not beside it: each would slow the other's start.
        started = time.perf_counter()
        sim_kubeconfig = tmp / "sim.kubeconfig"
        sim = _start_sim(args, sim_kubeconfig)
        print(f"simcluster up in {time.perf_counter() - started:.1f} s", flush=True)
        sources = {
            "real": stack.write_kubeconfig(tmp / "real.kubeconfig"),
            "simcluster": sim_kubeconfig,
        }
        downloads: dict[str, list[float]] = {name: [] for name in sources}
        syncs: dict[str, list[float]] = {name: [] for name in sources}
        # Alternating, twice each, into fresh clusters: the best of two, so
        # that one noisy moment on a two-core machine does not decide it.
        for attempt in (1, 2):
            for name, kubeconfig in sources.items():
                cluster = cluster_create(
                    actor=None,
                    name=f"scale-{name}-{attempt}",
                    connection=ConnectionKind.KUBECONFIG,
                    kubeconfig=Path(kubeconfig).read_text(),
                )
                seconds, counts, pod_bytes = _download(cluster)
                downloads[name].append(seconds)
                print(
                    f"download+parse from {name} (run {attempt}): {seconds:.2f} s "
                    f"({len(counts)} lists, {sum(counts.values())} objects: "
                    f"{counts.get('nodes', 0)} nodes, {counts.get('pods', 0)} pods "
                    f"of {pod_bytes / 1024:.1f} KiB of JSON each)",
                    flush=True,
                )
                started = time.perf_counter()
                sync_once(cluster)
                syncs[name].append(time.perf_counter() - started)
                chips = Chip.objects.filter(cluster=cluster).count()
                slices = Slice.objects.filter(cluster=cluster).count()
                print(
                    f"initial sync from {name} (run {attempt}): "
                    f"{syncs[name][-1]:.2f} s ({chips} chips, {slices} slices)",
                    flush=True,
                )
        rss = {
            "kube-apiserver": _peak_rss_mib(
                stack.processes["kube-apiserver"].popen.pid
            ),
            "etcd": _peak_rss_mib(stack.processes["etcd"].popen.pid),
            "simcluster": _peak_rss_mib(sim.pid),
        }
    finally:
        if stack is not None:
            stack.stop()
        if sim is not None:
            processes.stop(sim, grace=30)
        from django.db import connections

        connections.close_all()
        _drop_db(base, DB_NAME)
        shutil.rmtree(tmp, ignore_errors=True)

    download = {name: min(values) for name, values in downloads.items()}
    sync = {name: min(values) for name, values in syncs.items()}
    for name in sources:
        print(
            f"best of two, {name}: download+parse {download[name]:.2f} s, initial "
            f"sync {sync[name]:.2f} s (sync/download {sync[name] / download[name]:.2f})"
        )
    # Issue 19's aim for the initial sync, on each server.
    print(
        "  ".join(
            f"initial_sync_ratio_{name}={sync[name] / download[name]:.2f}"
            for name in sources
        )
        + (
            f"  (aim at the reference scale <= {SYNC_RATIO_AIM:g}: "
            + ", ".join(
                f"{name} {'met' if sync[name] / download[name] <= SYNC_RATIO_AIM else 'not met'}"
                for name in sources
            )
            + ")"
            if not args.quick
            else "  (the aim is for the reference scale: not judged with --quick)"
        )
    )
    print(
        f"real_over_simcluster_download_ratio="
        f"{download['real'] / download['simcluster']:.2f}  "
        f"real_over_simcluster_sync_ratio={sync['real'] / sync['simcluster']:.2f}"
    )
    print(
        "peak RSS (VmHWM): "
        + ", ".join(
            f"{name} {mib:.0f} MiB" if mib is not None else f"{name} unknown"
            for name, mib in rss.items()
        )
    )
    print(f"whole benchmark: {time.perf_counter() - bench_started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
