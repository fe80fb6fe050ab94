"""Start, watch and stop the control plane's processes, with the harness
(``harness.processes``) that the tests and bench use too.

kubestack's processes die with the Python that started them (an interrupted
run leaves no API server behind), and a failure to start is a
:class:`StackError` that names the part and shows its log.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from harness import processes
from harness.processes import Process, free_port

__all__ = ["Process", "StackError", "free_port", "spawn", "wait_until"]


class StackError(RuntimeError):
    """The stack could not start; the message names the part and its log."""


def spawn(
    name: str, args: list[str], logs: Path, env: dict[str, str] | None = None
) -> Process:
    """Start ``args`` in its own process group with output to ``logs/<name>.log``,
    with this process's environment plus ``env``."""
    return processes.start(
        name,
        args,
        logs,
        env={**os.environ, **(env or {})},
        cwd=Path.cwd(),
        die_with_parent=True,
    )


def wait_until(
    what: str,
    check: Callable[[], bool],
    timeout: float,
    watched: list[Process],
    interval: float = 0.2,
) -> None:
    """Poll ``check`` until true; fail early if a watched process died.

    A check that raises is "not yet" (a server that does not answer yet),
    except with :class:`StackError`: that check knows it will never come true.
    """

    def ready() -> bool:
        try:
            return bool(check())
        except StackError:
            raise
        except Exception:
            return False

    try:
        processes.wait_until(ready, what, timeout, interval, watched=watched)
    except (processes.ProcessError, processes.WaitTimeout) as error:
        raise StackError(str(error)) from None
