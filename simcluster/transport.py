"""HTTP(S) transport: a threading server and a handler that hands each request to
the cluster's ``dispatch`` and writes (or streams) the answer."""

from __future__ import annotations

import contextlib
import logging
import select
import socket
import ssl
import sys
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

from simcluster import (
    errors,
)
from simcluster.api import ApiResponse
from simcluster.watch import WatchDropped

if TYPE_CHECKING:
    from simcluster.server import SimCluster

log = logging.getLogger("simcluster")
PUBLIC_PATHS = frozenset({"/version", "/healthz", "/livez", "/readyz"})


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True
    sim: SimCluster
    ssl_context: ssl.SSLContext | None = None

    def handle_error(self, request: Any, client_address: Any) -> None:
        # kubectl opens spare connections and drops some before the TLS handshake
        # ends; kube-apiserver logs that as "TLS handshake error ... EOF" at info.
        error = sys.exc_info()[1]
        if isinstance(error, ConnectionError | ssl.SSLError):
            log.debug("connection from %s dropped: %s", client_address, error)
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s %s", self.address_string(), format % args)

    def setup(self) -> None:
        raw: socket.socket = self.request
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # no Nagle delays
        self.server.sim.track(raw, True)
        self._raw = raw
        if self.server.ssl_context is not None:
            # The TLS handshake runs here, in the connection's own thread.
            raw.settimeout(10)
            self.request = self.server.ssl_context.wrap_socket(raw, server_side=True)
            self.request.settimeout(None)
        super().setup()

    def finish(self) -> None:
        self.server.sim.track(self._raw, False)
        with contextlib.suppress(OSError):
            super().finish()

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def do_PUT(self) -> None:
        self._handle("PUT")

    def do_PATCH(self) -> None:
        self._handle("PATCH")

    def do_DELETE(self) -> None:
        self._handle("DELETE")

    def _handle(self, method: str) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        after: Callable[[], None] | None = None
        try:
            response, after = self.server.sim.dispatch(
                method, self.path, dict(self.headers), body
            )
        except errors.ApiError as exc:
            response = ApiResponse(exc.code, exc.body(), headers=exc.headers)
        except Exception as exc:
            log.exception("internal error on %s %s", method, self.path)
            failure = errors.internal_error(f"simcluster: {type(exc).__name__}: {exc}")
            response = ApiResponse(500, failure.body())
        if response.stream is not None:
            self._stream(response)
        else:
            self._send(response)
        if after is not None:
            after()

    def _peer_gone(self) -> bool:
        """Whether the client closed its end while we stream to it.

        An HTTP/1.1 client sends nothing while it reads a response, so a
        readable socket means end of file (or a TLS close_notify) here.
        """
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
        except (OSError, ValueError):
            return True
        return bool(readable)

    def _send(self, response: ApiResponse) -> None:
        self.send_response(response.status)
        headers = dict(response.headers)
        # JSON unless the answer says otherwise (the exporter's text format).
        self.send_header(
            "Content-Type", headers.pop("Content-Type", "application/json")
        )
        self.send_header("Cache-Control", "no-cache, private")
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(response.body)))
        self.end_headers()
        self.wfile.write(response.body)

    def _stream(self, response: ApiResponse) -> None:
        stream = response.stream
        if stream is None:
            raise ValueError("not a streaming response")
        self.send_response(response.status)
        content_type = response.headers.get("Content-Type", "application/json")
        self.send_header("Content-Type", content_type)
        self.send_header("Cache-Control", "no-cache, private")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()
        try:
            for chunk in stream:
                if not chunk:
                    # A stream's "nothing new": an empty chunk would end the
                    # body, so none is sent; stop if the client went away.
                    if self._peer_gone():
                        self.close_connection = True
                        break
                    continue
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except WatchDropped:
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            self.close_connection = True
        finally:
            if hasattr(stream, "close"):
                stream.close()
