"""Benchmark: the real control plane (kubestack) beside simcluster.

Run: ``python -m bench.realstack [--nodes 200 --pods 5000 --slice-pods 3000]``
(``--quick``: 50 nodes, 1,000 pods). Needs the built control plane
(``python -m kubestack build``) and PostgreSQL (``BENCH_DATABASE_URL``, default
``postgres://postgres@127.0.0.1:5432/test``; a database ``vnpu_bench`` is created
beside it and dropped at the end).

Prints, measured in this run unless said otherwise:
1. the build: the cold build's time (recorded by the build that made the
   cached binaries) and a warm ``python -m kubestack build`` now;
2. time from start to a ready guide cluster (API server, controllers, Volcano,
   KWOK, the scenario's pods placed by the real Volcano);
3. the portal's initial sync of the same ``scale`` scenario from the real API
   server and from simcluster, into PostgreSQL, and their ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.sync import _bench_db_url, _drop_db, _recreate_db, _start_sim  # noqa: E402


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.realstack")
    parser.add_argument("--nodes", type=int, default=200)
    parser.add_argument("--pods", type=int, default=5000)
    parser.add_argument("--slice-pods", type=int, default=3000)
    parser.add_argument("--quick", action="store_true", help="50 nodes, 1,000 pods")
    args = parser.parse_args(argv)
    if args.quick:
        args.nodes, args.pods, args.slice_pods = 50, 1000, 600

    cold, warm = _build_figures()
    print(
        f"build: the one that made this cache took {cold} (with Go's own build "
        f"cache empty too, about 11 min on two cores); a warm build now: {warm:.1f} s"
    )

    base = os.environ.get(
        "BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/test"
    )
    _recreate_db(base)
    os.environ.update(
        DJANGO_SETTINGS_MODULE="vnpuportal.settings.base",
        DATABASE_URL=_bench_db_url(base),
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
    try:
        with KubeStack(scenario="guide") as guide:
            print(f"start to a ready guide cluster: {guide.started_in:.1f} s")

        print(
            f"scale: {args.nodes} nodes x 8 chips, {args.pods} pods "
            f"({args.slice_pods} with slices), the same on both"
        )
        sim_kubeconfig = tmp / "sim.kubeconfig"
        sim = _start_sim(args, sim_kubeconfig)
        started = time.perf_counter()
        stack = KubeStack(
            scenario="scale",
            scenario_options={
                "nodes": args.nodes,
                "pods": args.pods,
                "slice_pods": args.slice_pods,
            },
        ).start()
        print(
            f"real stack with the scale scenario up in {time.perf_counter() - started:.1f} s"
        )
        try:
            sources = {
                "real": stack.write_kubeconfig(tmp / "real.kubeconfig"),
                "simcluster": sim_kubeconfig,
            }
            # Alternating, twice each, into fresh clusters: the best of two, so
            # that one noisy moment on a two-core machine does not decide it.
            runs: dict[str, list[float]] = {name: [] for name in sources}
            for attempt in (1, 2):
                for name, kubeconfig in sources.items():
                    cluster = cluster_create(
                        actor=None,
                        name=f"scale-{name}-{attempt}",
                        connection=ConnectionKind.KUBECONFIG,
                        kubeconfig=Path(kubeconfig).read_text(),
                    )
                    started = time.perf_counter()
                    sync_once(cluster)
                    runs[name].append(time.perf_counter() - started)
                    chips = Chip.objects.filter(cluster=cluster).count()
                    slices = Slice.objects.filter(cluster=cluster).count()
                    print(
                        f"initial sync from {name} (run {attempt}): "
                        f"{runs[name][-1]:.2f} s ({chips} chips, {slices} slices)"
                    )
            timings = {name: min(values) for name, values in runs.items()}
        finally:
            stack.stop()
            sim.terminate()
            sim.wait(timeout=30)
        print(
            f"best of two: real {timings['real']:.2f} s, simcluster "
            f"{timings['simcluster']:.2f} s; "
            f"real_over_simcluster_sync_ratio={timings['real'] / timings['simcluster']:.2f}"
        )
    finally:
        from django.db import connections

        connections.close_all()
        _drop_db(base)
    return 0


if __name__ == "__main__":
    sys.exit(main())
