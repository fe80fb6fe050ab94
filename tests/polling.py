"""Waiting for something a background process will make true (sync, a pass, a browser)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def wait_for(
    check: Callable[[], Any],
    what: str | Callable[[], str] | None = None,
    timeout: float = 20,
    interval: float = 0.2,
) -> Any:
    """Poll ``check`` until it returns something truthy, and return that; fail
    naming ``what`` (or the check's docstring) after ``timeout`` seconds.
    ``what`` may be a callable, called at the failure to say what was seen."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() >= deadline:
            said = what() if callable(what) else what
            raise AssertionError(
                f"timed out waiting for {said or check.__doc__ or check}"
            )
        time.sleep(interval)
