"""Waiting for something a background process will make true (sync, a pass, a
browser): the harness's :func:`harness.processes.wait_until`, under the name
the tests use (``wait_for(check, what, timeout)``; ``what`` may be a callable,
called at the failure to say what was seen), and :func:`seconds_until`, for a
test whose figure is how long the wait took."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from harness.processes import WaitTimeout
from harness.processes import wait_until as wait_for

__all__ = ["seconds_until", "wait_for"]


def seconds_until(
    condition: Callable[[], Any],
    timeout: float,
    interval: float = 0.2,
    *,
    since: float | None = None,
    ignore: tuple[type[BaseException], ...] = (),
) -> float | None:
    """Seconds from ``since`` (a ``time.monotonic()``; default now) until
    ``condition`` is truthy, or None if it is not within ``timeout`` seconds of
    ``since``: a measured figure, so not coming true is a result, not a failure.
    An exception of a type in ``ignore`` counts as "not yet"."""
    since = time.monotonic() if since is None else since
    left = since + timeout - time.monotonic()
    if left <= 0:
        return None
    try:
        wait_for(condition, timeout=left, interval=interval, ignore=ignore)
    except WaitTimeout:
        return None
    took = time.monotonic() - since
    return took if took <= timeout else None
