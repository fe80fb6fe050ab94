"""Tie the processes to the workloads that stand for them in the cluster.

On a real cluster volcano-scheduler and the device plugin run in pods: rolling
their Deployment or DaemonSet starts new processes, which read the device
config afresh, and a ConfigMap volume brings a changed scheduler conf file.
Here the workloads exist as objects (KWOK runs their pods) and the processes run
beside them; the supervisor watches the objects and does to the processes what
the roll would have done.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any

from kubestack import hami, volcano

if TYPE_CHECKING:
    from kubestack.stack import KubeStack

log = logging.getLogger("kubestack.supervisor")

VOLCANO_DEPLOYMENT = ("volcano-system", "volcano-scheduler")
PLUGIN_DAEMONSET = ("kube-system", "hami-ascend-device-plugin")


def _template_key(obj: Any) -> tuple[Any, ...]:
    """What changes when a workload is rolled (a restart or a new pod template)."""
    template = obj.spec.template
    annotations = (template.metadata.annotations or {}) if template.metadata else {}
    return (
        obj.metadata.generation,
        annotations.get("kubectl.kubernetes.io/restartedAt"),
    )


class Supervisor:
    """Polls the workloads once a second (the stack is small) and acts on rolls."""

    interval = 1.0

    def __init__(self, stack: KubeStack) -> None:
        from kubernetes import client

        self.stack = stack
        api = stack.kubernetes_client()
        self.apps = client.AppsV1Api(api)
        self.core = client.CoreV1Api(api)
        self._seen: dict[str, tuple[Any, ...]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._run, name="kubestack-supervisor", daemon=True
        )
        self.scheduler_restarts = 0
        self.plugin_restarts = 0
        self.hami_restarts = 0

    def start(self) -> None:
        self._check()
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self._check()
            except Exception as error:
                log.warning("supervisor: %s", error)

    def _rolled(self, name: str, key: tuple[Any, ...]) -> bool:
        previous = self._seen.get(name)
        self._seen[name] = key
        return previous is not None and previous != key

    def _check_hami(self) -> None:
        """A roll of HAMi's Deployment restarts its scheduler (which reads
        the device config once per process)."""
        from kubernetes.client.rest import ApiException

        try:
            deployment = self.apps.read_namespaced_deployment(
                hami.DEPLOYMENT[1], hami.DEPLOYMENT[0]
            )
        except ApiException as error:
            if error.status != 404:
                raise
            return
        if self._rolled("hami", _template_key(deployment)):
            log.info("hami-scheduler rolled: restarting HAMi's scheduler")
            self.stack.restart_hami_scheduler()
            self.hami_restarts += 1

    def _check(self) -> None:
        from kubernetes.client.rest import ApiException

        try:
            deployment = self.apps.read_namespaced_deployment(
                VOLCANO_DEPLOYMENT[1], VOLCANO_DEPLOYMENT[0]
            )
            if self._rolled("volcano", _template_key(deployment)):
                log.info("volcano-scheduler rolled: restarting vc-scheduler")
                self.stack.restart_volcano_scheduler()
                self.scheduler_restarts += 1
        except ApiException as error:
            if error.status != 404:
                raise
        try:
            daemonset = self.apps.read_namespaced_daemon_set(
                PLUGIN_DAEMONSET[1], PLUGIN_DAEMONSET[0]
            )
            # Where the plugin runs in the DaemonSet's own pods, the roll is
            # the DaemonSet controller's: it replaces the pods as the update
            # strategy says (OnDelete: only those deleted), and the plugin
            # follows the pods. Restarting every node's plugin here as well
            # restarted a node from its old pod with a changed node config
            # before its pod was replaced (a fresh-clone run's failure).
            plugin = self.stack.device_plugin
            if (
                self._rolled("plugin", _template_key(daemonset))
                and plugin
                and not plugin.plugin_pods
            ):
                log.info("device plugin rolled: re-reading the device config")
                plugin.reload()
                self.plugin_restarts += 1
        except ApiException as error:
            if error.status != 404:
                raise
        if self.stack.scheduler == "hami":
            self._check_hami()
        volcano.write_scheduler_conf(
            self.core, self.stack.workdir / "volcano-scheduler.conf"
        )
