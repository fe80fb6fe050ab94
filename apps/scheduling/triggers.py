"""Follow-up work a change asks for: a scheduling pass, a reconciliation, an eviction
(of a preemption or a drain).

Services and decisions only say *that* such work is due. The Celery tasks
that do it run the passes, and the passes call the services: if services
imported the tasks, the package would import itself in a loop. So the tasks
module registers its runners here when it is imported (``SchedulingConfig.
ready`` imports it, as the worker's autodiscovery does), and callers know
only this module, which imports nothing of scheduling.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Literal

from django.db import transaction

log = logging.getLogger(__name__)

Kind = Literal["pass", "reconcile", "evict", "drain"]
_RUNNERS: dict[str, Callable[[int], Any]] = {}


def register(kind: Kind, runner: Callable[[int], Any]) -> None:
    """Say how to start one kind of follow-up (the tasks module does, at import)."""
    _RUNNERS[kind] = runner


def runner(kind: Kind) -> Callable[[int], Any] | None:
    """How one kind of follow-up is started now (None: not registered)."""
    return _RUNNERS.get(kind)


def run(kind: Kind, object_id: int) -> None:
    """Start the follow-up now (a cluster id; a proposal id for ``evict``, a
    drain id for ``drain``)."""
    runner = _RUNNERS.get(kind)
    if runner is None:
        # Only when apps.scheduling.tasks was never imported; beat's periodic
        # pass still does the work, late.
        log.error("no runner registered for %s %s", kind, object_id)
        return
    runner(object_id)


def run_after_commit(kind: Kind, object_id: int) -> None:
    """Start the follow-up once the current transaction commits (at once outside one)."""
    transaction.on_commit(lambda: run(kind, object_id))
