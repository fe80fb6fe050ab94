"""Start, wait for and stop the processes the tests, kubestack and bench run.

One way for all of them:

- :func:`free_port` picks a loopback port;
- :func:`start` runs a command in a process group of its own, its output
  appended to ``<logs>/<name>.log``;
- :func:`stop` sends SIGTERM to the whole group, then SIGKILL to what is
  left after a grace period (a Celery worker's pool children go with it);
- :func:`wait_until` polls a condition and, when it does not come true in
  time or a watched process dies first, fails with a message that names what
  it waited for and shows the end of the processes' logs;
  :func:`wait_for_port` and :func:`wait_for_http` are the two readiness
  checks built on it;
- :func:`celery_command` is the Celery worker's and beat's command line.

A wait is always on a condition: how long something takes is the
condition's business, the timeout only bounds a failure.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PR_SET_PDEATHSIG = 1


class ProcessError(RuntimeError):
    """A process exited while something waited on it; the message shows its log."""


class WaitTimeout(AssertionError):
    """A condition did not come true in time.

    An ``AssertionError``: in a test, a wait that times out is an expectation
    that failed.
    """


def free_port() -> int:
    """A TCP port of 127.0.0.1 that nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Process:
    """One started command, the file its output goes to and where that output
    starts in it (a restart appends to the same log)."""

    name: str
    popen: subprocess.Popen[bytes]
    log: Path
    log_offset: int = 0

    @property
    def pid(self) -> int:
        return self.popen.pid

    @property
    def returncode(self) -> int | None:
        return self.popen.returncode

    def poll(self) -> int | None:
        return self.popen.poll()

    def alive(self) -> bool:
        return self.popen.poll() is None

    def output(self, tail: int | None = None) -> str:
        """This run's output (its last ``tail`` characters when given)."""
        try:
            with self.log.open("rb") as handle:
                handle.seek(self.log_offset)
                text = handle.read().decode(errors="replace")
        except OSError:
            return ""
        return text[-tail:] if tail else text

    def tail(self, lines: int = 25) -> str:
        """The last ``lines`` lines of this run's output."""
        return "\n".join(self.output().splitlines()[-lines:])

    def terminate(self) -> None:
        """SIGTERM the process group, without waiting."""
        signal_group(self, signal.SIGTERM)

    def stop(self, grace: float = 10, sig: int = signal.SIGTERM) -> None:
        """See :func:`stop`."""
        stop(self, grace, sig)


def _own_group() -> None:
    os.setsid()


def _own_group_dying_with_parent() -> None:
    """As :func:`_own_group`, and the kernel stops the process when the Python
    that started it dies, even by SIGKILL, so an interrupted run leaves nothing
    behind.

    PR_SET_PDEATHSIG fires when the *thread* that forked exits, not the
    process, so only a process started from the main thread gets it (one
    started from a short-lived thread would die with that thread).
    """
    _own_group()
    with contextlib.suppress(OSError):
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def start(
    name: str,
    args: list[str],
    logs: Path,
    *,
    env: Mapping[str, str] | None = None,
    cwd: Path = ROOT,
    die_with_parent: bool = False,
) -> Process:
    """Start ``args`` as ``name`` in a process group of its own, from ``cwd``
    (the repository by default), with stdin closed and stdout and stderr
    appended to ``logs/<name>.log``.

    ``env`` is the whole environment (``os.environ`` when None).
    ``die_with_parent``: the process gets SIGTERM if this Python dies (only
    from the main thread; see :func:`_own_group_dying_with_parent`).
    """
    logs.mkdir(parents=True, exist_ok=True)
    log = logs / f"{name}.log"
    dying = die_with_parent and threading.current_thread() is threading.main_thread()
    with log.open("ab") as handle:
        offset = handle.tell()
        popen = subprocess.Popen(
            args,
            cwd=cwd,
            env=dict(os.environ if env is None else env),
            stdin=subprocess.DEVNULL,
            stdout=handle,
            stderr=subprocess.STDOUT,
            # start_new_session is fork-safe; a preexec_fn only where needed
            start_new_session=not dying,
            preexec_fn=_own_group_dying_with_parent if dying else None,
        )
    return Process(name, popen, log, offset)


