"""The portal's processes for the tests that run it as deployed (e2e, faults).

``PortalProcesses`` starts named processes (web, worker, beat, sync...) in
sessions of their own, each logging to ``<dir>/<name>.log``, and stops them
by group (a Celery worker's children go with it). The two stacks built on it
differ in what they put around the processes: ``tests/e2e/stack.py`` runs the
embedded default for the browser, ``tests/faults/stack.py`` the production
setup on private PostgreSQL and Redis.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
from collections.abc import Callable, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    """A TCP port nothing listens on now (127.0.0.1)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PortalProcesses:
    """Named processes started from the repository root with ``env()``."""

    def __init__(self, directory: Path, env: Callable[[], Mapping[str, str]]) -> None:
        self.dir = directory
        self.env = env
        self.procs: dict[str, subprocess.Popen[bytes]] = {}

    def launch(self, name: str, cmd: list[str]) -> subprocess.Popen[bytes]:
        """Start ``cmd`` as ``name`` (appending to its log: a restart keeps the
        earlier run's lines)."""
        with (self.dir / f"{name}.log").open("ab") as log:
            proc = subprocess.Popen(
                cmd,
                cwd=ROOT,
                env=dict(self.env()),
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.procs[name] = proc
        return proc

    def kill(self, name: str, sig: int = signal.SIGKILL, grace: float = 30) -> None:
        """Send ``sig`` to the process group of ``name`` and wait for it (SIGKILL
        after ``grace`` seconds); nothing when it is not running."""
        proc = self.procs.pop(name, None)
        if proc is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)

    def stop_all(self, sig: int = signal.SIGTERM, grace: float = 10) -> None:
        """Stop every process: ``sig`` to all at once, then wait (SIGKILL late ones)."""
        for proc in self.procs.values():
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, sig)
        for name in list(self.procs):
            self.kill(name, sig, grace)

    def log(self, name: str, tail: int | None = None) -> str:
        """The log of ``name`` (its last ``tail`` characters when given)."""
        path = self.dir / f"{name}.log"
        text = path.read_text(errors="replace") if path.exists() else ""
        return text[-tail:] if tail else text
