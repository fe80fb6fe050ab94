"""A real control plane on loopback: etcd, kube-apiserver, kube-controller-manager,
kube-scheduler, Volcano's scheduler and controllers, KWOK, and the simulated
Ascend device plugin (see docs/kubestack.md); with ``scheduler="hami"`` also
HAMi's scheduler, its kube-scheduler and its webhook (kubestack/hami.py).

``KubeStack(scenario="guide").start()`` returns once the API server answers, the
controllers run and the scenario's pods have been placed by the real Volcano
(or, with ``scheduler="hami"``, by the real HAMi scheduler).
``stop()`` ends every process and removes the work folder unless ``keep``.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import signal
import ssl
import subprocess
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from kubestack import build, hami, hamibuild, kwok, volcano
from kubestack.deviceplugin import DevicePlugin, NodeHardware
from kubestack.files import write_atomic
from kubestack.jobplayer import JobPlayer
from kubestack.kubeletfront import KubeletFront
from kubestack.pki import (
    Pki,
    StaticUser,
    issue_client_pair,
    issue_serving_pair,
    write_pki,
)
from kubestack.processes import Process, StackError, free_port, spawn, wait_until
from kubestack.scenarios import NODE_IP, SCENARIOS, Scenario, node_manifest
from kubestack.supervisor import Supervisor

ADMIN = "kubestack-admin"
READONLY = "kubestack-readonly"
SA_MOUNT = Path("/var/run/secrets/kubernetes.io/serviceaccount")
SCHEDULERS = ("volcano", "hami")


class KubeStack:
    """The whole stack, started and stopped together."""

    def __init__(
        self,
        scenario: str = "guide",
        workdir: Path | None = None,
        keep: bool = False,
        quiet: bool = True,
        seed: int | None = None,
        progress: Any = None,
        scenario_options: dict[str, Any] | None = None,
        scheduler: str = "volcano",
    ) -> None:
        if scenario not in SCENARIOS:
            raise StackError(
                f"unknown scenario {scenario!r}; one of {sorted(SCENARIOS)}"
            )
        if scheduler not in SCHEDULERS:
            raise StackError(f"unknown scheduler {scheduler!r}; one of {SCHEDULERS}")
        # Which scheduler places the scenario's vNPU pods: Volcano (the
        # guide's), or HAMi's own, run as its chart deploys it. Volcano runs
        # in both: a HAMi site may have it too, and the portal sees both.
        self.scheduler = scheduler
        self.scenario: Scenario = SCENARIOS[scenario](
            seed=seed, **(scenario_options or {})
        )
        self._own_workdir = workdir is None
        self.workdir = Path(workdir or tempfile.mkdtemp(prefix="kubestack-"))
        self.keep = keep
        self.quiet = quiet
        self._progress = progress
        self.processes: dict[str, Process] = {}
        self.bin = build.bin_dir()
        self.kubectl_path = build.tools_bin_dir() / "kubectl"
        self.share = build.share_dir()
        self.hami_bin = build.hami_bin_dir() if scheduler == "hami" else None
        self.hami_port = 0
        self.logs = self.workdir / "logs"
        self.pki: Pki | None = None
        self.port = 0
        self.device_plugin: DevicePlugin | None = None
        self.supervisor: Supervisor | None = None
        # The containers' output and end (kubestack/jobplayer.py) and the
        # nodes' kubelet endpoint in front of KWOK's (kubestack/kubeletfront.py).
        self.job_player: JobPlayer | None = None
        self.kubelet_front: KubeletFront | None = None
        self._lock = threading.Lock()
        self._restart_lock = threading.Lock()
        self.started_in = 0.0
        # The API server's watch cache serves watches from memory: an etcd
        # compaction then never reaches a client as 410 Gone. Fault tests turn
        # it off (restart_apiserver(watch_cache=False)) to get real 410s.
        self.watch_cache = True
        self.etcd_url = ""

    # -- public -----------------------------------------------------------

    @property
    def _pki(self) -> Pki:
        if self.pki is None:
            raise StackError("the stack has not been started")
        return self.pki

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    @property
    def admin_token(self) -> str:
        return self._pki.users[ADMIN].token

    @property
    def readonly_token(self) -> str:
        return self._pki.users[READONLY].token

    @property
    def ca_pem(self) -> bytes:
        return self._pki.ca_cert.read_bytes()

    def start(self) -> KubeStack:
        """Start everything; raises StackError (naming the log) if a part fails."""
        started = time.monotonic()
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        self.started_in = time.monotonic() - started
        return self

    def __enter__(self) -> KubeStack:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        """Stop every process (newest first) and remove the work folder."""
        if self.supervisor is not None:
            self.supervisor.stop()
        if self.device_plugin is not None:
            self.device_plugin.stop()
        if self.kubelet_front is not None:
            self.kubelet_front.stop()
        if self.job_player is not None:
            self.job_player.stop()
        with self._lock:
            running = list(self.processes.values())
            # Everything but etcd at once (they only talk to the API server), then etcd.
            for process in running[1:]:
                process.terminate()
            for process in reversed(running):
                process.stop(grace=5)
            self.processes.clear()
        if self._own_workdir and not self.keep:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def kubeconfig(self, user: str = ADMIN) -> dict[str, Any]:
        """A kubeconfig document for ``user`` (contexts kubestack and readonly)."""
        cluster = {
            "server": self.url,
            "certificate-authority-data": base64.b64encode(self.ca_pem).decode(),
        }
        return {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "kubestack", "cluster": cluster}],
            "users": [
                {"name": ADMIN, "user": {"token": self._pki.users[user].token}},
                {"name": READONLY, "user": {"token": self.readonly_token}},
            ],
            "contexts": [
                {
                    "name": "kubestack",
                    "context": {
                        "cluster": "kubestack",
                        "user": ADMIN,
                        "namespace": "default",
                    },
                },
                {
                    "name": "readonly",
                    "context": {
                        "cluster": "kubestack",
                        "user": READONLY,
                        "namespace": "default",
                    },
                },
            ],
            "current-context": "kubestack",
        }

    def write_kubeconfig(self, path: str | os.PathLike[str], user: str = ADMIN) -> Path:
        """Write :meth:`kubeconfig` (mode 0600) and return its path."""
        target = Path(path)
        write_atomic(
            target, yaml.safe_dump(self.kubeconfig(user), sort_keys=False), 0o600
        )
        return target

    def kubernetes_client(self, user: str = ADMIN, pool_size: int = 0) -> Any:
        """A ``kubernetes.client.ApiClient`` as ``user`` (admin by default),
        keeping up to ``pool_size`` connections (default: the client's, five a
        CPU) for as many threads."""
        from kubernetes import client, config

        path = self.write_kubeconfig(self.workdir / f"client-{user}.kubeconfig", user)
        configuration = client.Configuration()
        config.load_kube_config(str(path), client_configuration=configuration)
        if pool_size:
            configuration.connection_pool_maxsize = pool_size
        return client.ApiClient(configuration)

    def kubectl(
        self,
        *args: str,
        stdin: str | None = None,
        timeout: float = 60,
        check: bool = True,
    ) -> subprocess.CompletedProcess[str]:
        """Run the built kubectl as admin."""
        done = subprocess.run(
            [
                str(self.kubectl_path),
                "--kubeconfig",
                str(self._admin_kubeconfig),
                *args,
            ],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if check and done.returncode != 0:
            raise StackError(f"kubectl {' '.join(args)}: {done.stderr.strip()}")
        return done

    def create_objects(self, items: list[dict[str, Any]]) -> None:
        """Create the objects with one ``kubectl create`` (a v1 List; it
        creates them one by one: a second more for every ten)."""
        self.kubectl(
            "create",
            "-f",
            "-",
            stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": items}),
            timeout=60 + len(items) / 10,
        )

    def force_delete_pods(self, namespace: str, selector: str) -> None:
        """Delete the pods matching a label selector at once (a test's clean-up)."""
        self.kubectl(
            "delete",
            "pods",
            "-n",
            namespace,
            "-l",
            selector,
            "--grace-period=0",
            "--force",
            "--wait=false",
            check=False,
        )

    def add_nodes(self, nodes: list[NodeHardware]) -> None:
        """Register more fake nodes (KWOK runs them, the device plugin reports
        their chips) and wait until they are Ready."""
        if self.device_plugin is None:
            raise StackError("the stack has not been started")
        self.create_objects([node_manifest(node) for node in nodes])
        self.device_plugin.add_nodes(nodes)
        for node in nodes:
            self.kubectl(
                "wait", "--for=condition=Ready", "node", node.name, "--timeout=60s"
            )
        self.wait_plugins([node.name for node in nodes])

    def wait_plugins(self, names: list[str], timeout: float = 60) -> None:
        """Wait until the device plugin has started on each of these nodes
        (their DaemonSet pods run; at once without a DaemonSet)."""
        plugin = self.device_plugin
        if plugin is None:
            raise StackError("the stack has not been started")
        wait_until(
            "the device plugin's pods to start",
            lambda: plugin.running(names),
            timeout,
            [self.processes["kube-controller-manager"], self.processes["kwok"]],
        )

    def remove_nodes(self, names: list[str]) -> None:
        """Delete fake nodes and, at once, every pod bound to them."""
        if self.device_plugin is not None:
            self.device_plugin.remove_nodes(names)
        for name in names:
            self.kubectl(
                "delete",
                "pods",
                "-A",
                f"--field-selector=spec.nodeName={name}",
                "--grace-period=0",
                "--force",
                "--wait=false",
                check=False,
            )
        self.kubectl("delete", "node", *names, "--ignore-not-found", "--wait=true")

    def restart_volcano_scheduler(self) -> None:
        """Restart vc-scheduler (it reads the device ConfigMap once per process).

        One restart at a time, waited for whole: the supervisor restarts it when
        its Deployment is rolled, and a test may restart it too; interleaved,
        one would stop the process the other is waiting for.
        """
        with self._restart_lock:
            with self._lock:
                old = self.processes.pop("vc-scheduler", None)
                if old is not None:
                    old.stop(grace=5)
                self.processes["vc-scheduler"] = self._spawn_vc_scheduler()
            self.wait_volcano_ready()

    def restart_volcano_controller(self, *, hard: bool = False) -> None:
        """Restart vc-controller-manager (it makes the PodGroup of each new pod).

        ``hard`` kills it (SIGKILL), as a node failure or an OOM kill would;
        otherwise it is stopped (SIGTERM).
        """
        with self._lock:
            old = self.processes["vc-controller-manager"]
            _end(old, hard)
            self.processes["vc-controller-manager"] = self._spawn_vc_controller()

    def restart_volcano(self, *, hard: bool = False) -> None:
        """Restart Volcano's scheduler and controller together, then wait for
        the scheduler's first sessions (see :meth:`wait_volcano_ready`)."""
        with self._restart_lock:
            with self._lock:
                for name in ("vc-scheduler", "vc-controller-manager"):
                    _end(self.processes[name], hard)
                self.processes["vc-controller-manager"] = self._spawn_vc_controller()
                self.processes["vc-scheduler"] = self._spawn_vc_scheduler()
            self.wait_volcano_ready()

    def restart_apiserver(
        self,
        *,
        hard: bool = False,
        down_seconds: float = 0.0,
        watch_cache: bool | None = None,
    ) -> float:
        """Restart kube-apiserver on the same port, keeping etcd (and its data).

        Every client's connections and watches are cut; the other components
        reconnect by themselves. ``hard`` kills it (SIGKILL) instead of its
        graceful shutdown; it stays down ``down_seconds``; ``watch_cache``
        changes ``--watch-cache`` from now on. Returns the seconds it was not
        serving (from the stop to /readyz answering 200).
        """
        stopped = time.monotonic()
        self.stop_apiserver(hard=hard)
        time.sleep(down_seconds)
        self.start_apiserver(watch_cache=watch_cache)
        return time.monotonic() - stopped

    def wait_logs_served(self, timeout: float = 120.0) -> float:
        """Wait until KWOK serves a new pod's log file (it lags after API-server
        restarts: :meth:`JobPlayer.wait_logs_served`); the seconds waited."""
        if self.job_player is None or self.kubelet_front is None:
            raise StackError("this stack plays no jobs")
        return self.job_player.wait_logs_served(self.kubelet_front.kwok_port, timeout)

    def stop_apiserver(self, *, hard: bool = False) -> None:
        """Stop kube-apiserver (SIGKILL when ``hard``); :meth:`start_apiserver` brings it back."""
        with self._lock:
            _end(self.processes["kube-apiserver"], hard)

    def start_apiserver(self, *, watch_cache: bool | None = None) -> None:
        """Start kube-apiserver again on its port and wait until it is ready."""
        if watch_cache is not None:
            self.watch_cache = watch_cache
        with self._lock:
            self.processes["kube-apiserver"] = self._spawn_apiserver()
            self._wait_apiserver_ready()

    @contextlib.contextmanager
    def paused(self, name: str) -> Iterator[None]:
        """Freeze a process (SIGSTOP) for the block, as a stalled disk or VM would.

        Its peers' calls hang instead of failing: with etcd paused, a write the
        API server accepted is neither done nor refused until the block ends.
        """
        process = self.processes[name]
        os.killpg(process.popen.pid, signal.SIGSTOP)
        try:
            yield
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.popen.pid, signal.SIGCONT)

    # -- etcd -------------------------------------------------------------------

    def _etcd(self, method: str, body: dict[str, Any]) -> dict[str, Any]:
        """One call to etcd's JSON gateway (``/v3/<method>``)."""
        request = urllib.request.Request(  # noqa: S310 - our own loopback etcd
            f"{self.etcd_url}/v3/{method}",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=10) as answer:  # noqa: S310
            return json.loads(answer.read())

    def etcd_revision(self) -> int:
        """etcd's current revision (every write to the cluster raises it)."""
        key = base64.b64encode(b"/registry/").decode()
        found = self._etcd("kv/range", {"key": key, "count_only": True, "limit": 1})
        return int(found["header"]["revision"])

    def etcd_compact(self, revision: int | None = None) -> int:
        """Compact etcd's history up to ``revision`` (default: the current one).

        Watches and lists from an older resourceVersion then get 410 Gone,
        as on a cluster whose controller-manager compacts every five minutes
        (with the API server's watch cache off, see :meth:`restart_apiserver`).
        Returns the revision compacted to.
        """
        revision = revision or self.etcd_revision()
        self._etcd("kv/compaction", {"revision": revision, "physical": True})
        return revision

    def etcd_object_writes(self, resource: str, namespace: str, name: str) -> int:
        """How many times an object was written since it was created (etcd's
        ``version`` of its key; 0 when it does not exist). Counted by etcd, so
        a write whose answer never reached its client is counted too."""
        key = base64.b64encode(f"/registry/{resource}/{namespace}/{name}".encode())
        found = self._etcd("kv/range", {"key": key.decode(), "keys_only": True})
        kvs = found.get("kvs") or []
        return int(kvs[0].get("version", 0)) if kvs else 0

    def wait_volcano_ready(self) -> None:
        """Wait for vc-scheduler's first sessions, then have the plugin report.

        Volcano builds a node's vNPU devices on node events, with the device
        config that deviceshare loads at the first session; nodes it learnt
        before that carry no devices (pods bind without vNPU annotations) until
        the node changes again. On a real cluster the plugin's next report (at
        most 30 s later) is that change; here it is made at once.
        """
        process = self.processes["vc-scheduler"]

        def config_loaded() -> bool:
            # The log is appended to by every vc-scheduler process: read only
            # this process's part, or a restart looks loaded before it is. The
            # "Initializing" line is written before the config is in place, so
            # wait for the end of that session too: a node event that arrives
            # in between still builds the node without vNPUs.
            with process.log.open("rb") as log:
                log.seek(process.log_offset)
                text = log.read()
            start = text.find(b"Initializing volcano device config")
            return start >= 0 and b"Close Session" in text[start:]

        # The controller too: a restarted controller that exits at once (as
        # one did on a kubeconfig it read half-written) makes no PodGroups,
        # and Volcano then never looks at a new pod.
        wait_until(
            "vc-scheduler to load the device config",
            config_loaded,
            60,
            [process, self.processes["vc-controller-manager"]],
        )
        wait_until(
            "Volcano's default queue",
            lambda: (
                self.kubectl("get", "queue", "default", check=False).returncode == 0
            ),
            60,
            [process],
        )
        if self.device_plugin is not None:
            self.device_plugin.report()

    @property
    def audit_log(self) -> Path:
        """The API server's audit log: every request made with a ServiceAccount token."""
        return self.logs / "audit.log"

    def audit_events(self, user: str) -> list[dict[str, Any]]:
        """The audit events (stage ResponseComplete) of ``user``, oldest first."""
        events = []
        with contextlib.suppress(FileNotFoundError), self.audit_log.open() as lines:
            for line in lines:
                event = json.loads(line)
                if (
                    event.get("stage") == "ResponseComplete"
                    and event["user"]["username"] == user
                ):
                    events.append(event)
        return events

    def _audit_policy(self) -> Path:
        # Only ServiceAccounts: the portal's identity in the RBAC tests. The
        # components' own traffic (leases, status updates) would swamp the log.
        policy = {
            "apiVersion": "audit.k8s.io/v1",
            "kind": "Policy",
            "omitStages": ["RequestReceived"],
            "rules": [
                {"level": "Metadata", "userGroups": ["system:serviceaccounts"]},
                {"level": "None"},
            ],
        }
        path = self.workdir / "audit-policy.yaml"
        path.write_text(yaml.safe_dump(policy))
        return path

    def alive(self) -> dict[str, bool]:
        """Which processes are running."""
        return {name: p.alive() for name, p in self.processes.items()}

    # -- start-up ---------------------------------------------------------

    def say(self, text: str) -> None:
        """Report a step of the start to ``progress``, if given."""
        if self._progress is not None:
            self._progress(text)

    @property
    def _admin_kubeconfig(self) -> Path:
        return self.workdir / "admin.kubeconfig"

    def _start(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.pki = write_pki(
            self.workdir / "pki",
            [
                StaticUser(ADMIN, ("system:masters",)),
                StaticUser(READONLY, ("kubestack:readonly",)),
                # Each component its own user, so audit and RBAC tests can tell them apart.
                StaticUser("kube-controller-manager", ("system:masters",)),
                StaticUser("kube-scheduler", ("system:masters",)),
                StaticUser("volcano", ("system:masters",)),
                StaticUser("kwok", ("system:masters",)),
                StaticUser("hami", ("system:masters",)),
            ],
        )
        # The API server's client certificate for the kubelets.
        issue_client_pair(
            self._pki, "kubelet-client", ("system:masters",), self.workdir / "pki"
        )
        self._start_etcd()
        self._start_apiserver()
        self.write_kubeconfig(self._admin_kubeconfig)
        self.say("api server ready")
        self._bootstrap()
        self._start_controllers()
        self.scenario.install(self)
        self.say("scenario installed")
        self.supervisor = Supervisor(self)
        self.supervisor.start()
        self.scenario.place(self)
        self.say(
            f"scenario placed by {'HAMi' if self.scheduler == 'hami' else 'Volcano'}"
        )

    def _component_kubeconfig(self, user: str) -> Path:
        return self.write_kubeconfig(self.workdir / f"{user}.kubeconfig", user)

    def _start_etcd(self) -> None:
        client_port, peer_port = free_port(), free_port()
        peer = f"http://127.0.0.1:{peer_port}"
        self.etcd_url = f"http://127.0.0.1:{client_port}"
        etcd = spawn(
            "etcd",
            [
                str(self.bin / "etcd"),
                "--name=kubestack",
                f"--data-dir={self.workdir / 'etcd'}",
                f"--listen-client-urls={self.etcd_url}",
                f"--advertise-client-urls={self.etcd_url}",
                f"--listen-peer-urls={peer}",
                f"--initial-advertise-peer-urls={peer}",
                f"--initial-cluster=kubestack={peer}",
                "--listen-metrics-urls=",
                # A test cluster: losing it on a crash is fine, fsync is not free.
                "--unsafe-no-fsync",
                "--log-level=warn",
            ],
            self.logs,
        )
        self.processes["etcd"] = etcd

        def healthy() -> bool:
            with urllib.request.urlopen(f"{self.etcd_url}/health", timeout=2) as r:  # noqa: S310
                return b'"true"' in r.read()

        wait_until("etcd", healthy, 60, [etcd])

    def _start_apiserver(self) -> None:
        self.port = free_port()
        self.processes["kube-apiserver"] = self._spawn_apiserver()
        self._wait_apiserver_ready()

    def _spawn_apiserver(self) -> Process:
        issuer = "https://kubernetes.default.svc.cluster.local"
        pki = self.workdir / "pki"
        return spawn(
            "kube-apiserver",
            [
                str(self.bin / "kube-apiserver"),
                f"--etcd-servers={self.etcd_url}",
                "--bind-address=127.0.0.1",
                "--advertise-address=127.0.0.1",
                f"--secure-port={self.port}",
                f"--tls-cert-file={self._pki.serving_cert}",
                f"--tls-private-key-file={self._pki.serving_key}",
                f"--client-ca-file={self._pki.ca_cert}",
                f"--token-auth-file={self._pki.token_file}",
                "--authorization-mode=Node,RBAC",
                f"--service-account-issuer={issuer}",
                f"--service-account-key-file={self._pki.sa_pub}",
                f"--service-account-signing-key-file={self._pki.sa_key}",
                f"--api-audiences={issuer}",
                "--service-cluster-ip-range=10.96.0.0/16",
                "--allow-privileged=true",
                "--endpoint-reconciler-type=none",
                "--profiling=false",
                f"--cert-dir={self.workdir / 'apiserver-certs'}",
                f"--audit-policy-file={self._audit_policy()}",
                f"--audit-log-path={self.audit_log}",
                "--audit-log-format=json",
                f"--watch-cache={'true' if self.watch_cache else 'false'}",
                # pods/log (and exec, port-forward) go to the node's kubelet:
                # the kubelet front (kubestack/kubeletfront.py) on 127.0.0.1.
                f"--kubelet-client-certificate={pki / 'kubelet-client.crt'}",
                f"--kubelet-client-key={pki / 'kubelet-client.key'}",
                f"--kubelet-certificate-authority={self._pki.ca_cert}",
                "--kubelet-preferred-address-types=InternalIP",
                "--v=1",
            ],
            self.logs,
        )

    def _wait_apiserver_ready(self) -> None:
        apiserver = self.processes["kube-apiserver"]
        context = ssl.create_default_context(cafile=str(self._pki.ca_cert))

        def ready() -> bool:
            request = urllib.request.Request(  # noqa: S310 - our own loopback server
                f"{self.url}/readyz",
                headers={"Authorization": f"Bearer {self.admin_token}"},
            )
            with urllib.request.urlopen(request, timeout=5, context=context) as r:  # noqa: S310
                return r.status == 200

        wait_until("kube-apiserver /readyz", ready, 120, [apiserver])

    def _bootstrap(self) -> None:
        """What the components need before they start: CRDs, namespaces, RBAC."""
        # Volcano's, and KWOK's Logs (which the job player makes for pods that
        # print, kubestack/jobplayer.py).
        for crds in ("volcano-crds", "kwok-crds"):
            self.kubectl("create", "-f", str(self.share / crds))
        # Not `kubectl wait --for=condition=Established crd --all`: a CRD the
        # API server has not processed yet has no conditions, and kubectl
        # fails on it ("accessor error: <nil>") instead of waiting, which a
        # busy machine hit on every start.
        wait_until(
            "the CRDs to be Established",
            self._crds_established,
            60,
            [self.processes["kube-apiserver"]],
        )
        self.kubectl("create", "-f", "-", stdin=volcano.BOOTSTRAP_YAML)

    def _crds_established(self) -> bool:
        listed = json.loads(self.kubectl("get", "crd", "-o", "json").stdout)["items"]
        return bool(listed) and all(
            any(
                condition.get("type") == "Established"
                and condition.get("status") == "True"
                for condition in (crd.get("status") or {}).get("conditions") or []
            )
            for crd in listed
        )

    def _start_controllers(self) -> None:
        heartbeat = (
            self.scenario.heartbeat_seconds,
            self.scenario.heartbeat_jitter_seconds,
        )
        # The node lifecycle controller calls a node NotReady after 50 s without
        # a heartbeat: a scenario whose nodes post less often stretches that
        # (KWOK's delay is at most the larger of the two, kwok.py).
        grace = 2 * max(heartbeat)
        kcm = spawn(
            "kube-controller-manager",
            [
                str(self.bin / "kube-controller-manager"),
                *([f"--node-monitor-grace-period={grace:.0f}s"] if grace > 50 else []),
                f"--kubeconfig={self._component_kubeconfig('kube-controller-manager')}",
                "--leader-elect=false",
                "--controllers=*,-nodeipam,-service-lb-controller,-cloud-node-lifecycle-controller,-node-route-controller",
                f"--service-account-private-key-file={self.workdir / 'pki' / 'sa.key'}",
                f"--root-ca-file={self.workdir / 'pki' / 'ca.crt'}",
                "--use-service-account-credentials=false",
                "--bind-address=127.0.0.1",
                f"--secure-port={free_port()}",
                "--v=1",
            ],
            self.logs,
        )
        scheduler = spawn(
            "kube-scheduler",
            [
                str(self.bin / "kube-scheduler"),
                f"--kubeconfig={self._component_kubeconfig('kube-scheduler')}",
                "--leader-elect=false",
                "--bind-address=127.0.0.1",
                f"--secure-port={free_port()}",
                "--v=1",
            ],
            self.logs,
        )
        self.processes["kube-controller-manager"] = kcm
        self.processes["kube-scheduler"] = scheduler
        vcm = self._spawn_vc_controller()
        self.processes["vc-controller-manager"] = vcm
        self.processes["kwok"] = self._spawn_kwok(heartbeat)
        core_ready = [kcm, scheduler, vcm, self.processes["kwok"]]
        wait_until(
            "the default ServiceAccount",
            lambda: (
                self.kubectl("get", "serviceaccount", "default", check=False).returncode
                == 0
            ),
            60,
            core_ready,
        )
        self.device_plugin = DevicePlugin(
            self.kubernetes_client(),
            self.scenario.plugin_report_seconds,
            plugin_pods=self.scenario.plugin_daemonset,
        )
        self.device_plugin.start()

    def _spawn_kwok(self, heartbeat: tuple[float, float]) -> Process:
        """KWOK, once the job player and the kubelet front run (its nodes name
        the front's port; its ClusterLogs the player's empty log)."""
        kwok_port = free_port()
        front_port = self._start_job_side(kwok_port)
        config = kwok.write_config(
            self.share / "kwok-stages",
            self.workdir,
            *heartbeat,
            empty_log=self.job_player.empty_log if self.job_player else None,
        )
        return spawn(
            "kwok",
            kwok.command(
                self.bin / "kwok",
                self._component_kubeconfig("kwok"),
                config,
                (NODE_IP, front_port),
                kwok_port,
            ),
            self.logs,
        )

    def _start_job_side(self, kwok_port: int) -> int:
        """Start the job player and the kubelet front (on a free port, which it
        returns) before KWOK, whose nodes name that port."""
        self.job_player = JobPlayer(self.kubernetes_client(), self.workdir / "pod-logs")
        self.job_player.start()
        pki = self.workdir / "pki"
        cert, key = issue_serving_pair(self._pki, "kubelet", pki)
        self.kubelet_front = KubeletFront(
            self.kubernetes_client(pool_size=16),
            self.job_player.last_stamp,
            kwok_port,
            0,  # any free port: KWOK is told which
            (cert, key, self._pki.ca_cert),
        )
        self.kubelet_front.start()
        return self.kubelet_front.port

    def _spawn_vc_controller(self) -> Process:
        return spawn(
            "vc-controller-manager",
            [
                str(self.bin / "vc-controller-manager"),
                f"--kubeconfig={self._component_kubeconfig('volcano')}",
                "--controllers=pg-controller,queue-controller",
                "--leader-elect=false",
                "--scheduler-name=volcano",
                f"--listen-address=127.0.0.1:{free_port()}",
                f"--healthz-address=127.0.0.1:{free_port()}",
            ],
            self.logs,
        )

    def start_hami(self) -> None:
        """Start HAMi's scheduler and its kube-scheduler, wait until HAMi has
        taken in every node the device plugin registered, then register its
        webhook (the scenario calls this once nodes and config exist).

        The webhook last: with ``failurePolicy: Ignore`` a pod created while
        HAMi does not answer is admitted unchanged, as on a real cluster.
        """
        if self.hami_bin is None:
            raise StackError("this stack runs Volcano only (scheduler='volcano')")
        self.hami_port = free_port()
        with self._lock:
            self.processes["hami-scheduler"] = self._spawn_hami()
            self.processes["hami-kube-scheduler"] = self._spawn_hami_kube_scheduler()
        self.wait_hami_ready()
        webhook = hami.webhook_configuration(
            f"https://127.0.0.1:{self.hami_port}/webhook",
            base64.b64encode(self.ca_pem).decode(),
        )
        self.kubectl("apply", "-f", "-", stdin=json.dumps(webhook))
        wait_until(
            "HAMi's webhook to mutate pods",
            self._hami_webhook_in_effect,
            60,
            [self.processes["hami-scheduler"]],
            interval=0.5,
        )

    def _hami_webhook_in_effect(self) -> bool:
        """A server-side dry run of a vNPU pod comes back with HAMi's scheduler."""
        probe = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "kubestack-hami-webhook-probe"},
            "spec": {
                "containers": [
                    {
                        "name": "probe",
                        "image": "probe",
                        "resources": {"limits": {"huawei.com/Ascend310P": "1"}},
                    }
                ]
            },
        }
        done = self.kubectl(
            "create",
            "--dry-run=server",
            "-o",
            "json",
            "-f",
            "-",
            stdin=json.dumps(probe),
            check=False,
        )
        if done.returncode != 0:
            return False
        return json.loads(done.stdout)["spec"].get("schedulerName") == (
            hami.SCHEDULER_NAME
        )

    def wait_hami_ready(self) -> None:
        """Wait until HAMi's scheduler has taken in the devices of every node
        the device plugin registered (it reads node annotations on node events
        and every 15 s)."""
        process = self.processes["hami-scheduler"]

        def registered() -> bool:
            with process.log.open("rb") as log:
                log.seek(process.log_offset)
                text = log.read().decode(errors="replace")
            plugin = self.device_plugin
            wanted = {
                name
                for name, devices in (plugin.registered.items() if plugin else [])
                if devices
            }
            return wanted <= hami.registered_nodes(text)

        wait_until(
            "HAMi's scheduler to register the nodes' devices",
            registered,
            90,
            [process, self.processes["hami-kube-scheduler"]],
        )

    def restart_hami_scheduler(self) -> None:
        """Restart HAMi's scheduler (it reads the device config once per
        process, from the file its ConfigMap mount gives), as a roll of its
        Deployment does; its kube-scheduler keeps running."""
        with self._restart_lock:
            with self._lock:
                old = self.processes.pop("hami-scheduler", None)
                if old is not None:
                    old.stop(grace=5)
                self.processes["hami-scheduler"] = self._spawn_hami()
            if self.device_plugin is not None:
                self.device_plugin.report()
            self.wait_hami_ready()

    def _spawn_hami(self) -> Process:
        if self.hami_bin is None:
            raise StackError("this stack runs Volcano only (scheduler='volcano')")
        from kubernetes import client

        conf = self.workdir / "hami-device-config.yaml"
        hami.write_device_config(client.CoreV1Api(self.kubernetes_client()), conf)
        cert, key = issue_serving_pair(
            self._pki, "hami-scheduler", self.workdir / "pki"
        )
        return spawn(
            "hami-scheduler",
            hami.scheduler_args(
                self.hami_bin / hamibuild.BINARY,
                self.hami_port,
                free_port(),
                cert,
                key,
                conf,
            ),
            self.logs,
            env={
                "KUBECONFIG": str(self._component_kubeconfig("hami")),
                # The chart's downward API: HAMi labels its own pod by these.
                "POD_NAME": "hami-scheduler-kubestack",
                "POD_NAMESPACE": hami.NAMESPACE,
            },
        )

    def _spawn_hami_kube_scheduler(self) -> Process:
        conf = self.workdir / "hami-kube-scheduler.yaml"
        write_atomic(
            conf,
            yaml.safe_dump(
                hami.scheduler_configuration(
                    self._component_kubeconfig("hami"),
                    f"https://127.0.0.1:{self.hami_port}",
                ),
                sort_keys=False,
            ),
        )
        return spawn(
            "hami-kube-scheduler",
            [
                str(self.bin / "kube-scheduler"),
                f"--config={conf}",
                "--bind-address=127.0.0.1",
                f"--secure-port={free_port()}",
                "--v=1",
            ],
            self.logs,
        )

    def start_volcano_scheduler(self) -> None:
        """Start vc-scheduler once its ConfigMaps exist (the scenario calls this)."""
        with self._lock:
            self.processes["vc-scheduler"] = self._spawn_vc_scheduler()

    def _spawn_vc_scheduler(self) -> Process:
        """vc-scheduler in a mount namespace where in-cluster config points here.

        deviceshare reads the device ConfigMap only through rest.InClusterConfig(),
        which reads fixed paths under /var/run/secrets; outside a pod it silently
        falls back to a built-in 310P3-only config. A private mount namespace binds
        a folder with this stack's token and CA there, for this process only.
        """
        secrets = self.workdir / "volcano-serviceaccount"
        secrets.mkdir(exist_ok=True)
        (secrets / "token").write_text(self._pki.users["volcano"].token)
        shutil.copy(self._pki.ca_cert, secrets / "ca.crt")
        (secrets / "namespace").write_text("volcano-system")
        conf = self.workdir / "volcano-scheduler.conf"
        from kubernetes import client

        volcano.write_scheduler_conf(client.CoreV1Api(self.kubernetes_client()), conf)
        command = [
            str(self.bin / "vc-scheduler"),
            f"--kubeconfig={self._component_kubeconfig('volcano')}",
            f"--scheduler-conf={conf}",
            "--leader-elect=false",
            "--scheduler-name=volcano",
            f"--schedule-period={self.scenario.schedule_period_seconds:g}s",
            f"--listen-address=127.0.0.1:{free_port()}",
            f"--healthz-address=127.0.0.1:{free_port()}",
            "--v=3",
        ]
        if shutil.which("unshare") is None or os.geteuid() != 0:
            raise StackError(
                "Volcano's deviceshare reads its config only through in-cluster "
                "credentials; kubestack provides them in a private mount namespace, "
                "which needs root and util-linux's unshare"
            )
        SA_MOUNT.mkdir(parents=True, exist_ok=True)
        wrapped = [
            "unshare",
            "--mount",
            "--propagation",
            "private",
            "sh",
            "-c",
            'mount --bind "$0" ' + str(SA_MOUNT) + ' && exec "$@"',
            str(secrets),
            *command,
        ]
        return spawn(
            "vc-scheduler",
            wrapped,
            self.logs,
            env={
                "KUBERNETES_SERVICE_HOST": "127.0.0.1",
                "KUBERNETES_SERVICE_PORT": str(self.port),
            },
        )


def _end(process: Process, hard: bool) -> None:
    """Stop a process: SIGKILL its group at once (``hard``), or SIGTERM then wait."""
    process.stop(grace=5, sig=signal.SIGKILL if hard else signal.SIGTERM)
