"""Crash points: a test hook that kills the process at a named point of a task.

A process whose environment names a point (``VNPU_PORTAL_CRASH_AT=after_reserve``)
dies there with SIGKILL, without cleanup, like a worker killed mid-task. The
fault tests use it to prove that the next worker finds and finishes the work.
Points in use: ``after_reserve``, ``after_pod_create`` (scheduling),
``after_configmap_put`` (publishing a device config), ``after_sync_batch``
(sync: a watch batch applied, its resourceVersion not saved).
"""

from __future__ import annotations

import os
import signal

CRASH_ENV = "VNPU_PORTAL_CRASH_AT"


def crash_point(name: str) -> None:
    """Die here, at once and without cleanup, when the test hook asks for it."""
    if os.environ.get(CRASH_ENV) == name:
        os.kill(os.getpid(), signal.SIGKILL)
