"""A job's log: read it once, or follow it and resume a cut stream.

The log is always asked for with ``timestamps=true``: each line then starts
with the kubelet's timestamp (RFC3339 with nanoseconds), which is both the
cursor to resume from (``since_time``) and how a line already printed is
recognised. A resumed read starts at the last timestamp printed (the portal
may round it down to the second), so it begins with lines seen before: those
older than the cursor are dropped, and of those at the cursor's timestamp as
many as were printed with the same text. The first line that is new ends the
replay, and from there every line is printed. Timestamps are stripped when
printing unless ``--timestamps`` asks for them.
"""

from __future__ import annotations

import datetime as dt
import re
import time
from collections import Counter
from collections.abc import Callable
from typing import Any, Protocol, TextIO

from vnpucli import exitcodes
from vnpucli.client import CONNECTION_ERRORS, Client, PortalError
from vnpucli.i18n import _

TIMESTAMP = re.compile(
    r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)"
)
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
#: A follow stream silent this long is opened again (a silent job is fine).
STREAM_IDLE_SECONDS = 120.0


def parse_timestamp(text: str) -> int | None:
    """An RFC3339 timestamp as nanoseconds since the epoch; None if it is not one."""
    found = TIMESTAMP.fullmatch(text)
    if not found:
        return None
    whole, fraction, zone = found.groups()
    try:
        moment = dt.datetime.fromisoformat(whole + ("+00:00" if zone == "Z" else zone))
    except ValueError:
        return None
    seconds = (moment - EPOCH) // dt.timedelta(seconds=1)
    return seconds * 10**9 + int((fraction or "").ljust(9, "0"))


def split_line(line: str) -> tuple[str | None, int | None, str]:
    """``"<timestamp> <text>"`` as (timestamp, nanoseconds, text); a line that
    does not start with a timestamp is (None, None, line)."""
    head, _space, text = line.partition(" ")
    nanos = parse_timestamp(head)
    if nanos is None:
        return None, None, line
    return head, nanos, text


