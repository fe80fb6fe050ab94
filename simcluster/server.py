"""The HTTP server and ``SimCluster``, the programmatic entry point.

Example::

    sim = SimCluster(scenario="guide", port=0)
    sim.start()
    sim.write_kubeconfig("/tmp/kubeconfig")
    ...
    sim.stop()
"""

from __future__ import annotations

import contextlib
import json
import logging
import secrets
import socket
import ssl
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from simcluster import (
    auth,
    discovery,
    errors,
    protobuf,
    rbac,
    resources,
    routing,
    scenarios,
    tls,
)
from simcluster.api import Api, ApiOptions, ApiRequest, ApiResponse
from simcluster.controllers.base import Controller, Manager
from simcluster.controllers.binder import Binder
from simcluster.controllers.device_plugin import DevicePlugin
from simcluster.controllers.generator import Generator
from simcluster.controllers.kubelet import Kubelet
from simcluster.controllers.queues import VolcanoQueues
from simcluster.controllers.rootca import RootCaPublisher
from simcluster.controllers.workloads import Workloads
from simcluster.faults import Faults, FaultSettings
from simcluster.kubeconfig import write_kubeconfig
from simcluster.store import Obj, Store, dumps
from simcluster.watch import WatchDropped, WatchOptions

log = logging.getLogger("simcluster")
PUBLIC_PATHS = frozenset({"/version", "/healthz", "/livez", "/readyz"})


@dataclass
class SimOptions:
    """Every setting of a simulated cluster (the CLI maps onto these)."""

    scenario: str = "guide"
    host: str = "127.0.0.1"
    port: int = 0
    # The name clients use when it differs from the listen address (a container
    # listening on 0.0.0.0, reached as https://simcluster:6443): in the URL, the
    # kubeconfig and the certificate.
    advertise_host: str = ""
    nodes: int = 1000
    pods: int = 30000
    slice_pods: int = 20000
    history: int = 10000
    device_plugin: bool = True
    binder: bool = True
    workloads: bool = True
    workload: bool = False
    workload_interval: float = 3.0
    policy: str = "binpack"
    plugin_interval: float = 30.0
    bookmark_interval: float = 10.0
    watch_timeout: float = 1800.0
    ready_delay: float = 0.5
    pod_shutdown_seconds: float = 1.0
    continue_ttl: float = 300.0
    tls: bool = True
    token: str | None = None
    readonly_token: str | None = None
    seed: int | None = None
    # False: a cluster without Volcano's CRDs (HAMi's own scheduler): requests
    # for scheduling.volcano.sh objects answer 404 (discovery is unchanged).
    volcano_crds: bool = True
    faults: FaultSettings = field(default_factory=FaultSettings)


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

    def _send(self, response: ApiResponse) -> None:
        self.send_response(response.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Cache-Control", "no-cache, private")
        for key, value in response.headers.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(response.body)))
        self.end_headers()
        self.wfile.write(response.body)

    def _stream(self, response: ApiResponse) -> None:
        stream = response.stream
        if stream is None:
            raise ValueError("not a streaming response")
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Cache-Control", "no-cache, private")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()
        try:
            for chunk in stream:
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


@dataclass(frozen=True)
class AuditEntry:
    """One resource request: who asked for what, and whether it was allowed."""

    user: str
    verb: str
    group: str
    resource: str
    subresource: str
    namespace: str
    name: str
    allowed: bool
    dry_run: bool = False


