"""Start, watch and stop the control plane's processes."""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

PR_SET_PDEATHSIG = 1


class StackError(RuntimeError):
    """The stack could not start; the message names the part and its log."""


def free_port() -> int:
    """A loopback port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Process:
    """One running binary and the file its output goes to."""

    name: str
    popen: subprocess.Popen[bytes]
    log: Path
    log_offset: int = 0  # where this process's output starts in ``log``

    def alive(self) -> bool:
        return self.popen.poll() is None

    def tail(self, lines: int = 25) -> str:
        try:
            text = self.log.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def terminate(self) -> None:
        """SIGTERM the process group (without waiting)."""
        if self.alive():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.popen.pid, signal.SIGTERM)

    def stop(self, grace: float = 5.0) -> None:
        """SIGTERM the process group, then SIGKILL what is left after ``grace``."""
        if not self.alive():
            return
        self.terminate()
        try:
            self.popen.wait(grace)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.popen.pid, signal.SIGKILL)
            self.popen.wait(5)


def _child_setup() -> None:
    """In the child, before exec: its own process group (stop() reaches its children)."""
    os.setsid()


def _child_setup_dying_with_parent() -> None:
    """As :func:`_child_setup`, and the kernel stops the process if the Python that
    started it dies, even by SIGKILL, so an interrupted run leaves nothing behind.

    PR_SET_PDEATHSIG fires when the *thread* that forked exits, not the process:
    only a process started from the main thread gets it (one restarted from a
    short-lived thread was killed as soon as that thread ended).
    """
    _child_setup()
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except OSError:
        pass


def spawn(
    name: str, args: list[str], logs: Path, env: dict[str, str] | None = None
) -> Process:
    """Start ``args`` in its own process group with output to ``logs/<name>.log``."""
    logs.mkdir(parents=True, exist_ok=True)
    log = logs / f"{name}.log"
    with log.open("ab") as handle:
        offset = handle.tell()
        popen = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=handle,
            stderr=subprocess.STDOUT,
            env={**os.environ, **(env or {})},
            preexec_fn=(
                _child_setup_dying_with_parent
                if threading.current_thread() is threading.main_thread()
                else _child_setup
            ),
        )
    return Process(name, popen, log, offset)


def wait_until(
    what: str,
    check: Callable[[], bool],
    timeout: float,
    watched: list[Process],
    interval: float = 0.2,
) -> None:
    """Poll ``check`` until true; fail early if a watched process died."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for process in watched:
            if not process.alive():
                raise StackError(
                    f"{process.name} exited (code {process.popen.returncode}) while "
                    f"waiting for {what}; last lines of {process.log}:\n{process.tail()}"
                )
        try:
            if check():
                return
        except StackError:
            raise  # the check knows it will never come true
        except Exception:  # noqa: S110 - not up yet; the deadline decides
            pass
        time.sleep(interval)
    logs = "\n".join(f"--- {p.name} ({p.log}):\n{p.tail(10)}" for p in watched)
    raise StackError(f"timed out after {timeout:.0f} s waiting for {what}\n{logs}")
