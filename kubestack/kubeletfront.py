"""The fake nodes' kubelet endpoint: KWOK's kubelet server, plus what it cannot know.

``kubectl logs`` asks the API server, which proxies ``pods/log`` to the node's
kubelet (``https://<InternalIP>:<kubeletEndpoint port>/containerLogs/<ns>/
<pod>/<container>``) with its kubelet client certificate. KWOK's server
serves that from the file its ``Logs``/``ClusterLogs`` resources name for the
container (kubestack/jobplayer.py), with the kubelet's own reader (tail,
since, timestamps, byte limit, follow). What KWOK does not have is the
container: its runtime stub says every container runs, so a follow never ends
(KWOK documents that it streams "until the connection is closed by the
client"), and it knows no waiting or previous containers. A real kubelet ends
a follow when the container stops and answers those from the container's
status. So every node's endpoint (KWOK ``--node-ip``/``--node-port``) is this
small front, which checks the container as the kubelet does and hands the
reading to KWOK:

- pod unknown: 404 ``pod "p" does not exist``; container not in the pod: 404;
- ``previous`` without a terminated previous instance (KWOK restarts
  nothing): 400 ``previous terminated container "c" in pod "p" not found``;
- a container waiting (or bound but without a status yet: its kubelet would
  say ContainerCreating): 400 ``container "c" in pod "p" is waiting to start:
  <reason>``;
- a follow of a container that ended is a plain read; a follow of a running
  one is KWOK's follow, read with timestamps (cut off again unless asked for)
  and ended once the container has terminated (or the pod is gone) and the
  line the player wrote last has passed. Every line is in the file before
  the container is seen terminated, and a container's timestamps are strictly
  increasing, so that line is known and unique; a follow that can never show
  it (``tailLines=0``, ``sinceTime`` after it) ends two seconds after the end;
- a follow that ended without the container's last line (KWOK read its empty
  default because it had not yet seen the pod's ``Logs`` object) reads the
  rest once more, as a kubelet would have read the container's own file.

Anything else is passed to KWOK as it is. The API server's client certificate
is checked against the stack's CA, as a kubelet checks its clients.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import logging
import socket
import ssl
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

log = logging.getLogger("kubestack.kubeletfront")

POLL_SECONDS = 0.5
# After the end: how long a follow that cannot show the last line stays open.
END_GRACE_SECONDS = 2.0
TRUE = ("1", "t", "T", "TRUE", "true", "True")  # Go's strconv.ParseBool

LastStamp = Callable[[str, str], str | None]


def _flag(query: dict[str, list[str]], name: str) -> bool:
    return (query.get(name) or ["false"])[0] in TRUE


def _status_of(pod: dict[str, Any], container: str) -> dict[str, Any] | None:
    status = pod.get("status") or {}
    for key in ("containerStatuses", "initContainerStatuses"):
        for found in status.get(key) or []:
            if found.get("name") == container:
                return found
    return None


def container_error(pod: dict[str, Any], container: str, previous: bool) -> str | None:
    """Why the kubelet would refuse this container's log, or None."""
    name = pod["metadata"]["name"]
    status = _status_of(pod, container)
    last = ((status or {}).get("lastState") or {}).get("terminated")
    if previous and not last:
        return f'previous terminated container "{container}" in pod "{name}" not found'
    if status is None:
        return (
            f'container "{container}" in pod "{name}" is waiting to start:'
            " ContainerCreating"
        )
    waiting = (status.get("state") or {}).get("waiting")
    if waiting is not None and not previous:
        reason = waiting.get("reason") or "ContainerCreating"
        return f'container "{container}" in pod "{name}" is waiting to start: {reason}'
    return None


def ended(pod: dict[str, Any] | None, uid: str, container: str) -> bool:
    """The container terminated, or the pod is gone (or another now)."""
    if pod is None or pod["metadata"].get("uid") != uid:
        return True
    status = _status_of(pod, container) or {}
    return "terminated" in (status.get("state") or {})


def catch_up_query(
    query: dict[str, list[str]], last: str
) -> dict[str, list[str]] | None:
    """The plain read of a follow's missed lines (see ``_catch_up``): from the
    last line passed on (``sinceTime``, inclusive: that line is skipped by
    its stamp), or as first asked when nothing was passed. None when the
    follow was asked to show no line (``tailLines=0``)."""
    if (query.get("tailLines") or [""])[0] == "0":
        return None
    again = {k: list(v) for k, v in query.items() if k != "follow"}
    again["timestamps"] = ["true"]
    if last:
        again.pop("tailLines", None)
        again["sinceTime"] = [last]
    return again


