"""List responses with selectors and limit/continue pagination."""

from __future__ import annotations

import base64
import binascii
import itertools
import json
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from simcluster import errors, selectors
from simcluster.resources import ResourceType
from simcluster.store import Store, Stored, dumps

EXPIRED_CONTINUE = (
    "The provided continue parameter is too old to display a consistent list result. "
    "You can start a new list without the continue parameter."
)


def object_filter(
    res: ResourceType, query: dict[str, str]
) -> Callable[[dict[str, Any]], bool] | None:
    """Combine labelSelector and fieldSelector into one predicate (None = all)."""
    labels = selectors.parse_label_selector(query.get("labelSelector"))
    fields = selectors.parse_field_selector(query.get("fieldSelector"), res.kind)
    if labels is None and fields is None:
        return None

    def predicate(obj: dict[str, Any]) -> bool:
        if labels is not None and not labels(
            (obj.get("metadata") or {}).get("labels") or {}
        ):
            return False
        return fields is None or fields(obj)

    return predicate


class Snapshots:
    """Consistent list snapshots kept for continue tokens (LRU + time-to-live)."""

    def __init__(self, ttl: float = 300.0, size: int = 32) -> None:
        self._lock = threading.Lock()
        self._items: OrderedDict[int, tuple[float, int, list[Stored]]] = OrderedDict()
        self._ids = itertools.count(1)
        self.ttl = ttl
        self.size = size

    def put(self, rv: int, items: list[Stored]) -> int:
        """Keep a snapshot; returns its id."""
        with self._lock:
            snap_id = next(self._ids)
            self._items[snap_id] = (time.monotonic(), rv, items)
            while len(self._items) > self.size:
                self._items.popitem(last=False)
            return snap_id

    def get(self, snap_id: int) -> tuple[int, list[Stored]] | None:
        """A snapshot that has not expired, or None."""
        with self._lock:
            found = self._items.get(snap_id)
            if found is None:
                return None
            created, rv, items = found
            if time.monotonic() - created > self.ttl:
                del self._items[snap_id]
                return None
            self._items.move_to_end(snap_id)
            return rv, items

    def clear(self) -> None:
        """Forget all snapshots (every continue token expires)."""
        with self._lock:
            self._items.clear()


def _encode_token(rv: int, snap_id: int, offset: int) -> str:
    raw = json.dumps({"rv": rv, "snap": snap_id, "start": offset}).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_token(token: str) -> tuple[int, int, int]:
    try:
        padded = token + "=" * (-len(token) % 4)
        data = json.loads(base64.urlsafe_b64decode(padded))
        return int(data["rv"]), int(data["snap"]), int(data["start"])
    except (binascii.Error, ValueError, KeyError, TypeError):
        raise errors.bad_request(
            "continue key is not valid: incorrect encoded start resourceVersion "
            "(version meta.k8s.io/v1)"
        ) from None


def list_page(
    store: Store,
    snapshots: Snapshots,
    res: ResourceType,
    namespace: str | None,
    query: dict[str, str],
) -> tuple[dict[str, Any], list[Stored]]:
    """One page of a list request: the list ``metadata`` and the items."""
    limit = int(query.get("limit") or 0)
    token = query.get("continue")
    predicate = object_filter(res, query)
    if token:
        rv, snap_id, offset = _decode_token(token)
        snapshot = snapshots.get(snap_id)
        if snapshot is None or rv < store.compacted_rv:
            raise errors.gone(EXPIRED_CONTINUE)
        rv, items = snapshot
    else:
        rv, items = store.list(res, namespace)
        if predicate is not None:
            items = [s for s in items if predicate(s.obj)]
        offset = 0
    meta: dict[str, Any] = {"resourceVersion": str(rv)}
    page = items[offset:]
    if limit > 0 and len(page) > limit:
        page = page[:limit]
        snap_id = snapshots.put(rv, items) if not token else _decode_token(token)[1]
        meta["continue"] = _encode_token(rv, snap_id, offset + limit)
        if predicate is None:
            meta["remainingItemCount"] = len(items) - offset - limit
    return meta, page


def list_body(
    store: Store,
    snapshots: Snapshots,
    res: ResourceType,
    namespace: str | None,
    query: dict[str, str],
) -> bytes:
    """Serve a list request as JSON bytes (items are cached bytes, joined)."""
    meta, page = list_page(store, snapshots, res, namespace, query)
    head = (
        b'{"kind":"'
        + res.kind.encode()
        + b'List","apiVersion":"'
        + res.group_version.encode()
        + b'","metadata":'
        + dumps(meta)
        + b',"items":['
    )
    return head + b",".join(s.raw for s in page) + b"]}"
