"""Command line: ``python -m simcluster --port 0 --kubeconfig PATH --scenario NAME``."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
import time
from typing import Any

from simcluster.faults import FaultSettings
from simcluster.scenarios import SCENARIOS
from simcluster.server import SimCluster


def parser() -> argparse.ArgumentParser:
    """The CLI options (in the order ``--help`` lists them)."""
    p = argparse.ArgumentParser(
        prog="python -m simcluster",
        description="Simulated Kubernetes API server with Ascend vNPUs.",
    )
    _add_server_options(p)
    _add_scenario_options(p)
    _add_controller_options(p)
    _add_access_and_fault_options(p)
    return p


def _add_server_options(p: argparse.ArgumentParser) -> None:
    """Where it listens and how clients reach it."""
    p.add_argument(
        "--port", type=int, default=0, help="listen port; 0 picks a free one"
    )
    p.add_argument(
        "--host", default="127.0.0.1", help="listen address (default 127.0.0.1)"
    )
    p.add_argument(
        "--advertise-host",
        default="",
        help="host name clients use, for the URL, kubeconfig and certificate "
        "(default: the listen address)",
    )
    p.add_argument(
        "--kubeconfig", help="write a kubeconfig here (contexts simcluster, readonly)"
    )


def _add_scenario_options(p: argparse.ArgumentParser) -> None:
    """What the cluster holds, and the watch history kept."""
    p.add_argument("--scenario", choices=SCENARIOS, default="guide")
    p.add_argument(
        "--nodes",
        type=int,
        default=1000,
        help="scale: number of nodes; burst: of 310P nodes",
    )
    p.add_argument("--pods", type=int, default=30000, help="scale: number of pods")
    p.add_argument(
        "--slice-pods", type=int, default=20000, help="scale: pods holding a slice"
    )
    p.add_argument(
        "--history", type=int, default=10000, help="watch history window (events)"
    )


def _add_controller_options(p: argparse.ArgumentParser) -> None:
    """The simulated controllers and how fast things happen."""
    p.add_argument(
        "--no-device-plugin", action="store_true", help="no simulated device plugin"
    )
    p.add_argument(
        "--no-binder", action="store_true", help="no simulated scheduler/binder"
    )
    p.add_argument(
        "--no-workloads", action="store_true", help="no Deployment/DaemonSet controller"
    )
    p.add_argument("--workload", action="store_true", help="generate demo slice pods")
    p.add_argument("--workload-interval", type=float, default=3.0)
    p.add_argument("--policy", choices=("binpack", "spread"), default="spread")
    p.add_argument(
        "--plugin-interval",
        type=float,
        default=30.0,
        help="device plugin report interval (s)",
    )
    p.add_argument("--bookmark-interval", type=float, default=10.0)
    p.add_argument(
        "--watch-timeout",
        type=float,
        default=1800.0,
        help="server-side watch timeout when the client sets none (s)",
    )
    p.add_argument(
        "--ready-delay", type=float, default=0.5, help="pod Running -> Ready (s)"
    )
    p.add_argument(
        "--pod-shutdown-seconds",
        type=float,
        default=1.0,
        help="how long containers take to stop when no grace period is given",
    )
    p.add_argument(
        "--continue-ttl",
        type=float,
        default=300.0,
        help="lifetime of list continue tokens (s)",
    )


def _add_access_and_fault_options(p: argparse.ArgumentParser) -> None:
    """Tokens, Volcano objects, injected faults, logging."""
    p.add_argument(
        "--plain-http",
        action="store_true",
        help="serve plain HTTP (kubectl then sends no token: every request is 401)",
    )
    p.add_argument("--token", help="admin bearer token (default: random)")
    p.add_argument("--readonly-token", help="read-only bearer token (default: random)")
    p.add_argument("--seed", type=int, help="random seed for faults and the generator")
    p.add_argument(
        "--no-volcano-crds",
        action="store_true",
        help="serve no Volcano objects (a cluster on HAMi's own scheduler)",
    )
    p.add_argument("--latency-ms", type=float, default=0.0)
    p.add_argument("--error-500-rate", type=float, default=0.0)
    p.add_argument("--error-429-rate", type=float, default=0.0)
    p.add_argument("--conflict-rate", type=float, default=0.0)
    p.add_argument("--watch-drop-after-events", type=int, default=0)
    p.add_argument("--watch-drop-after-seconds", type=float, default=0.0)
    p.add_argument("-v", "--verbose", action="store_true", help="log every request")


def options_from(args: argparse.Namespace) -> dict[str, Any]:
    """SimCluster keyword arguments from parsed CLI options."""
    return {
        "scenario": args.scenario,
        "port": args.port,
        "host": args.host,
        "advertise_host": args.advertise_host,
        "nodes": args.nodes,
        "pods": args.pods,
        "slice_pods": args.slice_pods,
        "history": args.history,
        "device_plugin": not args.no_device_plugin,
        "binder": not args.no_binder,
        "workloads": not args.no_workloads,
        "workload": args.workload,
        "workload_interval": args.workload_interval,
        "policy": args.policy,
        "plugin_interval": args.plugin_interval,
        "bookmark_interval": args.bookmark_interval,
        "watch_timeout": args.watch_timeout,
        "ready_delay": args.ready_delay,
        "pod_shutdown_seconds": args.pod_shutdown_seconds,
        "continue_ttl": args.continue_ttl,
        "tls": not args.plain_http,
        "token": args.token,
        "readonly_token": args.readonly_token,
        "seed": args.seed,
        "volcano_crds": not args.no_volcano_crds,
        "faults": FaultSettings(
            args.latency_ms,
            args.error_500_rate,
            args.error_429_rate,
            args.conflict_rate,
            args.watch_drop_after_events,
            args.watch_drop_after_seconds,
        ),
    }


def main(argv: list[str] | None = None) -> int:
    """Run until SIGTERM or Ctrl-C."""
    args = parser().parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="%(asctime)s %(name)s %(message)s",
    )
    started = time.monotonic()
    sim = SimCluster(**options_from(args))
    sim.start()
    print(
        f"simcluster ({args.scenario}) listening on {sim.url} "
        f"(built in {time.monotonic() - started:.1f}s)",
        flush=True,
    )
    if args.kubeconfig:
        path = sim.write_kubeconfig(args.kubeconfig)
        print(
            f"kubeconfig written to {path} (contexts: simcluster, readonly)", flush=True
        )
    done = threading.Event()

    def on_signal(signum: int, frame: object) -> None:
        done.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    while not done.wait(0.5):
        pass
    sim.stop()
    print("simcluster stopped", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
