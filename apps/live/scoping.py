"""Which deltas a socket limited to queues may hear, said by the app that owns them.

A token limited to queues reads only their requests and proposals over REST;
its socket must hear no more. The events are the live contract's, but what a
request belongs to is scheduling's (floors above live), so scheduling
registers a scoper per event in its ``AppConfig.ready``: given the token's
queue ids and a payload, it returns the part the token may hear, or None.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from apps.live.events import Event

Scoper = Callable[[Sequence[int], dict[str, Any]], dict[str, Any] | None]

_scopers: dict[str, Scoper] = {}


def delta_scope_register(event: Event, scoper: Scoper) -> None:
    """Say how ``event``'s payloads are cut down for a socket limited to queues."""
    _scopers[str(event)] = scoper


def is_scoped(event: str) -> bool:
    """Whether ``event`` carries objects of queues (a limited socket filters it)."""
    return event in _scopers


def scoped_payload(
    event: str, queue_ids: Sequence[int], payload: dict[str, Any]
) -> dict[str, Any] | None:
    """The part of ``payload`` a socket limited to ``queue_ids`` may hear (None: nothing).

    Runs queries: call it in a thread. An event nobody registered passes whole.
    """
    scoper = _scopers.get(event)
    return payload if scoper is None else scoper(queue_ids, payload)
