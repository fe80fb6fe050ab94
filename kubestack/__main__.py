"""``python -m kubestack build`` and ``python -m kubestack up --kubeconfig PATH``."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time
from pathlib import Path


def parser() -> argparse.ArgumentParser:
    """The command line."""
    p = argparse.ArgumentParser(
        prog="python -m kubestack",
        description="A real Kubernetes control plane with the real Volcano scheduler.",
    )
    sub = p.add_subparsers(dest="command", required=True)
    b = sub.add_parser(
        "build", help="build (or reuse) the binaries; prints their folder"
    )
    b.add_argument("--force", action="store_true", help="rebuild even if cached")
    b.add_argument(
        "--status-dir",
        default=None,
        help="write <stage>.rc there as each stage (kubectl, hydra, control-plane, hami, helm) "
        "ends, for tests that wait for it (scripts/test.sh)",
    )
    h = sub.add_parser(
        "build-tools",
        help="build (or reuse) only kubectl, hydra and helm, in their own cache folders",
    )
    h.add_argument("--force", action="store_true", help="rebuild even if cached")
    b2 = sub.add_parser(
        "bin",
        help="print the folders of kubectl and helm and of the control plane, as a "
        "PATH (no build)",
    )
    b2.add_argument(
        "--planned",
        action="store_true",
        help="the folders the builds fill, built or not yet",
    )
    sub.add_parser(
        "align",
        help="pin the Volcano and etcd wrappers' dependencies to Kubernetes' versions "
        "(after a version bump; kubestack/gomods.py says why), then run go mod tidy there",
    )
    u = sub.add_parser("up", help="start the stack and a scenario; Ctrl-C stops it")
    u.add_argument(
        "--kubeconfig", required=True, help="write the admin kubeconfig here"
    )
    u.add_argument(
        "--scenario",
        default="guide",
        help="guide (default), empty, scale, burst or nodeconfig",
    )
    u.add_argument(
        "--scheduler",
        default="volcano",
        choices=("volcano", "hami"),
        help="who places the scenario's vNPU pods: volcano (default) or hami "
        "(HAMi's scheduler as its chart deploys it: a kube-scheduler with HAMi as "
        "extender, and its webhook; needs the hami build stage)",
    )
    u.add_argument("--seed", type=int, default=None, help="random seed of the scenario")
    u.add_argument("--workdir", default=None, help="keep logs and data here")
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    args = parser().parse_args(argv)
    from kubestack import build

    if args.command == "build":
        status_dir = Path(args.status_dir) if args.status_dir else None
        return build.main(force=args.force, status_dir=status_dir)
    if args.command == "build-tools":
        return build.main(force=args.force, control_plane=False)
    if args.command == "align":
        return _align()
    if args.command == "bin":
        try:
            folders = build.path_dirs(planned=args.planned)
            print(os.pathsep.join(str(folder) for folder in folders))
        except build.BuildError as error:
            print(f"kubestack: {error}", file=sys.stderr)
            return 1
        return 0
    return _up(args)


def _align() -> int:
    import subprocess

    from kubestack import build, gomods

    go = build.go_binary()
    for part in gomods.ALIGNED:
        # go mod tidy may bring in modules both list at different versions:
        # align again until nothing changes.
        for _ in range(5):
            changed = gomods.align(part)
            for module, theirs, ours in changed:
                print(f"{part}: {module} {ours} -> {theirs}")
            if not changed:
                break
            tidy = subprocess.run(
                [go, "mod", "tidy"], cwd=gomods.GOMOD / part, env=build.go_env(go)
            )
            if tidy.returncode != 0:
                # e.g. KWOK: its code needs newer OpenTelemetry than Kubernetes ships
                print(
                    f"kubestack align: {part}: go mod tidy failed with Kubernetes' "
                    "versions (above); undo with git checkout kubestack/gomod",
                    file=sys.stderr,
                )
                return 1
        if gomods.misaligned(part):
            print(
                f"{part}: still misaligned: {gomods.misaligned(part)}", file=sys.stderr
            )
            return 1
    print("aligned: " + ", ".join(gomods.ALIGNED))
    return 0


def _up(args: argparse.Namespace) -> int:
    from pathlib import Path

    from kubestack import build
    from kubestack.processes import StackError
    from kubestack.stack import KubeStack

    stop = threading.Event()

    def interrupt(*_: object) -> None:
        # While starting: abort the start (stop() then cleans up); once up: end the wait.
        if stop.is_set() or not ready.is_set():
            raise KeyboardInterrupt
        stop.set()

    ready = threading.Event()
    signal.signal(signal.SIGTERM, interrupt)
    signal.signal(signal.SIGINT, interrupt)
    started = time.monotonic()

    def progress(text: str) -> None:
        print(f"    {time.monotonic() - started:5.1f} s  {text}", flush=True)

    try:
        stack = KubeStack(
            scenario=args.scenario,
            workdir=Path(args.workdir) if args.workdir else None,
            keep=bool(args.workdir),
            seed=args.seed,
            progress=progress,
            scheduler=args.scheduler,
        )
    except (build.BuildError, StackError) as error:
        print(f"kubestack up: {error}", file=sys.stderr)
        return 1
    print(f"==> starting the control plane in {stack.workdir}", flush=True)
    try:
        stack.start()
    except StackError as error:
        print(f"kubestack up: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("==> interrupted; stopped", flush=True)
        return 130
    ready.set()
    try:
        path = stack.write_kubeconfig(args.kubeconfig)
        print(f"==> {stack.url} (kubeconfig {path}; logs {stack.logs})", flush=True)
        print("ready", flush=True)
        while not stop.wait(1):
            dead = [name for name, up in stack.alive().items() if not up]
            if dead:
                print(
                    f"kubestack: {', '.join(dead)} exited; see {stack.logs}",
                    file=sys.stderr,
                )
                return 1
    finally:
        print("==> stopping", flush=True)
        stack.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
