"""Namespaces a cluster said it has, remembered for a short while per process.

Every submission asks the cluster whether its namespace exists, so that a
pipeline hears of a typo at once (``services.requests._namespace_check``).
Asking costs the API server a GET and the portal a client for the cluster
(its kubeconfig decrypted and parsed, a TLS connection): a quarter of a
submission's time. The answer "it exists" is kept for ``SEEN_SECONDS``: a
namespace deleted meanwhile is still caught, since every pass lists the
namespaces before it books room and holds the request. "It does not exist"
is never kept: a pipeline that has just created its namespace is served.
"""

from __future__ import annotations

import threading
import time
from datetime import datetime

#: How long a namespace the cluster said it has counts as seen.
SEEN_SECONDS = 30.0
#: Entries kept at most (all are forgotten when full; they are cheap to learn).
MAX_ENTRIES = 10_000

# (cluster id, the cluster's creation time, namespace) -> when seen (monotonic).
# The creation time tells a cluster apart from a later one given the same id.
_seen: dict[tuple[int, datetime, str], float] = {}
_lock = threading.Lock()


def _key(
    cluster_id: int, created_at: datetime, namespace: str
) -> tuple[int, datetime, str]:
    return (cluster_id, created_at, namespace)


def recently_seen(cluster_id: int, created_at: datetime, namespace: str) -> bool:
    """Whether the cluster said it has ``namespace`` in the last ``SEEN_SECONDS``."""
    seen = _seen.get((cluster_id, created_at, namespace))
    return seen is not None and time.monotonic() - seen < SEEN_SECONDS


def remember(cluster_id: int, created_at: datetime, namespace: str) -> None:
    """The cluster has just said it has ``namespace``."""
    with _lock:
        if len(_seen) >= MAX_ENTRIES:
            _seen.clear()
        _seen[(cluster_id, created_at, namespace)] = time.monotonic()


def forget_all() -> None:
    """Forget every answer (tests)."""
    with _lock:
        _seen.clear()
