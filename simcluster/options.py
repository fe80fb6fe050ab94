"""The simulator's options, and one line of its request log."""

from __future__ import annotations

from dataclasses import dataclass, field

from simcluster.faults import FaultSettings


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
    policy: str = "spread"
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
