"""Containers' output, kept in memory as a kubelet keeps its log files on disk.

Each container's log is keyed by its containerID (the kubelet's files are
too) and belongs to its pod's uid, so that it goes when the pod goes. It holds
timestamped lines, at most ``keep_bytes`` of them per container (the oldest are
dropped first, as log rotation drops old files), plus the lines its job has
yet to print (``simcluster.jobs.schedule``). A line is printed when its time
comes: every read first moves the lines that are due into the log, so reads
are exact without a timer thread, and a line's timestamp is the time it was
due, never the moment somebody looked.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass

KEEP_BYTES = 10 * 1024 * 1024  # per container, as the kubelet's containerLogMaxSize


def kubelet_timestamp(at_ns: int) -> str:
    """RFC 3339 with nine fraction digits in UTC, as ``kubectl logs --timestamps``
    prints them (the kubelet's ``RFC3339NanoFixed``)."""
    seconds, nanos = divmod(at_ns, 1_000_000_000)
    whole = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))
    return f"{whole}.{nanos:09d}Z"


@dataclass(frozen=True, slots=True)
class LogLine:
    """One printed line: when (wall-clock ns) and its bytes, newline included."""

    at_ns: int
    text: bytes


class _Log:
    """One container's log: printed lines (bounded) and scheduled ones."""

    __slots__ = ("first", "lines", "pending", "size")

    def __init__(self, pending: Iterable[tuple[int, str]]) -> None:
        self.lines: deque[LogLine] = deque()
        self.first = 0  # absolute index of lines[0]; grows as old lines go
        self.size = 0
        self.pending = deque(
            LogLine(at, (text + "\n").encode()) for at, text in pending
        )

    @property
    def end(self) -> int:
        """Absolute index just after the last printed line (a reader's cursor)."""
        return self.first + len(self.lines)

    def print_due(self, now_ns: int | None, keep_bytes: int) -> None:
        """Move the pending lines due by ``now_ns`` (None: all) into the log."""
        while self.pending and (now_ns is None or self.pending[0].at_ns <= now_ns):
            line = self.pending.popleft()
            self.lines.append(line)
            self.size += len(line.text)
            while self.size > keep_bytes and len(self.lines) > 1:
                self.size -= len(self.lines.popleft().text)
                self.first += 1

    def since(self, cursor: int) -> list[LogLine]:
        """The printed lines from absolute index ``cursor`` (or the oldest kept)."""
        count = self.end - max(cursor, self.first)
        if count <= 0:
            return []
        newest_first = list(itertools.islice(reversed(self.lines), count))
        newest_first.reverse()
        return newest_first


class LogBook:
    """Every container's log on the simulated nodes; thread-safe.

    The kubelet starts, flushes and forgets logs; the log API reads them.
    Readers that follow a log wait on :meth:`wait`, woken when something
    changes (or at their own timeout, to print the next line when it is due).
    """

    def __init__(
        self, keep_bytes: int = KEEP_BYTES, clock: Callable[[], int] = time.time_ns
    ) -> None:
        self.keep_bytes = keep_bytes
        self.clock = clock
        self._cond = threading.Condition(threading.Lock())
        self._logs: dict[str, _Log] = {}
        self._by_pod: dict[str, set[str]] = {}

    def start(
        self, pod_uid: str, container_id: str, lines: Iterable[tuple[int, str]]
    ) -> bool:
        """Open a container's log with its scheduled lines; False if it exists
        (a kubelet that looks at a pod again must not print its lines twice)."""
        with self._cond:
            if container_id in self._logs:
                return False
            self._logs[container_id] = _Log(lines)
            self._by_pod.setdefault(pod_uid, set()).add(container_id)
            self._cond.notify_all()
            return True

    def known(self, container_id: str) -> bool:
        """Whether the container's log was started."""
        with self._cond:
            return container_id in self._logs

    def flush(self, container_ids: Iterable[str]) -> None:
        """The containers ended: whatever they had yet to print is printed now."""
        with self._cond:
            for container_id in container_ids:
                found = self._logs.get(container_id)
                if found is not None:
                    found.print_due(None, self.keep_bytes)
            self._cond.notify_all()

    def forget_pod(self, pod_uid: str) -> None:
        """The pod is gone: its containers' logs go with it."""
        with self._cond:
            for container_id in self._by_pod.pop(pod_uid, set()):
                self._logs.pop(container_id, None)
            self._cond.notify_all()

    def read(self, container_id: str, cursor: int = 0) -> tuple[list[LogLine], int]:
        """The lines printed from ``cursor`` on, and the cursor after them.

        A cursor older than the oldest kept line reads from the oldest kept
        (what rotation dropped is lost, as on a node). An unknown container
        has an empty log.
        """
        with self._cond:
            found = self._logs.get(container_id)
            if found is None:
                return [], cursor
            found.print_due(self.clock(), self.keep_bytes)
            return found.since(cursor), found.end

    def next_due(self, container_id: str) -> int | None:
        """When (wall-clock ns) the container prints its next line, or None."""
        with self._cond:
            found = self._logs.get(container_id)
            if found is None or not found.pending:
                return None
            return found.pending[0].at_ns

    def wait(self, timeout: float) -> None:
        """Sleep until a log is started, flushed or forgotten, or ``timeout`` s."""
        with self._cond:
            self._cond.wait(max(0.0, timeout))