class _Follow:
    """A running follow: what it has passed and whether it may end."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.last = ""  # the timestamp of the last line passed
        self.final: str | None = None  # the container's last line, once ended
        self.ended_at: float | None = None
        self.done = threading.Event()

    def passed(self, stamp: str) -> bool:
        """A line went out; True when that was the last one."""
        with self.lock:
            self.last = stamp
            return self.final is not None and stamp >= self.final

    def end(self, final: str | None) -> None:
        with self.lock:
            if self.ended_at is None:
                self.ended_at = time.monotonic()
                self.final = final

    def missed(self) -> bool:
        """The container ended and its last line never went out: KWOK's
        follow read another file (below)."""
        with self.lock:
            return self.final is not None and self.last < self.final

    def over(self) -> bool:
        """The container ended and its last line went out (or never will)."""
        with self.lock:
            if self.ended_at is None:
                return False
            if self.final is None or self.last >= self.final:
                return True
            return time.monotonic() - self.ended_at > END_GRACE_SECONDS


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Quiet about clients that went away or failed the TLS handshake."""


class KubeletFront:
    """The HTTPS endpoint of every fake node, in front of KWOK's server."""

    def __init__(
        self,
        api_client: Any,
        last_stamp: LastStamp,
        kwok_port: int,
        port: int,
        tls: tuple[Path, Path, Path],
    ) -> None:
        from kubernetes import client

        self.core = client.CoreV1Api(api_client)
        self.last_stamp = last_stamp
        self.kwok_port = kwok_port
        cert, key, ca = tls
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        context.load_verify_locations(ca)
        context.verify_mode = ssl.CERT_REQUIRED
        handler = type("Handler", (_Handler,), {"front": self})
        self.server = _Server(("127.0.0.1", port), handler)
        # The handshake in the request's thread, not in accept().
        self.server.socket = context.wrap_socket(
            self.server.socket, server_side=True, do_handshake_on_connect=False
        )
        self.port = self.server.server_address[1]
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(
            target=self.server.serve_forever, name="kubelet-front", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def read_pod(self, namespace: str, name: str) -> dict[str, Any] | None:
        from kubernetes.client.rest import ApiException

        try:
            response = self.core.read_namespaced_pod(
                name, namespace, _preload_content=False
            )
        except ApiException as error:
            if error.status == 404:
                return None
            raise
        return json.loads(response.data)

    def upstream(self, path: str) -> tuple[http.client.HTTPConnection, Any]:
        """GET ``path`` from KWOK's server (plain HTTP on loopback)."""
        connection = http.client.HTTPConnection("127.0.0.1", self.kwok_port)
        connection.request("GET", path)
        return connection, connection.getresponse()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    front: KubeletFront

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the API server's own log says what was asked."""

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        segments = parts.path.strip("/").split("/")
        if segments[0] == "containerLogs" and len(segments) == 4:
            self._logs(*segments[1:], parse_qs(parts.query, keep_blank_values=True))
        else:
            self._relay(self.path)

    def _plain(self, code: int, text: str) -> None:
        body = text.encode()
        self.send_response(code)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _logs(
        self, namespace: str, name: str, container: str, query: dict[str, list[str]]
    ) -> None:
        pod = self.front.read_pod(namespace, name)
        if pod is None:
            self._plain(404, f'pod "{name}" does not exist')
            return
        names = [c.get("name") for c in (pod.get("spec") or {}).get("containers") or []]
        names += [
            c.get("name") for c in (pod.get("spec") or {}).get("initContainers") or []
        ]
        if container not in names:
            self._plain(404, f'container "{container}" not found in pod "{name}"')
            return
        refused = container_error(pod, container, _flag(query, "previous"))
        if refused:
            self._plain(400, refused)
            return
        path = f"/containerLogs/{namespace}/{name}/{container}"
        uid = pod["metadata"]["uid"]
        if not _flag(query, "follow") or ended(pod, uid, container):
            query.pop("follow", None)
            self._relay(f"{path}?{urlencode(query, doseq=True)}")
            return
        self._follow(path, query, (namespace, name, uid, container))

    def _relay(self, path: str) -> None:
        """KWOK's answer, passed on as it comes."""
        connection, response = self.front.upstream(path)
        try:
            self.send_response(response.status)
            self.send_header(
                "Content-Type", response.getheader("Content-Type") or "text/plain"
            )
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            while chunk := response.read1(65536):
                self._chunk(chunk)
            self._chunk(b"")
        finally:
            connection.close()

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _follow(
        self, path: str, query: dict[str, list[str]], who: tuple[str, str, str, str]
    ) -> None:
        """KWOK's follow, ended when the container has ended (module docstring).

        The watch starts before KWOK answers: KWOK (as a kubelet) sends its
        headers with the first line, and a follow that never gets one
        (``tailLines=0`` after the last line) must end too.
        """
        stamps = _flag(query, "timestamps")
        limit = int(query.pop("limitBytes", ["-1"])[0] or -1)
        query["timestamps"] = ["true"]
        state = _Follow()
        connection = http.client.HTTPConnection("127.0.0.1", self.front.kwok_port)
        try:
            connection.connect()
            threading.Thread(
                target=self._watch, args=(who, state, connection), daemon=True
            ).start()
            connection.request("GET", f"{path}?{urlencode(query, doseq=True)}")
            try:
                response = connection.getresponse()
            except (OSError, http.client.HTTPException):
                response = None  # cut before KWOK had a line to send
            if response is not None and response.status != 200:
                self._plain(response.status, response.read().decode(errors="replace"))
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            if response is not None:
                limit = self._pass_lines(response, state, stamps, limit)
            if state.missed() and limit != 0:
                self._catch_up(path, query, state, stamps, limit)
            with contextlib.suppress(OSError):
                self._chunk(b"")
        finally:
            state.done.set()
            connection.close()

    def _pass_lines(
        self, response: Any, state: _Follow, stamps: bool, limit: int
    ) -> int:
        """Pass KWOK's lines on (those after ``state.last`` only); the bytes
        ``limitBytes`` still allows (-1: no limit)."""
        after = state.last
        with contextlib.suppress(OSError, http.client.HTTPException, ValueError):
            while line := response.readline():
                stamp, _, text = line.partition(b" ")
                if after and stamp.decode() <= after:
                    continue  # passed already, before a catch-up
                out = line if stamps else text
                if limit >= 0:
                    out = out[:limit]
                    limit -= len(out)
                if out:
                    self._chunk(out)
                if limit == 0 or state.passed(stamp.decode()):
                    break
        return limit

    def _catch_up(
        self,
        path: str,
        query: dict[str, list[str]],
        state: _Follow,
        stamps: bool,
        limit: int,
    ) -> None:
        """The lines a follow missed, read once more now that the container
        has ended. KWOK reads the file its Logs object names only once it has
        seen that object; a follow that came first (a busy machine) was given
        the ClusterLogs default, an empty file, and would end with nothing
        although the container printed: a kubelet reads the container's own
        file. Lines already passed are skipped by their timestamp."""
        again = catch_up_query(query, state.last)
        if again is None:
            return
        log.warning(
            "follow of %s missed its lines (KWOK read another file): read again",
            path,
        )
        connection, response = self.front.upstream(
            f"{path}?{urlencode(again, doseq=True)}"
        )
        try:
            if response.status == 200:
                self._pass_lines(response, state, stamps, limit)
        finally:
            connection.close()

    def _watch(
        self,
        who: tuple[str, str, str, str],
        state: _Follow,
        connection: http.client.HTTPConnection,
    ) -> None:
        """Poll the pod; once the follow is over, cut KWOK's stream (the
        reading side then ends the answer)."""
        namespace, name, uid, container = who
        while not state.done.wait(POLL_SECONDS):
            if state.ended_at is None:
                try:
                    pod = self.front.read_pod(namespace, name)
                except Exception as error:  # the API server restarting: next poll
                    log.debug("reading pod %s/%s: %s", namespace, name, error)
                    continue
                if ended(pod, uid, container):
                    state.end(self.front.last_stamp(uid, container))
            if state.over():
                with contextlib.suppress(OSError, AttributeError):
                    connection.sock.shutdown(socket.SHUT_RDWR)
                return
