"""Watch streams: newline-delimited JSON events, bookmarks, timeouts, 410."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from typing import Any

from simcluster import errors
from simcluster.faults import Faults, FaultSettings
from simcluster.listing import object_filter
from simcluster.resources import ResourceType
from simcluster.store import Store, WatchEvent, dumps

Predicate = Callable[[dict[str, Any]], bool]


class WatchDropped(Exception):
    """Raised inside a stream to make the server cut the connection abruptly."""


def truthy(value: str | None) -> bool:
    """Query booleans as clients send them (``true``, ``True``, ``1``)."""
    return (value or "").lower() in ("true", "1")


def _line(kind: str, raw: bytes) -> bytes:
    return b'{"type":"' + kind.encode() + b'","object":' + raw + b"}\n"


def _translate(event: WatchEvent, predicate: Predicate | None) -> str | None:
    """The event type a filtered watcher sees, or None to skip it."""
    if predicate is None:
        return event.type
    now = predicate(event.obj)
    if event.type == "ADDED":
        return "ADDED" if now else None
    before = predicate(event.prev) if event.prev is not None else now
    if event.type == "DELETED":
        return "DELETED" if before else None
    if now and before:
        return "MODIFIED"
    if now:
        return "ADDED"
    return "DELETED" if before else None


class WatchOptions:
    """Server-wide watch settings."""

    def __init__(
        self, default_timeout: float = 1800.0, bookmark_interval: float = 10.0
    ) -> None:
        self.default_timeout = default_timeout
        self.bookmark_interval = bookmark_interval


def _check_watch_list(query: dict[str, str]) -> bool:
    """Whether the watch asks for the initial state first (``sendInitialEvents``).

    That is client-go's watch-list (kubectl 1.35 ``delete``/``rollout status``/
    ``wait``): the current objects as ADDED, then a BOOKMARK annotated
    ``k8s.io/initial-events-end``, then the changes. kube-apiserver demands
    ``resourceVersionMatch=NotOlderThan`` and bookmarks with it.
    """
    if not truthy(query.get("sendInitialEvents")):
        return False
    problems = []
    if query.get("resourceVersionMatch") != "NotOlderThan":
        problems.append(
            "resourceVersionMatch: Forbidden: sendInitialEvents requires setting "
            "resourceVersionMatch to NotOlderThan"
        )
    if not truthy(query.get("allowWatchBookmarks")):
        problems.append(
            "allowWatchBookmarks: Forbidden: sendInitialEvents requires setting "
            "allowWatchBookmarks to true"
        )
    if problems:
        raise errors.ApiError(
            422, "Invalid", "ListOptions.meta.k8s.io is invalid: " + ", ".join(problems)
        )
    return True


def open_watch(
    store: Store,
    res: ResourceType,
    namespace: str | None,
    query: dict[str, str],
    faults: Faults,
    stopping: threading.Event,
    options: WatchOptions,
    encode: Callable[[dict[str, Any]], bytes] | None = None,
) -> Iterator[bytes]:
    """Validate the request now and return the event stream (a generator).

    ``encode`` replaces each event's object (e.g. by a server-side Table).
    """
    predicate = object_filter(res, query)
    initial_events = _check_watch_list(query)
    rv_text = query.get("resourceVersion") or ""
    try:
        start_rv = int(rv_text) if rv_text else 0
    except ValueError:
        raise errors.bad_request(f"invalid resource version: {rv_text!r}") from None
    try:
        timeout = float(query.get("timeoutSeconds") or options.default_timeout)
    except ValueError:
        raise errors.bad_request("invalid timeoutSeconds") from None
    watch = _Watch(
        store,
        res,
        namespace,
        predicate,
        faults,
        stopping,
        options,
        encode,
        bookmarks=truthy(query.get("allowWatchBookmarks")),
    )
    return watch.stream(start_rv, initial_events, timeout)


@dataclass
class _Watch:
    """One watch's stream: the initial objects (if asked), then the changes.

    The stream ends at the timeout or when the server stops; the fault
    settings may drop it after a number of events or seconds.
    """

    store: Store
    res: ResourceType
    namespace: str | None
    predicate: Predicate | None
    faults: Faults
    stopping: threading.Event
    options: WatchOptions
    encode: Callable[[dict[str, Any]], bytes] | None
    bookmarks: bool
    sent: int = 0

    def stream(
        self, start_rv: int, initial_events: bool, timeout: float
    ) -> Iterator[bytes]:
        """The events, as lines of the watch's body."""
        started = time.monotonic()
        deadline = started + timeout
        if start_rv == 0 or initial_events:
            last = yield from self._initial(initial_events)
        else:
            last = start_rv
        last_bookmark = time.monotonic()
        while not self.stopping.is_set():
            now = time.monotonic()
            settings = self.faults.settings
            if settings.watch_drop_after_seconds and (
                now - started >= settings.watch_drop_after_seconds
            ):
                self.faults.count("watch_drop")
                raise WatchDropped
            if now >= deadline:
                break
            wait = min(0.5, deadline - now)
            try:
                events, current = self.store.events_since(last, wait)
            except errors.ApiError as exc:
                yield _line("ERROR", dumps(exc.status()))
                return
            yield from self._changes(events, settings)
            last = current
            if (
                self.bookmarks
                and time.monotonic() - last_bookmark >= self.options.bookmark_interval
            ):
                yield self.bookmark(last)
                last_bookmark = time.monotonic()
        if self.bookmarks:
            yield self.bookmark(last)

    def _initial(self, initial_events: bool) -> Generator[bytes, None, int]:
        """ADDED for each object there now; returns the store's resource version."""
        last, items = self.store.list(self.res, self.namespace)
        for item in items:
            if self.predicate is None or self.predicate(item.obj):
                yield self.event("ADDED", item.obj, item.raw)
                self._count_sent(self.faults.settings)
        if initial_events:
            yield self.bookmark(last, end_of_initial=True)
        return last

    def _changes(
        self, events: list[WatchEvent], settings: FaultSettings
    ) -> Iterator[bytes]:
        """The changes to the watched objects among ``events``."""
        for change in events:
            if change.res_key != self.res.key or (
                self.namespace and change.namespace != self.namespace
            ):
                continue
            kind = _translate(change, self.predicate)
            if kind is None:
                continue
            yield self.event(kind, change.obj, change.raw)
            self._count_sent(settings)

    def _count_sent(self, settings: FaultSettings) -> None:
        """Count an event sent; drop the watch once the faults say so."""
        self.sent += 1
        drop_after = settings.watch_drop_after_events
        if drop_after and self.sent >= drop_after:
            self.faults.count("watch_drop")
            raise WatchDropped

    def event(self, kind: str, obj: dict[str, Any], raw: bytes) -> bytes:
        """One event line (``obj`` encoded when the watch encodes)."""
        return _line(kind, self.encode(obj) if self.encode is not None else raw)

    def bookmark(self, rv: int, end_of_initial: bool = False) -> bytes:
        """A BOOKMARK at ``rv`` (marking the end of the initial events if so)."""
        meta: dict[str, Any] = {"resourceVersion": str(rv)}
        if end_of_initial:
            meta["annotations"] = {"k8s.io/initial-events-end": "true"}
        obj = {
            "kind": self.res.kind,
            "apiVersion": self.res.group_version,
            "metadata": meta,
        }
        return self.event("BOOKMARK", obj, dumps(obj))
