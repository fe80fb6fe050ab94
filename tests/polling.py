"""Waiting for something a background process will make true (sync, a pass, a
browser): the harness's :func:`harness.processes.wait_until`, under the name
the tests use (``wait_for(check, what, timeout)``; ``what`` may be a callable,
called at the failure to say what was seen)."""

from harness.processes import wait_until as wait_for

__all__ = ["wait_for"]
