"""Enqueueing a follow-up task without making the caller fail when the broker is down.

A web request that committed its work (a submitted request, an approved
preemption) must answer 2xx even if Redis is restarting at that moment: the
row is in the database, and the periodic jobs (``schedule_clusters_task``,
``sync_all_clusters_task``) find and finish what it would have triggered. So
a broker that cannot be reached is logged, not raised.
"""

from __future__ import annotations

import logging
from typing import Any

from kombu.exceptions import OperationalError

log = logging.getLogger(__name__)


def enqueue(task: Any, *args: Any) -> bool:
    """``task.delay(*args)``; False (and a warning) when the broker is unreachable."""
    try:
        task.delay(*args)
    except OperationalError as exc:
        log.warning(
            "could not enqueue %s%r (%s); the periodic pass will do the work",
            getattr(task, "name", task),
            args,
            exc,
        )
        return False
    return True