class SimCluster:
    """A simulated Ascend cluster serving the Kubernetes API in background threads."""

    def __init__(
        self,
        scenario: str = "guide",
        port: int = 0,
        host: str = "127.0.0.1",
        **options: Any,
    ) -> None:
        faults = options.pop("faults", None)
        self.options = SimOptions(scenario=scenario, port=port, host=host, **options)
        if isinstance(faults, dict):
            self.options.faults = FaultSettings(**faults)
        elif isinstance(faults, FaultSettings):
            self.options.faults = faults
        opts = self.options
        defaults = auth.Tokens()
        self.tokens = auth.Tokens(
            opts.token or defaults.admin, opts.readonly_token or defaults.readonly
        )
        self.store = Store(history=opts.history)
        self.faults = Faults(FaultSettings(**asdict(opts.faults)), seed=opts.seed)
        self._stopping = threading.Event()
        self.api = Api(
            self.store,
            self.faults,
            self._stopping,
            ApiOptions(pod_shutdown_seconds=opts.pod_shutdown_seconds),
            WatchOptions(opts.watch_timeout, opts.bookmark_interval),
        )
        self.api.snapshots.ttl = opts.continue_ttl
        built = scenarios.build(
            opts.scenario, nodes=opts.nodes, pods=opts.pods, slice_pods=opts.slice_pods
        )
        built.load(self.store)
        self.hardware = built.hardware
        hosts = [opts.host, *([opts.advertise_host] if opts.advertise_host else [])]
        self.certificate = tls.self_signed(hosts) if opts.tls else None
        self.manager = Manager(self.store, self._controllers())
        self.port = opts.port
        self._httpd: _Server | None = None
        self._listener_stop = threading.Event()
        self._connections: set[socket.socket] = set()
        self._conn_lock = threading.Lock()
        self._timers: list[threading.Timer] = []
        self.kubeconfig_path: Path | None = None
        # Tokens of ServiceAccounts (RBAC applies to them), and the request log.
        self._sa_tokens: dict[str, str] = {}
        self.audit: deque[AuditEntry] = deque(maxlen=100_000)
        self._ssl_context = (
            self.certificate.server_context() if self.certificate else None
        )

    # -- components -----------------------------------------------------------
    def _controllers(self) -> list[Controller]:
        opts = self.options
        controllers: list[Controller] = []
        if opts.device_plugin:
            controllers.append(
                DevicePlugin(self.store, self.hardware, opts.plugin_interval)
            )
        if opts.binder:
            controllers.append(Binder(self.store, opts.policy, opts.seed))
        controllers.append(Kubelet(self.store, self.api.deadlines, opts.ready_delay))
        controllers.append(VolcanoQueues(self.store))
        if self.certificate is not None:
            controllers.append(
                RootCaPublisher(self.store, self.certificate.cert_pem.decode())
            )
        if opts.workloads:
            controllers.append(
                Workloads(self.store, self.api.admit_pod, self.delete_pod)
            )
        if opts.workload:
            controllers.append(
                Generator(
                    self.store,
                    self.api.admit_pod,
                    self.delete_pod,
                    opts.workload_interval,
                    opts.seed,
                )
            )
        return controllers

    def delete_pod(self, namespace: str, name: str, grace: int | None = None) -> None:
        """Delete a pod as a client would (graceful unless ``grace`` is 0)."""
        options: dict[str, Any] = {} if grace is None else {"gracePeriodSeconds": grace}
        with contextlib.suppress(errors.ApiError):
            self.api.delete_object(resources.POD, namespace, name, options)

    # -- lifecycle ------------------------------------------------------------
    @property
    def url(self) -> str:
        """Base URL of the API server."""
        scheme = "https" if self.options.tls else "http"
        host = self.options.advertise_host or self.options.host
        return f"{scheme}://{host}:{self.port}"

    def start(self) -> SimCluster:
        """Start the controllers and the HTTP listener; returns self."""
        self.manager.start()
        self._start_listener()
        return self

    def stop(self) -> None:
        """Stop everything (idempotent)."""
        self._stopping.set()
        for timer in self._timers:
            timer.cancel()
        self._stop_listener()
        self.manager.stop()

    def __enter__(self) -> SimCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _start_listener(self) -> None:
        for attempt in range(50):
            try:
                httpd = _Server((self.options.host, self.port), _Handler)
                break
            except OSError:
                if attempt == 49 or self.port == 0:
                    raise
                time.sleep(0.1)
        httpd.sim = self
        httpd.ssl_context = self._ssl_context
        self.port = httpd.server_address[1]
        self._listener_stop = threading.Event()
        self._httpd = httpd
        threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.1},
            name="simcluster-http",
            daemon=True,
        ).start()

    def _stop_listener(self) -> None:
        httpd, self._httpd = self._httpd, None
        self._listener_stop.set()
        self.store.touch()
        if httpd is not None:
            httpd.shutdown()
            httpd.server_close()
        self._drop_connections()

    def _drop_connections(self) -> None:
        with self._conn_lock:
            conns = list(self._connections)
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)

    def track(self, conn: socket.socket, alive: bool) -> None:
        """Remember open client connections (to cut them in an outage)."""
        with self._conn_lock:
            if alive:
                self._connections.add(conn)
            else:
                self._connections.discard(conn)

    # -- helpers for tests and demos ------------------------------------------
    def write_kubeconfig(self, path: str | Path) -> Path:
        """Write a kubeconfig (contexts ``simcluster`` and ``readonly``)."""
        ca = self.certificate.cert_pem if self.certificate else None
        self.kubeconfig_path = write_kubeconfig(
            path, self.url, self.tokens.admin, self.tokens.readonly, ca
        )
        return self.kubeconfig_path

    def kubernetes_client(self, path: str | Path, *, readonly: bool = False) -> Any:
        """A ``kubernetes.client.ApiClient`` (the kubeconfig is written to ``path``).

        Imports the ``kubernetes`` package lazily: simcluster itself does not need it.
        """
        from kubernetes import config

        self.write_kubeconfig(path)
        return config.new_client_from_config(
            config_file=str(path), context="readonly" if readonly else "simcluster"
        )

    def service_account_token(self, namespace: str, name: str) -> str:
        """A bearer token for the ServiceAccount ``namespace/name`` (RBAC applies).

        Like a projected token, it works whether or not the ServiceAccount
        object exists; what it may do comes from the stored role bindings.
        """
        token = f"sa-{namespace}-{name}-" + secrets.token_hex(16)
        self._sa_tokens[token] = rbac.service_account_user(namespace, name)
        return token

    def requests_by(self, user: str) -> list[AuditEntry]:
        """The logged resource requests of ``user`` (oldest first)."""
        return [entry for entry in list(self.audit) if entry.user == user]

    def set_faults(self, **values: Any) -> FaultSettings:
        """Change fault settings (see ``FaultSettings``)."""
        settings = self.faults.update(values)
        self.store.touch()
        return settings

    def reset_faults(self) -> None:
        """Switch all faults off."""
        self.faults.reset()

    def outage(self, seconds: float, mode: str = "refuse") -> None:
        """Be down for ``seconds``: refuse connections (``refuse``) or answer 503."""
        if mode not in ("refuse", "503"):
            raise errors.bad_request("mode must be 'refuse' or '503'")
        self.faults.outage_until = time.monotonic() + seconds
        if mode == "503":
            self._listener_stop.set()
            self.store.touch()
            self._drop_connections()
            self._listener_stop = threading.Event()
            return
        self._stop_listener()
        timer = threading.Timer(seconds, self._end_outage)
        timer.daemon = True
        self._timers.append(timer)
        timer.start()

    def _end_outage(self) -> None:
        if not self._stopping.is_set():
            self._start_listener()

    def set_chip_health(self, node: str, index: int, healthy: bool) -> None:
        """Mark a chip (un)healthy; the device plugin reports it at once."""
        try:
            self.hardware.set_health(node, index, healthy)
        except (KeyError, IndexError):
            raise errors.not_found(
                "chips", "simcluster.io", f"{node}/{index}"
            ) from None
        self.store.touch()

    def wait_idle(self, timeout: float = 5.0) -> bool:
        """Wait until the controllers have handled every change (best effort)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            rv = self.store.rv
            time.sleep(0.15)
            if self.store.rv == rv and self.manager.idle.is_set():
                return True
        return False

    # -- request dispatch -----------------------------------------------------
    def dispatch(
        self, method: str, raw_path: str, headers: dict[str, str], body: bytes
    ) -> tuple[ApiResponse, Callable[[], None] | None]:
        """Answer one HTTP request (everything but the socket work)."""
        url = urlsplit(raw_path)
        path = url.path.rstrip("/") or "/"
        query = dict(parse_qsl(url.query, keep_blank_values=True))
        if path in PUBLIC_PATHS:
            if path == "/version":
                return ApiResponse(body=dumps(discovery.VERSION)), None
            return ApiResponse(body=b"ok"), None
        lowered = {k.lower(): v for k, v in headers.items()}
        user = self._user(lowered.get("authorization"))
        if path.startswith("/simcluster/"):
            return self._control(method, path, user, body)
        if self.faults.in_outage():
            down = errors.unavailable(
                "simcluster: the API server is down (simulated outage)"
            )
            down.headers = {}  # no Retry-After: clients must not simply wait it out
            raise down
        parts = [p for p in path.split("/") if p]
        found = self._discovery(method, path, parts)
        if found is not None:
            return ApiResponse(body=dumps(found)), None
        split = routing.split_group_version(parts)
        if split is None or not split[2]:
            raise errors.ApiError(
                404, "NotFound", "the server could not find the requested resource"
            )
        group, version, rest = split
        if group == "scheduling.volcano.sh" and not self.options.volcano_crds:
            raise errors.ApiError(
                404, "NotFound", "the server could not find the requested resource"
            )
        target = routing.route(method, group, version, rest, query)
        self._authorize(user, target, query)
        self.faults.before_request(write=target.verb in routing.WRITE_VERBS)
        content_type = lowered.get("content-type", "application/json")
        if (
            body
            and "json" not in content_type
            and "yaml" not in content_type
            and protobuf.MEDIA_TYPE not in content_type
        ):
            # CBOR and anything else; protobuf bodies are decoded in the Api.
            raise errors.ApiError(
                415,
                "UnsupportedMediaType",
                "the body of the request was in an unknown format - accepted media "
                "types include: application/json, application/yaml, "
                f"{protobuf.MEDIA_TYPE} ({content_type})",
            )
        request = ApiRequest(
            target.verb,
            target.res,
            target.namespace,
            target.name,
            target.subresource,
            query,
            body,
            lowered.get("content-type", "application/json"),
            user,
            self._listener_stop,
            lowered.get("accept", ""),
        )
        return self.api.handle(request), None

    def _user(self, authorization: str | None) -> str:
        if authorization and authorization.lower().startswith("bearer "):
            found = self._sa_tokens.get(authorization[7:].strip())
            if found:
                return found
        return self.tokens.user_for(authorization)

    def _authorize(
        self, user: str, target: routing.Route, query: dict[str, str]
    ) -> None:
        """Admin and read-only by their fixed rules, service accounts by RBAC; log it."""
        name = target.name or ""
        if not name and target.verb in ("list", "watch"):
            name = rbac.name_from_field_selector(query.get("fieldSelector", ""))
        attrs = rbac.Attributes(
            user=user,
            verb=target.verb,
            group=target.res.group,
            resource=target.res.plural,
            subresource=target.subresource or "",
            namespace=target.namespace or "",
            name=name,
        )
        if user.startswith(rbac.SA_PREFIX):
            allowed = rbac.authorize(self.store, attrs)
        else:
            allowed = user == "admin" or target.verb not in routing.WRITE_VERBS
        self.audit.append(
            AuditEntry(
                **asdict(attrs), allowed=allowed, dry_run=bool(query.get("dryRun"))
            )
        )
        if allowed:
            return
        if not user.startswith(rbac.SA_PREFIX):
            auth.check_write(
                user,
                target.verb,
                target.res.plural,
                target.res.group,
                target.namespace,
                target.name,
            )
        what = f"{attrs.resource}{'/' + attrs.subresource if attrs.subresource else ''}"
        named = f' "{name}"' if name else ""
        where = f' in the namespace "{attrs.namespace}"' if attrs.namespace else ""
        raise errors.forbidden(
            f'{what}{named} is forbidden: User "{user}" cannot {attrs.verb} resource '
            f'"{what}" in API group "{attrs.group}"{where}',
            {
                "name": name,
                "kind": attrs.resource,
                **({"group": attrs.group} if attrs.group else {}),
            },
        )

    def _discovery(
        self, method: str, path: str, parts: list[str]
    ) -> dict[str, Any] | None:
        if method != "GET":
            return None
        # Without its CRDs a real API server leaves Volcano out of discovery too.
        hidden = set() if self.options.volcano_crds else {"scheduling.volcano.sh"}
        if len(parts) >= 2 and parts[0] == "apis" and parts[1] in hidden:
            return None
        if path == "/api":
            return discovery.api_versions(f"{self.options.host}:{self.port}")
        if path == "/apis":
            listed = discovery.api_group_list()
            listed["groups"] = [g for g in listed["groups"] if g["name"] not in hidden]
            return listed
        if path == "/openapi/v3":
            return discovery.openapi_index()
        if path.startswith("/openapi/v3/"):
            gv = discovery.parse_openapi_path(path[len("/openapi/v3/") :])
            doc = discovery.openapi_document(*gv) if gv else None
            if doc is None:
                raise errors.ApiError(
                    404, "NotFound", "the server could not find the requested resource"
                )
            return doc
        if path.startswith("/openapi/"):
            raise errors.ApiError(
                404, "NotFound", "the server could not find the requested resource"
            )
        if len(parts) == 2 and parts[0] == "api":
            return discovery.resource_list("", parts[1])
        if len(parts) == 2 and parts[0] == "apis":
            return discovery.api_group(parts[1])
        if len(parts) == 3 and parts[0] == "apis":
            return discovery.resource_list(parts[1], parts[2])
        return None

    def _control(
        self, method: str, path: str, user: str, body: bytes
    ) -> tuple[ApiResponse, Callable[[], None] | None]:
        if user != "admin":
            raise errors.forbidden("simcluster control endpoints need the admin token")
        data: Obj = {}
        if body:
            try:
                data = json.loads(body)
            except ValueError:
                raise errors.bad_request("the body must be JSON") from None
        name = path[len("/simcluster/") :]
        if name == "faults" and method == "GET":
            return ApiResponse(body=dumps(asdict(self.faults.settings))), None
        if name == "faults" and method == "POST":
            return ApiResponse(body=dumps(asdict(self.set_faults(**data)))), None
        if name == "reset" and method == "POST":
            self.reset_faults()
            return ApiResponse(body=dumps(asdict(self.faults.settings))), None
        if name == "outage" and method == "POST":
            seconds = float(data.get("seconds", 5))
            mode = str(data.get("mode", "refuse"))
            if mode not in ("refuse", "503"):
                raise errors.bad_request("mode must be 'refuse' or '503'")
            reply = ApiResponse(
                202,
                dumps({"outage": {"seconds": seconds, "mode": mode}}),
                headers={"Connection": "close"},
            )
            return reply, lambda: self.outage(seconds, mode)
        if name == "chips" and method == "POST":
            self.set_chip_health(
                str(data.get("node")),
                int(data.get("index", 0)),
                bool(data.get("healthy", True)),
            )
            return ApiResponse(body=dumps({"ok": True})), None
        if name == "tokens" and method == "POST":
            namespace, account = (
                str(data.get("namespace", "")),
                str(data.get("name", "")),
            )
            if not namespace or not account:
                raise errors.bad_request("namespace and name are required")
            token = self.service_account_token(namespace, account)
            user = rbac.service_account_user(namespace, account)
            return ApiResponse(body=dumps({"token": token, "user": user})), None
        if name == "expire-continue" and method == "POST":
            self.api.snapshots.clear()
            return ApiResponse(body=dumps({"ok": True})), None
        if name == "state" and method == "GET":
            counts = {r.key: self.store.count(r) for r in resources.RESOURCES}
            return ApiResponse(
                body=dumps(
                    {
                        "resourceVersion": str(self.store.rv),
                        "compactedResourceVersion": str(self.store.compacted_rv),
                        "counts": counts,
                        "injected": dict(self.faults.injected),
                    }
                )
            ), None
        raise errors.ApiError(404, "NotFound", f"no control endpoint {method} {path}")
