"""Server-side Tables: what kubectl gets for ``get`` when it asks for ``as=Table``.

kubectl's ``Accept`` is ``application/json;as=Table;v=v1;g=meta.k8s.io,
application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json``. The answer
is a ``meta.k8s.io`` ``Table``: ``columnDefinitions`` (from ``printers``), one
row per object with its ``cells`` and the object as ``PartialObjectMetadata``
(``?includeObject=Metadata``, the default), in full (``Object``) or not at all
(``None``); list metadata (resourceVersion, continue, remainingItemCount) as in
the plain list. A watch sends one single-row Table per event and, as
kube-apiserver does, column definitions only with the first one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from simcluster import errors
from simcluster.printers import printer_for
from simcluster.resources import ResourceType
from simcluster.store import dumps

TABLE_GROUP = "meta.k8s.io"
TABLE_VERSIONS = frozenset({"v1", "v1beta1"})
INCLUDE_OBJECT = ("Metadata", "None", "Object")
INITIAL_EVENTS_END = "k8s.io/initial-events-end"


@dataclass(frozen=True)
class TableRequest:
    """A negotiated Table answer: its apiVersion and what each row carries."""

    api_version: str  # meta.k8s.io/v1 or meta.k8s.io/v1beta1
    include: str = "Metadata"


def _media_types(accept: str) -> Iterable[tuple[str, dict[str, str]]]:
    for part in accept.split(","):
        media, *params = (p.strip() for p in part.split(";"))
        values = {}
        for param in params:
            key, _, value = param.partition("=")
            values[key.strip().lower()] = value.strip()
        yield media.lower(), values


def negotiate(accept: str | None, query: dict[str, str]) -> TableRequest | None:
    """A ``TableRequest`` if the first media type simcluster can serve is a Table.

    Plain JSON (or anything without ``as=``) means the ordinary answer; other
    conversions (``as=PartialObjectMetadata``…) and non-JSON types are skipped, so
    the ordinary JSON answer remains the fallback, as it was before Tables.
    """
    for media, params in _media_types(accept or ""):
        if media not in ("application/json", "*/*", "application/*"):
            continue
        conversion = params.get("as")
        if conversion is None:
            return None
        if (
            conversion == "Table"
            and params.get("g") == TABLE_GROUP
            and params.get("v") in TABLE_VERSIONS
        ):
            include = query.get("includeObject") or "Metadata"
            if include not in INCLUDE_OBJECT:
                supported = ", ".join(f'"{v}"' for v in INCLUDE_OBJECT)
                raise errors.bad_request(
                    "Unable to convert to Table as requested: includeObject: "
                    f'Unsupported value: "{include}": supported values: {supported}'
                )
            return TableRequest(f"{TABLE_GROUP}/{params['v']}", include)
    return None


def _row_object(obj: dict[str, Any], request: TableRequest) -> Any:
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    include = request.include
    if INITIAL_EVENTS_END in annotations:
        include = "Metadata"  # the end-of-initial-events bookmark is always metadata
    if include == "Object":
        return obj
    if include == "None":
        return None
    return {
        "kind": "PartialObjectMetadata",
        "apiVersion": request.api_version,
        "metadata": obj.get("metadata") or {},
    }


def table(
    res: ResourceType,
    objects: Iterable[dict[str, Any]],
    list_meta: dict[str, Any],
    request: TableRequest,
    *,
    headers: bool = True,
    now: datetime | None = None,
) -> dict[str, Any]:
    """The ``Table`` of ``objects`` (one row each)."""
    printer = printer_for(res)
    at = now or datetime.now(UTC)
    rows = []
    for obj in objects:
        row: dict[str, Any] = {"cells": printer.cells(obj, at)}
        conditions = printer.conditions(obj) if printer.conditions else []
        if conditions:
            row["conditions"] = conditions
        row["object"] = _row_object(obj, request)
        rows.append(row)
    return {
        "kind": "Table",
        "apiVersion": request.api_version,
        "metadata": list_meta,
        "columnDefinitions": (
            [c.definition() for c in printer.columns] if headers else None
        ),
        "rows": rows,
    }


def object_table(
    res: ResourceType, obj: dict[str, Any], request: TableRequest
) -> bytes:
    """A one-row Table for a ``get`` of one object."""
    rv = (obj.get("metadata") or {}).get("resourceVersion", "")
    return dumps(table(res, [obj], {"resourceVersion": rv}, request))


class WatchTables:
    """Turns each watch event's object into a one-row Table (headers once)."""

    def __init__(self, res: ResourceType, request: TableRequest) -> None:
        self.res = res
        self.request = request
        self._headers = True

    def __call__(self, obj: dict[str, Any]) -> bytes:
        """The JSON bytes of the Table that replaces ``obj`` in the event."""
        rv = (obj.get("metadata") or {}).get("resourceVersion", "")
        body = dumps(
            table(
                self.res,
                [obj],
                {"resourceVersion": rv},
                self.request,
                headers=self._headers,
            )
        )
        self._headers = False
        return body