def signal_group(process: Process, sig: int) -> None:
    """Send ``sig`` to the process group of ``process`` (nothing when it is gone)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, sig)


def stop(process: Process, grace: float = 10, sig: int = signal.SIGTERM) -> None:
    """Send ``sig`` (SIGTERM) to the process group and wait for the process;
    SIGKILL the group if it is still there after ``grace`` seconds, and
    whatever of the group outlived its leader (an orphaned pool child)."""
    if not process.alive():
        return  # reaped earlier: its group id may be another's by now
    signal_group(process, sig)
    try:
        process.popen.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        signal_group(process, signal.SIGKILL)
        process.popen.wait(timeout=10)
    signal_group(process, signal.SIGKILL)


def stop_all(
    processes: Iterable[Process], grace: float = 10, sig: int = signal.SIGTERM
) -> None:
    """:func:`stop` for several processes: ``sig`` goes to all of them first,
    so they shut down side by side."""
    processes = list(processes)
    for process in processes:
        if process.alive():
            signal_group(process, sig)
    for process in processes:
        stop(process, grace, sig)


def _logs_of(processes: Iterable[Process], lines: int = 15) -> str:
    return "".join(
        f"\n--- {p.name} ({p.log}), last lines:\n{p.tail(lines)}" for p in processes
    )


def wait_until(
    condition: Callable[[], Any],
    what: str | Callable[[], str] | None = None,
    timeout: float = 20,
    interval: float = 0.2,
    *,
    watched: Iterable[Process] = (),
    ignore: tuple[type[BaseException], ...] = (),
) -> Any:
    """Poll ``condition`` until it returns something truthy, and return that.

    Fails with :class:`WaitTimeout` after ``timeout`` seconds, naming ``what``
    (or the condition's docstring; a callable ``what`` is called at the failure,
    to say what was seen), and with :class:`ProcessError` as soon as a
    ``watched`` process exits; both messages end with the watched processes'
    logs. An exception of a type in ``ignore`` counts as "not yet" (a server
    that does not answer yet); the last one is in the timeout's message.
    """
    watched = list(watched)

    def named() -> str:
        said = what() if callable(what) else what
        return said or (condition.__doc__ or repr(condition)).strip()

    deadline = time.monotonic() + timeout
    last_error: BaseException | None = None
    while True:
        for process in watched:
            if not process.alive():
                raise ProcessError(
                    f"{process.name} exited (code {process.returncode}) while "
                    f"waiting for {named()}{_logs_of([process], 40)}"
                )
        try:
            value = condition()
        except ignore as error:
            value, last_error = None, error
        if value:
            return value
        if time.monotonic() >= deadline:
            because = f" (last: {last_error!r})" if last_error else ""
            raise WaitTimeout(
                f"timed out after {timeout:g} s waiting for {named()}{because}"
                f"{_logs_of(watched)}"
            )
        time.sleep(interval)


def port_open(port: int, host: str = "127.0.0.1") -> bool:
    """Whether a TCP connection to ``host:port`` is accepted now."""
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def wait_for_port(
    port: int,
    host: str = "127.0.0.1",
    timeout: float = 20,
    *,
    watched: Iterable[Process] = (),
) -> None:
    """Wait until something accepts connections on ``host:port``."""
    wait_until(
        lambda: port_open(port, host),
        f"something to listen on {host}:{port}",
        timeout,
        0.1,
        watched=watched,
    )


def http_status(url: str, timeout: float = 2) -> int:
    """The status of a GET of ``url`` (an error status included); raises
    ``OSError`` when nothing answers."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as answer:  # noqa: S310 - the caller's own URL
            return int(answer.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


def wait_for_http(
    url: str,
    timeout: float = 60,
    *,
    status: Collection[int] | None = None,
    watched: Iterable[Process] = (),
) -> int:
    """Wait until a GET of ``url`` is answered (with a status in ``status``
    when given: ``{200}`` for a readiness endpoint) and return the status."""
    wanted = "an answer" if status is None else f"status {sorted(status)}"
    return int(
        wait_until(
            lambda: (
                (code := http_status(url))
                and (status is None or code in status)
                and code
            ),
            f"{wanted} from {url}",
            timeout,
            watched=watched,
            ignore=(OSError,),
        )
    )


def uvicorn_command(port: int, *extra: str) -> list[str]:
    """The command line of the portal's ASGI server (uvicorn, run by this
    Python) on 127.0.0.1:``port``, without access logs; ``extra`` comes last."""
    return [
        sys.executable,
        "-m",
        "uvicorn",
        "vnpuportal.asgi:application",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--no-access-log",
        *extra,
    ]


def celery_command(
    role: str,
    *,
    pool: str = "threads",
    concurrency: int = 4,
    loglevel: str = "INFO",
    name: str | None = None,
    schedule: Path | str | None = None,
    beat: bool = False,
    extra: Iterable[str] = (),
) -> list[str]:
    """The command line of the portal's Celery ``worker`` or ``beat``, run by
    this Python.

    A worker: ``pool`` and ``concurrency``, without gossip and mingle (the
    portal's workers share nothing through them, and they slow a start),
    named ``name`` (``-n``) when given, with beat inside it when ``beat``.
    Beat (in its own process or the worker's) keeps its schedule in
    ``schedule``; ``extra`` arguments come last.
    """
    if role not in ("worker", "beat"):
        raise ValueError(f"a Celery role is worker or beat, not {role!r}")
    command = [sys.executable, "-m", "celery", "-A", "vnpuportal", role]
    if role == "worker":
        command += ["--pool", pool, "--concurrency", str(concurrency)]
        command += ["--without-gossip", "--without-mingle"]
        if name:
            command += ["-n", name]
        if beat:
            command.append("--beat")
    if role == "beat" or beat:
        if schedule is not None:
            command += ["--schedule", str(schedule)]
        if role == "beat":
            command.append("--pidfile=")
    command += ["--loglevel", loglevel, *extra]
    return command


class ProcessSet:
    """Named processes started from the repository with ``env()``, each
    logging to ``<directory>/<name>.log``; a name started again replaces its
    process and appends to its log."""

    def __init__(self, directory: Path, env: Callable[[], Mapping[str, str]]) -> None:
        self.dir = directory
        self.env = env
        self.procs: dict[str, Process] = {}

    def launch(
        self, name: str, cmd: list[str], extra_env: Mapping[str, str] | None = None
    ) -> Process:
        """Start ``cmd`` as ``name`` with ``env()`` and ``extra_env`` over it."""
        process = start(name, cmd, self.dir, env={**self.env(), **(extra_env or {})})
        self.procs[name] = process
        return process

    def kill(self, name: str, sig: int = signal.SIGKILL, grace: float = 30) -> None:
        """Stop ``name`` with ``sig`` (see :func:`stop`); nothing when it is not running."""
        process = self.procs.pop(name, None)
        if process is not None:
            stop(process, grace, sig)

    def stop_all(self, sig: int = signal.SIGTERM, grace: float = 10) -> None:
        """Stop every process, side by side (see :func:`stop_all`)."""
        processes = list(self.procs.values())
        self.procs.clear()
        stop_all(processes, grace, sig)

    def log(self, name: str, tail: int | None = None) -> str:
        """The log of ``name``, every run of it (its last ``tail`` characters when given)."""
        path = self.dir / f"{name}.log"
        text = path.read_text(errors="replace") if path.exists() else ""
        return text[-tail:] if tail else text
