"""Raw list and watch over the ``kubernetes`` client's transport.

The client's model objects cost more than the rest of sync put together on big
lists (30,000 pods), so lists and watch events are read as JSON dicts: the
client still does configuration, authentication and TLS.
"""

from __future__ import annotations

import contextlib
import json
import queue
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from kubernetes import client
from kubernetes.client.rest import ApiException

from apps.common.gcpause import gc_paused

PAGE_SIZE = 5000


class Gone(Exception):
    """The resourceVersion is older than the server's history (HTTP 410)."""


@dataclass(frozen=True)
class ListResult:
    items: list[dict[str, Any]]
    resource_version: str


def _get(
    api: client.ApiClient,
    path: str,
    query: Mapping[str, Any],
    *,
    timeout: float | tuple[float, float],
) -> Any:
    return api.call_api(
        path,
        "GET",
        query_params=[(k, v) for k, v in query.items() if v is not None],
        header_params={"Accept": "application/json"},
        auth_settings=["BearerToken"],
        _preload_content=False,
        _return_http_data_only=True,
        _request_timeout=timeout,
    )


def list_all(
    api: client.ApiClient,
    path: str,
    *,
    field_selector: str | None = None,
    timeout: float = 60,
    keep: Callable[[Any], Any] | None = None,
) -> ListResult:
    """Every object at ``path`` (following ``continue``), and the list's resourceVersion.

    ``keep`` maps each object as its page arrives (``derive.slim_pod``), so
    that what it drops is freed page by page instead of held to the end.
    """
    with gc_paused():
        return _list_pages(api, path, field_selector, timeout, keep)


def _list_pages(
    api: client.ApiClient,
    path: str,
    field_selector: str | None,
    timeout: float,
    keep: Callable[[Any], Any] | None,
) -> ListResult:
    items: list[dict[str, Any]] = []
    token: str | None = None
    resource_version = ""
    while True:
        try:
            response = _get(
                api,
                path,
                {
                    "limit": PAGE_SIZE,
                    "continue": token,
                    "fieldSelector": field_selector,
                },
                timeout=timeout,
            )
        except ApiException as exc:
            if exc.status == 410:
                raise Gone(str(exc.reason)) from exc
            raise
        body = json.loads(response.data)
        del response  # the page's raw bytes
        meta = body.get("metadata") or {}
        page = body.get("items") or []
        del body
        items.extend(map(keep, page) if keep is not None else page)
        del page  # with ``keep``, the rest of each object goes now, not at the end
        resource_version = meta.get("resourceVersion", resource_version)
        token = meta.get("continue") or None
        if not token:
            return ListResult(items, resource_version)


def discovered(api: client.ApiClient, path: str, *, timeout: float = 10) -> bool:
    """Whether API discovery lists the resource of ``path`` (``/apis/<g>/<v>/...``).

    A 404 on a list is not proof that a CRD is missing: right after the API
    server starts, it answers 404 for custom resources until it has loaded
    their definitions, while discovery is built from the same source. False
    only when discovery answers and the resource is not in it; any other
    failure raises, and the caller takes it as an error to retry.
    """
    parts = [p for p in path.split("/") if p]
    # /apis/<group>/<version>[/namespaces/<ns>]/<resource>, or /api/v1/...
    prefix = 3 if parts[0] == "apis" else 2
    rest = parts[prefix:]
    if rest[:1] == ["namespaces"] and len(rest) > 2:
        rest = rest[2:]
    try:
        response = _get(api, "/" + "/".join(parts[:prefix]), {}, timeout=timeout)
    except ApiException as exc:
        if exc.status == 404:
            return False
        raise
    listed = json.loads(response.data).get("resources") or []
    return any(r.get("name") == rest[0] for r in listed)


class WatchStream:
    """An open watch: iterate ``events()``; ``close()`` from any thread ends it."""

    def __init__(self, response: Any) -> None:
        self._response = response

    def close(self) -> None:
        # Closing a dead socket may fail; it is closed either way.
        with contextlib.suppress(Exception):
            self._response.close()

    def events(self) -> Iterator[dict[str, Any]]:
        """Events as dicts; raises Gone for a 410 and ApiException for other ERROR events."""
        partial = b""  # the start of a line whose end has not arrived yet
        try:
            for chunk in self._response.stream(64 * 1024, decode_content=True):
                # One split per chunk: splitting off one line at a time copied
                # the rest of a 64 KiB chunk for each of its ~30 events.
                lines = (partial + chunk).split(b"\n")
                partial = lines.pop()
                for line in lines:
                    if not line.strip():
                        continue
                    event = json.loads(line)
                    if event.get("type") == "ERROR":
                        status = event.get("object") or {}
                        if status.get("code") == 410:
                            raise Gone(status.get("message", "resourceVersion too old"))
                        raise ApiException(
                            status=status.get("code") or 500,
                            reason=status.get("message"),
                        )
                    yield event
        finally:
            self._response.release_conn()


def watch(
    api: client.ApiClient,
    path: str,
    *,
    resource_version: str,
    field_selector: str | None = None,
    timeout_seconds: int = 60,
) -> WatchStream:
    """Open a watch of events after ``resource_version``; raises Gone on a 410.

    The server ends the stream after ``timeout_seconds``, and the caller
    resumes from the last resourceVersion it saw.
    """
    try:
        response = _get(
            api,
            path,
            {
                "watch": "true",
                "resourceVersion": resource_version,
                "allowWatchBookmarks": "true",
                "timeoutSeconds": timeout_seconds,
                "fieldSelector": field_selector,
            },
            timeout=(10, timeout_seconds + 15),
        )
    except ApiException as exc:
        if exc.status == 410:
            raise Gone(str(exc.reason)) from exc
        raise
    return WatchStream(response)


def pump(
    events: Iterator[dict[str, Any]], into: queue.Queue[Any], stop: threading.Event
) -> None:
    """Copy ``events`` into a queue from a thread; the final item is the end marker or the exception."""
    try:
        for event in events:
            if stop.is_set():
                break
            into.put(event)
        into.put(StopIteration())
    except BaseException as exc:  # handed to the consumer thread, which decides
        into.put(exc)
