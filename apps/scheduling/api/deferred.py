"""Answers a sync API view hands to its async wrapper (``streaming``) to finish.

DRF's views are synchronous. A log that is followed for minutes, or a long
poll, must not hold a thread (and its database connection) for that long,
so the view does everything that needs the database (authentication, the
request's scope, the query string) and returns one of these; the async view
in ``apps.scheduling.api.streaming`` then streams or waits on the event loop.
"""

from __future__ import annotations

from collections.abc import Collection

from django.http import HttpResponse

from apps.inventory.podlogs import Endpoint


class Deferred(HttpResponse):
    """Not an answer yet (never sent as it is: the async view replaces it)."""


class LiveLogAnswer(Deferred):
    """Stream the log from ``endpoint`` (the request's pod, through its cluster)."""

    def __init__(self, endpoint: Endpoint) -> None:
        super().__init__(status=200)
        self.endpoint = endpoint


class WaitAnswer(Deferred):
    """Answer once request ``request_id`` is in one of ``states``, or at ``timeout``."""

    def __init__(
        self, request_id: int, states: Collection[str], timeout: float
    ) -> None:
        super().__init__(status=200)
        self.request_id = request_id
        self.states = states
        self.timeout = timeout
