"""``SimCluster``, the programmatic entry point: its lifecycle and components.

What it serves is carved by what it does: ``transport`` (the HTTP server),
``dispatch`` (answering a request), ``knobs`` (what tests turn on it),
``options`` (its options and request log).

Example::

    sim = SimCluster(scenario="guide", port=0)
    sim.start()
    sim.write_kubeconfig("/tmp/kubeconfig")
    ...
    sim.stop()
"""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
import time
from collections import deque
from dataclasses import asdict
from pathlib import Path
from typing import Any

from simcluster import (
    auth,
    errors,
    resources,
    scenarios,
    tls,
)
from simcluster.api import Api, ApiOptions
from simcluster.controllers.base import Controller, Manager
from simcluster.controllers.binder import Binder
from simcluster.controllers.device_plugin import DevicePlugin
from simcluster.controllers.generator import Generator
from simcluster.controllers.kubelet import Kubelet
from simcluster.controllers.queues import VolcanoQueues
from simcluster.controllers.rootca import RootCaPublisher
from simcluster.controllers.workloads import Workloads
from simcluster.dispatch import DispatchMixin
from simcluster.exporter import Exporter
from simcluster.faults import Faults, FaultSettings
from simcluster.knobs import KnobsMixin
from simcluster.kubeconfig import write_kubeconfig
from simcluster.options import AuditEntry, SimOptions
from simcluster.podlogs import LogBook
from simcluster.store import Store
from simcluster.transport import PUBLIC_PATHS, _Handler, _Server
from simcluster.watch import WatchOptions

__all__ = ["PUBLIC_PATHS", "AuditEntry", "SimCluster", "SimOptions"]
log = logging.getLogger("simcluster")


class SimCluster(KnobsMixin, DispatchMixin):
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
        # What the simulated containers printed: the kubelet writes, pods/log reads.
        self.logs = LogBook()
        self.api = Api(
            self.store,
            self.faults,
            self._stopping,
            ApiOptions(pod_shutdown_seconds=opts.pod_shutdown_seconds),
            WatchOptions(opts.watch_timeout, opts.bookmark_interval),
            self.logs,
        )
        self.api.snapshots.ttl = opts.continue_ttl
        built = scenarios.build(
            opts.scenario, nodes=opts.nodes, pods=opts.pods, slice_pods=opts.slice_pods
        )
        built.load(self.store)
        self.hardware = built.hardware
        self.exporter = Exporter(self.store, self.hardware)
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
                DevicePlugin(self.store, self.hardware, opts.plugin_interval, self.logs)
            )
        if opts.binder:
            controllers.append(Binder(self.store, opts.policy, opts.seed))
        controllers.append(
            Kubelet(self.store, self.api.deadlines, opts.ready_delay, self.logs)
        )
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
