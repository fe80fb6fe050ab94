"""Reading a pod's log through the cluster's API server (``pods/{name}/log``).

Two ways, for two callers:

- :func:`tail_query` and :func:`cut_tail` (sync, the read is
  ``Gateway.pod_log``): the last bytes of a container's log, with
  timestamps, for keeping when a request ends.
- :func:`open_stream` (async, aiohttp): the log as the API server streams it
  (``follow``), for the web. A follower waits for minutes on a socket; an
  async stream costs a coroutine, where the ``kubernetes`` client would hold
  a thread (and the thread's database connection) per follower. The
  connection settings come from the same client configuration as every other
  call (:func:`~apps.inventory.kube.api_client_for`), read synchronously
  first (:func:`endpoint_for`), so credentials are handled in one place.
"""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlencode

import aiohttp

from apps.inventory.kube import Gateway, KubeError

#: Bytes per line assumed when a byte budget is turned into ``tailLines``.
_BYTES_PER_LINE = 40
#: How long a connection to the API server may take; a follow reads for ever.
CONNECT_SECONDS = 10.0
CHUNK_BYTES = 64 * 1024


def log_path(namespace: str, pod: str) -> str:
    return f"/api/v1/namespaces/{quote(namespace)}/pods/{quote(pod)}/log"


@dataclass(frozen=True)
class LogQuery:
    """What part of a log to read (the API server's ``pods/log`` parameters)."""

    container: str = ""
    tail_lines: int | None = None
    since_seconds: int | None = None
    since_time: str = ""
    timestamps: bool = False
    follow: bool = False
    limit_bytes: int | None = None

    def params(self) -> dict[str, str]:
        """The query string of the API server's log call."""
        params: dict[str, str] = {}
        if self.container:
            params["container"] = self.container
        if self.tail_lines is not None:
            params["tailLines"] = str(self.tail_lines)
        if self.since_seconds is not None:
            params["sinceSeconds"] = str(self.since_seconds)
        if self.since_time:
            params["sinceTime"] = self.since_time
        if self.timestamps:
            params["timestamps"] = "true"
        if self.follow:
            params["follow"] = "true"
        if self.limit_bytes is not None:
            params["limitBytes"] = str(self.limit_bytes)
        return params


def tail_query(container: str, keep_bytes: int) -> LogQuery:
    """What to ask for to keep the last ``keep_bytes`` of a log (see :func:`cut_tail`).

    A bounded number of lines (``tailLines``), so that a job that logged
    gigabytes costs one bounded transfer; one line more than kept, so that
    its coming says there was more than the tail.
    """
    lines = max(keep_bytes // _BYTES_PER_LINE, 1)
    return LogQuery(container=container, tail_lines=lines + 1, timestamps=True)


def cut_tail(data: bytes, query: LogQuery, keep_bytes: int) -> tuple[str, bool]:
    """The whole lines of ``data`` that fit in ``keep_bytes``, and whether
    earlier lines were left out (``data`` read with :func:`tail_query`)."""
    lines_wanted = (query.tail_lines or 1) - 1 or 1
    lines = data.decode("utf-8", "replace").splitlines(keepends=True)
    truncated = len(lines) > lines_wanted
    kept: list[str] = []
    size = 0
    for line in reversed(lines[-lines_wanted:]):
        size += len(line.encode())
        if size > keep_bytes:
            truncated = True
            break
        kept.append(line)
    return "".join(reversed(kept)), truncated


@dataclass(frozen=True)
class Endpoint:
    """Where and how to open one log stream (no client object: safe to pass on)."""

    url: str
    headers: Mapping[str, str]
    ssl: ssl.SSLContext | bool
    server_hostname: str | None = None
    proxy: str | None = None
    cluster: str = field(default="", compare=False)


def endpoint_for(
    gateway: Gateway, namespace: str, pod: str, query: LogQuery
) -> Endpoint:
    """The URL, headers and TLS settings of a log read, from the cluster's client.

    Raises:
        KubeError: The cluster's connection cannot be loaded.
    """
    conf = gateway.api().configuration
    # as kubectl asks: the API server answers text/plain to */* and 406 to text/plain
    headers = {"Accept": "*/*"}
    # The client's own answer (the key's name moved in kubernetes 36; an
    # in-cluster token is refreshed by its hook here).
    bearer = conf.auth_settings().get("BearerToken") or {}
    if bearer.get("value"):
        headers["Authorization"] = bearer["value"]
    context: ssl.SSLContext | bool
    if conf.host.startswith("https"):
        if conf.verify_ssl:
            context = ssl.create_default_context(cafile=conf.ssl_ca_cert or None)
        else:
            context = ssl._create_unverified_context()  # noqa: S323 - the cluster's own setting
        if conf.cert_file:
            context.load_cert_chain(conf.cert_file, conf.key_file or None)
    else:
        context = False
    url = f"{conf.host.rstrip('/')}{log_path(namespace, pod)}"
    params = query.params()
    return Endpoint(
        url=f"{url}?{urlencode(params)}" if params else url,
        headers=headers,
        ssl=context,
        server_hostname=getattr(conf, "tls_server_name", None) or None,
        proxy=conf.proxy or None,
        cluster=gateway.cluster.name,
    )


@dataclass
class Stream:
    """An open log stream: iterate ``chunks()``; ``close()`` when done."""

    session: aiohttp.ClientSession
    response: aiohttp.ClientResponse

    async def chunks(self) -> AsyncIterator[bytes]:
        """The log's bytes as they come; ends when the API server ends it."""
        try:
            async for chunk in self.response.content.iter_any():
                yield chunk
        except (aiohttp.ClientError, TimeoutError):
            return  # the server went away mid-stream: the follower reconnects
        finally:
            await self.close()

    async def close(self) -> None:
        self.response.release()
        await self.session.close()


async def open_stream(endpoint: Endpoint) -> Stream:
    """Open the log; the caller iterates :meth:`Stream.chunks`.

    Raises:
        KubeError: The API server answered an error (its status and message),
            or could not be reached.
    """
    timeout = aiohttp.ClientTimeout(total=None, sock_connect=CONNECT_SECONDS)
    session = aiohttp.ClientSession(timeout=timeout)
    try:
        response = await session.get(
            endpoint.url,
            headers=dict(endpoint.headers),
            ssl=endpoint.ssl,
            server_hostname=endpoint.server_hostname,
            proxy=endpoint.proxy,
        )
    except (aiohttp.ClientError, OSError, TimeoutError) as exc:
        await session.close()
        raise KubeError(
            None, f"{type(exc).__name__}: {exc}", transient=True, reason="unreachable"
        ) from exc
    if response.status != 200:
        message = await _status_message(response)
        response.release()
        await session.close()
        status = response.status
        raise KubeError(
            status,
            message,
            transient=status == 429 or status >= 500,
            reason=response.reason or "",
        )
    return Stream(session, response)


async def _status_message(response: aiohttp.ClientResponse) -> str:
    """The API server's Status message of an error answer (or its reason)."""
    try:
        body: Any = await response.json(content_type=None)
    except (ValueError, aiohttp.ClientError):
        return response.reason or ""
    if isinstance(body, dict) and body.get("message"):
        return str(body["message"])
    return response.reason or ""
