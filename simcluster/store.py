"""In-memory object store: one lock, one global resourceVersion, a watch history.

Every stored object keeps its JSON bytes, serialised once on write, so that lists
and watches only join bytes. Stored dicts are never mutated after they are stored:
writers build a new dict (``clone`` is a JSON round trip of the cached bytes).
"""

from __future__ import annotations

import json
import threading
import uuid
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from simcluster import errors
from simcluster.resources import RESOURCES, ResourceType

Key = tuple[str, str]  # (namespace or "", name)
Obj = dict[str, Any]


def dumps(obj: Any) -> bytes:
    """Compact JSON bytes, as the API server sends them."""
    return json.dumps(obj, separators=(",", ":")).encode()


def now_rfc3339(at: datetime | None = None) -> str:
    """RFC 3339 UTC timestamp with second precision (``2026-11-30T07:58:12Z``)."""
    return (at or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(slots=True, frozen=True)
class Stored:
    """A stored object, its cached JSON bytes and its resourceVersion."""

    obj: Obj
    raw: bytes
    rv: int

    def clone(self) -> Obj:
        """A deep, independent copy of the object."""
        result: Obj = json.loads(self.raw)
        return result


@dataclass(slots=True, frozen=True)
class WatchEvent:
    """One change, kept in the history for watchers."""

    rv: int
    res_key: str
    type: str
    namespace: str
    obj: Obj
    raw: bytes
    prev: Obj | None = None


def _meta(obj: Obj) -> Obj:
    meta: Obj = obj.setdefault("metadata", {})
    return meta


def object_key(obj: Obj) -> Key:
    """``(namespace, name)`` of an object."""
    meta = obj.get("metadata") or {}
    return (meta.get("namespace") or "", meta.get("name") or "")


class Store:
    """Thread-safe object store with a bounded event history."""

    def __init__(self, history: int = 10000) -> None:
        self._lock = threading.RLock()
        self._cond = threading.Condition(self._lock)
        self._rv = 0
        self._objects: dict[str, dict[Key, Stored]] = {r.key: {} for r in RESOURCES}
        self._sorted: dict[str, list[Key] | None] = {r.key: None for r in RESOURCES}
        self._history: deque[WatchEvent] = deque()
        self._history_limit = max(0, history)
        self._compacted_rv = 0

    # -- reading --------------------------------------------------------------
    @property
    def lock(self) -> threading.RLock:
        """The store lock; hold it to make several operations atomic."""
        return self._lock

    @property
    def rv(self) -> int:
        """The current (latest) resourceVersion."""
        return self._rv

    @property
    def compacted_rv(self) -> int:
        """Events at or below this resourceVersion may be gone from the history."""
        return self._compacted_rv

    def get(self, res: ResourceType, namespace: str, name: str) -> Stored | None:
        """The stored object, or None."""
        return self._objects[res.key].get((namespace if res.namespaced else "", name))

    def require(self, res: ResourceType, namespace: str, name: str) -> Stored:
        """The stored object, or a 404 ``ApiError``."""
        found = self.get(res, namespace, name)
        if found is None:
            raise errors.not_found(res.plural, res.group, name)
        return found

    def list(
        self, res: ResourceType, namespace: str | None = None
    ) -> tuple[int, list[Stored]]:
        """A consistent snapshot: (resourceVersion, objects sorted by key)."""
        with self._lock:
            table = self._objects[res.key]
            keys = self._sorted[res.key]
            if keys is None:
                keys = sorted(table)
                self._sorted[res.key] = keys
            if namespace:
                items = [table[k] for k in keys if k[0] == namespace]
            else:
                items = [table[k] for k in keys]
            return self._rv, items

    def count(self, res: ResourceType) -> int:
        """Number of stored objects of a resource."""
        return len(self._objects[res.key])

    # -- writing --------------------------------------------------------------
    def _next_rv(self) -> int:
        self._rv += 1
        return self._rv

    def _record(
        self, res: ResourceType, kind: str, stored: Stored, prev: Obj | None = None
    ) -> None:
        if self._history_limit:
            if len(self._history) >= self._history_limit:
                self._compacted_rv = self._history.popleft().rv
            namespace = (stored.obj.get("metadata") or {}).get("namespace") or ""
            self._history.append(
                WatchEvent(
                    stored.rv, res.key, kind, namespace, stored.obj, stored.raw, prev
                )
            )
        else:
            self._compacted_rv = stored.rv
        self._cond.notify_all()

    def _seal(self, obj: Obj) -> Stored:
        rv = self._next_rv()
        _meta(obj)["resourceVersion"] = str(rv)
        return Stored(obj, dumps(obj), rv)

    def create(self, res: ResourceType, obj: Obj, *, record: bool = True) -> Stored:
        """Store a new object (takes ownership of ``obj``); 409 if the name exists."""
        meta = _meta(obj)
        key = (meta.get("namespace", "") if res.namespaced else "", meta["name"])
        if not res.namespaced:
            meta.pop("namespace", None)
        obj["apiVersion"] = res.group_version
        obj["kind"] = res.kind
        with self._lock:
            table = self._objects[res.key]
            if key in table:
                raise errors.already_exists(res.plural, res.group, key[1])
            meta.setdefault("uid", str(uuid.uuid4()))
            meta.setdefault("creationTimestamp", now_rfc3339())
            if "spec" in obj:
                meta["generation"] = 1
            stored = self._seal(obj)
            table[key] = stored
            self._sorted[res.key] = None
            if record:
                self._record(res, "ADDED", stored)
            else:
                self._compacted_rv = stored.rv
            return stored

    def update(
        self,
        res: ResourceType,
        obj: Obj,
        *,
        expected_rv: str | None = None,
        allow_status_only: bool = False,
    ) -> Stored:
        """Replace an object (takes ownership); 409 Conflict on a stale ``expected_rv``.

        Identity fields (uid, creationTimestamp) are kept from the stored object and
        ``generation`` is bumped when ``spec`` changes. An update that changes
        nothing is not written (no new resourceVersion, no event), as upstream.
        """
        meta = _meta(obj)
        namespace = meta.get("namespace", "") if res.namespaced else ""
        name = meta.get("name", "")
        obj["apiVersion"] = res.group_version
        obj["kind"] = res.kind
        with self._lock:
            old = self._objects[res.key].get((namespace, name))
            if old is None:
                raise errors.not_found(res.plural, res.group, name)
            if expected_rv and expected_rv != str(old.rv):
                raise errors.conflict(res.plural, res.group, name)
            old_meta = old.obj["metadata"]
            for field in ("uid", "creationTimestamp"):
                meta[field] = old_meta.get(field)
            if not res.namespaced:
                meta.pop("namespace", None)
            if "generation" in old_meta:
                meta["generation"] = old_meta["generation"]
                if obj.get("spec") != old.obj.get("spec"):
                    meta["generation"] = old_meta["generation"] + 1
            elif "spec" in obj:
                meta["generation"] = 1
            meta["resourceVersion"] = old_meta.get("resourceVersion")
            if obj == old.obj:
                return old
            stored = self._seal(obj)
            self._objects[res.key][(namespace, name)] = stored
            self._record(res, "MODIFIED", stored, old.obj)
            return stored

    def mutate(
        self, res: ResourceType, namespace: str, name: str, fn: Callable[[Obj], Any]
    ) -> Stored | None:
        """Atomically apply ``fn`` to a copy of the object and store it.

        Returns the new stored object, or None if the object does not exist or
        ``fn`` returned ``False`` (meaning: leave it alone).
        """
        with self._lock:
            old = self.get(res, namespace, name)
            if old is None:
                return None
            obj = old.clone()
            if fn(obj) is False:
                return None
            return self.update(res, obj)

    def delete(self, res: ResourceType, namespace: str, name: str) -> Stored:
        """Remove an object now; the DELETED event carries a new resourceVersion."""
        with self._lock:
            key = (namespace if res.namespaced else "", name)
            old = self._objects[res.key].pop(key, None)
            if old is None:
                raise errors.not_found(res.plural, res.group, name)
            self._sorted[res.key] = None
            obj = old.clone()
            stored = self._seal(obj)
            self._record(res, "DELETED", stored, old.obj)
            return stored

    def load(self, res: ResourceType, objs: Iterable[Obj]) -> int:
        """Bulk-create objects without history (scenario building); returns count."""
        count = 0
        with self._lock:
            for obj in objs:
                self.create(res, obj, record=False)
                count += 1
        return count

    def touch(self) -> None:
        """Wake all watchers (used on shutdown and fault changes)."""
        with self._lock:
            self._cond.notify_all()

    # -- watching -------------------------------------------------------------
    def events_since(self, rv: int, timeout: float) -> tuple[list[WatchEvent], int]:
        """Events after ``rv`` and the store's rv; waits up to ``timeout`` s for one.

        Raises a 410 ``ApiError`` when ``rv`` is older than the history window.
        """
        with self._lock:
            if rv < self._compacted_rv:
                raise errors.gone(
                    f"too old resource version: {rv} ({self._compacted_rv})"
                )
            if self._rv <= rv and timeout > 0:
                self._cond.wait(timeout)
                if rv < self._compacted_rv:
                    raise errors.gone(
                        f"too old resource version: {rv} ({self._compacted_rv})"
                    )
            if self._rv <= rv:
                return [], self._rv
            out: list[WatchEvent] = []
            for event in reversed(self._history):
                if event.rv <= rv:
                    break
                out.append(event)
            out.reverse()
            return out, self._rv
