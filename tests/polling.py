"""Waiting for something a background process will make true (sync, a pass, a browser)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def wait_for(
    check: Callable[[], Any],
    what: str | None = None,
    timeout: float = 20,
    interval: float = 0.2,
) -> Any:
    """Poll ``check`` until it returns something truthy, and return that; fail
    naming ``what`` (or the check's docstring) after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        assert time.monotonic() < deadline, (
            f"timed out waiting for {what or check.__doc__ or check}"
        )
        time.sleep(interval)
