"""Benchmark: list all pods of the ``scale`` scenario through the Python client.

Run: ``python -m bench.simcluster_list [--pods N] [--nodes N] [--slice-pods N]``.
Prints the server build time, the typed and raw list times, and the in-process
``json.dumps`` time of the same objects for comparison.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from kubernetes import client  # noqa: E402

from simcluster import resources  # noqa: E402
from simcluster.server import SimCluster  # noqa: E402


def _timed(label: str, fn):  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    value = fn()
    elapsed = time.perf_counter() - started
    print(f"{label:<48} {elapsed:8.3f} s")
    return value, elapsed


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark."""
    parser = argparse.ArgumentParser(prog="python -m bench.simcluster_list")
    parser.add_argument("--quick", action="store_true", help="a tenth of the scale")
    parser.add_argument("--pods", type=int, default=30000)
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--slice-pods", type=int, default=None)
    parser.add_argument("--plain-http", action="store_true", help="no TLS")
    args = parser.parse_args(argv)
    if args.quick:
        args.pods, args.nodes = 3000, 100
    slice_pods = args.slice_pods if args.slice_pods is not None else args.pods * 2 // 3
    sim, _ = _timed(
        "build scale scenario",
        lambda: SimCluster(
            "scale",
            port=0,
            nodes=args.nodes,
            pods=args.pods,
            slice_pods=slice_pods,
            tls=not args.plain_http,
            device_plugin=False,
        ),
    )
    sim.start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            core = client.CoreV1Api(sim.kubernetes_client(Path(tmp) / "kubeconfig"))
            count = sim.store.count(resources.POD)
            print(f"pods in store: {count} ({'http' if args.plain_http else 'https'})")

            def raw() -> dict:
                response = core.list_pod_for_all_namespaces(_preload_content=False)
                return json.loads(response.data)

            body, raw_s = _timed("list, _preload_content=False + json.loads", raw)
            typed, typed_s = _timed(
                "list_pod_for_all_namespaces (typed models)",
                core.list_pod_for_all_namespaces,
            )
            if not len(typed.items) == len(body["items"]) == count:
                raise SystemExit("list sizes differ")
            _, items = sim.store.list(resources.POD)
            objs = [s.obj for s in items]
            _, dumps_s = _timed(
                "in-process json.dumps of the same objects",
                lambda: json.dumps({"items": objs}),
            )
            _, join_s = _timed(
                "in-process join of cached bytes (server work)",
                lambda: b",".join(s.raw for s in items),
            )
            print(f"ratio raw list / json.dumps           {raw_s / dumps_s:8.1f} x")
            print(f"ratio typed list / json.dumps         {typed_s / dumps_s:8.1f} x")
            print(f"ratio typed list / raw list           {typed_s / raw_s:8.1f} x")
            print(f"ratio json.dumps / cached-bytes join  {dumps_s / join_s:8.1f} x")
    finally:
        sim.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
