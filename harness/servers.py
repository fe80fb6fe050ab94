"""What the harness's single-binary servers (Prometheus, Alertmanager) share:
one process, its log file, and stopping it."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Self

from harness import processes


class LoggedServer:
    """A server run as one process whose output goes to ``log_path``.
    Subclasses set ``log_path`` and ``proc`` and define ``start``."""

    log_path: Path
    proc: processes.Process | None = None

    def start(self, timeout: float = 30) -> Any:
        raise NotImplementedError

    def stop(self, grace: float = 10) -> None:
        """Terminate it, and kill it when it takes longer than ``grace`` s."""
        proc, self.proc = self.proc, None
        if proc is not None:
            processes.stop(proc, grace)

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def log(self, tail: int | None = None) -> str:
        """Its log (the last ``tail`` characters when given)."""
        if not self.log_path.exists():
            return ""
        text = self.log_path.read_text(errors="replace")
        return text[-tail:] if tail else text