class LogPrinter:
    """Prints a log's lines once each, across reads of the same log."""

    def __init__(self, out: TextIO, *, timestamps: bool = False) -> None:
        self.out = out
        self.timestamps = timestamps
        self.last_raw: str | None = None  # the newest timestamp printed, as sent
        self.last_nanos: int | None = None
        self.at_last: Counter[str] = Counter()  # texts printed at that timestamp
        self.replay: Counter[str] | None = None  # while resuming: still to drop
        self.untimed: set[str] = set()
        self.passes = 0
        self.printed = 0

    def since_time(self) -> str | None:
        """Where a resumed read starts: the newest timestamp printed."""
        return self.last_raw

    def begin_pass(self) -> None:
        """A new read of the log starts (a resume when something was printed)."""
        self.passes += 1
        self.replay = Counter(self.at_last) if self.last_nanos is not None else None

    def accept(self, line: str) -> bool:
        """Print ``line`` unless it was printed by an earlier read; say which."""
        raw, nanos, text = split_line(line)
        if nanos is None:
            if self.passes > 1 and line in self.untimed:
                return False
            self.untimed.add(line)
            self._write(line)
            return True
        if self.replay is not None and self.last_nanos is not None:
            if nanos < self.last_nanos:
                return False
            if nanos == self.last_nanos and self.replay[text] > 0:
                self.replay[text] -= 1
                return False
            self.replay = None  # the first new line: the replay is over
        if self.last_nanos is None or nanos > self.last_nanos:
            self.last_raw, self.last_nanos = raw, nanos
            self.at_last = Counter()
        if nanos == self.last_nanos:
            self.at_last[text] += 1
        self._write(line if self.timestamps else text)
        return True

    def _write(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()
        self.printed += 1


class Readable(Protocol):
    def read1(self, size: int = ...) -> bytes: ...


def read_lines(response: Readable, on_line: Callable[[str], Any]) -> str:
    """Hand each complete line of ``response`` to ``on_line`` as it arrives.

    Returns the unterminated rest at a clean end; a stream that broke raises
    one of ``CONNECTION_ERRORS`` (its unfinished line is dropped: the resumed
    read brings it whole).
    """
    buffer = b""
    while True:
        chunk = response.read1(65536)
        if not chunk:
            break
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")
        for line in lines:
            on_line(line.decode("utf-8", "replace"))
    if getattr(response, "length", None):  # fewer bytes than Content-Length
        raise ConnectionError("the log stream ended early")
    return buffer.decode("utf-8", "replace")


def log_pass(
    client: Client,
    rid: int,
    printer: LogPrinter,
    *,
    follow: bool,
    tail: int | None = None,
) -> bool:
    """One read of the log, printed; True when it ended cleanly, False when cut."""
    query: dict[str, Any] = {
        "timestamps": "true",
        "follow": "true" if follow else "false",
    }
    if printer.since_time():
        query["since_time"] = printer.since_time()
    elif tail:
        query["tail_lines"] = tail
    printer.begin_pass()
    response = client.open(
        "GET",
        f"/api/requests/{rid}/logs/",
        what=_("the log of request %(id)s") % {"id": rid},
        query=query,
        timeout=STREAM_IDLE_SECONDS if follow else 60.0,
        accept="text/plain, */*",
    )
    with response:
        try:
            rest = read_lines(response, printer.accept)
        except CONNECTION_ERRORS:
            return False
    if rest:
        printer.accept(rest)
    return True


def _not_ready(exc: PortalError, finished: bool) -> bool:
    """A refusal that means "no log yet" while the job is still on its way (its
    container is waiting to start, or its pod is not made yet); a 400 naming one
    of our own fields is not one."""
    if finished:
        return False
    names_a_field = isinstance(exc.body, dict) and bool(exc.body.get("errors"))
    return exc.status == 404 or (exc.status == 400 and not names_a_field)


def follow_log(
    client: Client,
    rid: int,
    printer: LogPrinter,
    *,
    tail: int | None = None,
    note: Callable[[str], None] = lambda _: None,
) -> None:
    """Print the log as it comes until the request has ended and all was read.

    A stream that ends is opened again from the last line printed, until a
    read that began after the request ended (that one has everything: the
    kept log, or the terminated container's). Broken connections and an
    unavailable portal are retried for ``client.retry_seconds`` in a row.
    """
    told_waiting = False
    failing_since: float | None = None
    delay = 0.5
    while True:
        request = client.request(rid)
        finished = exitcodes.is_finished(request)
        problem, printed = _("the log stream was cut"), printer.printed
        try:
            clean = log_pass(client, rid, printer, follow=not finished, tail=tail)
        except PortalError as exc:
            if finished and exc.status == 404 and printer.printed == 0:
                note(_("no log: %(problem)s") % {"problem": exc.message})
                return
            if _not_ready(exc, finished):
                if not told_waiting:
                    note(
                        _("waiting for the log: %(problem)s") % {"problem": exc.message}
                    )
                    told_waiting = True
                client.sleep(1.0)
                continue
            if not exc.transient:
                raise
            clean, problem = False, exc.message
        if clean and finished:
            return
        if clean:
            failing_since, delay = None, 0.5
            # the container ended (or the portal closed the stream): give the
            # portal a moment to say the request ended before reading again
            client.wait(rid, "finished", 2)
            continue
        if printer.printed > printed:  # it broke, but after new lines: not stuck
            failing_since, delay = None, 0.5
        failing_since = _still_trying(client, failing_since, delay, problem, note)
        delay = min(delay * 2, 5.0)


def _still_trying(
    client: Client,
    failing_since: float | None,
    delay: float,
    problem: str,
    note: Callable[[str], None],
) -> float:
    """Wait before reading the log again; give up after ``retry_seconds`` of failures."""
    now = time.monotonic()
    if failing_since is None:
        note(
            _("%(problem)s; reading on from the last line printed")
            % {"problem": problem}
        )
        failing_since = now
    elif now - failing_since > client.retry_seconds:
        raise PortalError(
            _("%(problem)s (and still, after %(seconds)g s)")
            % {"problem": problem, "seconds": client.retry_seconds},
            exitcodes.UNAVAILABLE,
        )
    client.sleep(delay)
    return failing_since
