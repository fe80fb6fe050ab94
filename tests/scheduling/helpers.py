"""Helpers of the scheduling tests: a fake API server, row builders, one pass."""

from __future__ import annotations

import copy
from collections.abc import Callable
from datetime import timedelta
from typing import Any


class _EveryName(set):
    """A namespace list that has every name (the fake's default)."""

    def __contains__(self, name: object) -> bool:
        return True


class FakeOps:
    """A ClusterOps that keeps pods in a dict and records every call."""

    def __init__(self) -> None:
        self.pods: dict[tuple[str, str], dict[str, Any]] = {}
        self.calls: list[tuple[str, str, str]] = []
        self.events: list[dict[str, Any]] = []
        self.errors: dict[
            str, Any
        ] = {}  # method -> KubeError to raise (once or always)
        self.blocked: set[str] = set()  # pods whose eviction a PDB refuses
        self.on_create: Callable[[dict[str, Any]], None] | None = None
        # The cluster's namespaces; None: every namespace exists.
        self.namespace_names: set[str] | None = None
        self.taints: dict[str, list[dict[str, str]]] = {}  # node -> its taints
        self.gone_nodes: set[str] = set()  # nodes that no longer exist
        self.queues: dict[str, dict[str, Any]] = {}  # Volcano Queues by name
        # node -> {lock annotation: its value}, as a scheduler writes them
        self.locks: dict[str, dict[str, str]] = {}
        # (namespace, pod, container) -> its log, as the API server gives it
        self.logs: dict[tuple[str, str, str], bytes] = {}

    def _maybe_fail(self, method: str) -> None:
        error = self.errors.get(method)
        if error is not None:
            raise error

    def namespace_exists(self, name: str) -> bool:
        self.calls.append(("namespace_exists", "", name))
        self._maybe_fail("namespace_exists")
        return self.namespace_names is None or name in self.namespace_names

    def namespaces(self) -> set[str]:
        self.calls.append(("namespaces", "", ""))
        self._maybe_fail("namespaces")
        if self.namespace_names is None:
            return _EveryName()
        return set(self.namespace_names)

    def create_pod(self, namespace: str, body: dict[str, Any]) -> dict[str, Any]:
        from apps.scheduling.kube import PodExists

        name = body["metadata"]["name"]
        self.calls.append(("create_pod", namespace, name))
        self._maybe_fail("create_pod")
        if (namespace, name) in self.pods:
            raise PodExists(copy.deepcopy(self.pods[(namespace, name)]))
        pod = copy.deepcopy(body)
        pod.setdefault("status", {"phase": "Pending"})
        self.pods[(namespace, name)] = pod
        if self.on_create:
            self.on_create(pod)
        return pod

    def get_pod(self, namespace: str, name: str) -> dict[str, Any] | None:
        self.calls.append(("get_pod", namespace, name))
        self._maybe_fail("get_pod")
        pod = self.pods.get((namespace, name))
        return copy.deepcopy(pod) if pod else None

    def ended_pods(self, label_selector: str) -> list[dict[str, Any]]:
        self.calls.append(("ended_pods", "", label_selector))
        self._maybe_fail("ended_pods")
        key, value = label_selector.split("=", 1)
        return [
            copy.deepcopy(pod)
            for pod in self.pods.values()
            if (pod.get("status") or {}).get("phase") not in ("Pending", "Running")
            and ((pod.get("metadata") or {}).get("labels") or {}).get(key) == value
        ]

    def delete_pod(
        self, namespace: str, name: str, *, grace_seconds: int | None = None
    ) -> bool:
        self.calls.append(("delete_pod", namespace, name))
        self._maybe_fail("delete_pod")
        return self.pods.pop((namespace, name), None) is not None

    def patch_pod_annotations(
        self, namespace: str, name: str, annotations: dict[str, str]
    ) -> bool:
        self.calls.append(("patch_pod_annotations", namespace, name))
        self._maybe_fail("patch_pod_annotations")
        pod = self.pods.get((namespace, name))
        if pod is None:
            return False
        pod.setdefault("metadata", {}).setdefault("annotations", {}).update(annotations)
        return True

    def evict_pod(self, namespace: str, name: str) -> tuple[str, str]:
        self.calls.append(("evict_pod", namespace, name))
        self._maybe_fail("evict_pod")
        if name in self.blocked:
            return (
                "blocked",
                "Cannot evict pod as it would violate the pod's disruption budget.",
            )
        if self.pods.pop((namespace, name), None) is None:
            return "gone", ""
        return "evicted", ""

    def create_event(self, namespace: str, body: dict[str, Any]) -> None:
        self.calls.append(("create_event", namespace, body["involvedObject"]["name"]))
        self._maybe_fail("create_event")
        self.events.append(copy.deepcopy(body))

    def node_taint(self, node: str, taint: dict[str, str]) -> bool:
        self.calls.append(("node_taint", node, taint["key"]))
        self._maybe_fail("node_taint")
        if node in self.gone_nodes:
            return False
        kept = [t for t in self.taints.get(node, []) if t["key"] != taint["key"]]
        self.taints[node] = [*kept, dict(taint)]
        return True

    def node_untaint(self, node: str, *keys: str) -> bool:
        self.calls.append(("node_untaint", node, *keys))
        self._maybe_fail("node_untaint")
        if node in self.gone_nodes:
            return False
        self.taints[node] = [
            t for t in self.taints.get(node, []) if t["key"] not in keys
        ]
        return True

    def node_locks_release(self, node: str, stale: Any) -> dict[str, Any]:
        from datetime import datetime

        self.calls.append(("node_locks_release", node, ""))
        self._maybe_fail("node_locks_release")
        held = self.locks.get(node, {})
        gone = {
            key: datetime.fromisoformat(value.split(",")[0])
            for key, value in held.items()
            if stale(key, value)
        }
        self.locks[node] = {k: v for k, v in held.items() if k not in gone}
        return gone

    def create_queue(self, body: dict[str, Any]) -> dict[str, Any]:
        from apps.scheduling.kube import KubeError

        name = body["metadata"]["name"]
        self.calls.append(("create_queue", "", name))
        self._maybe_fail("create_queue")
        if name in self.queues:
            raise KubeError(409, f'queues "{name}" already exists', transient=False)
        self.queues[name] = copy.deepcopy(body)
        return copy.deepcopy(body)

    def pod_log(self, namespace: str, name: str, params: Any) -> bytes:
        from apps.scheduling.kube import KubeError

        self.calls.append(("pod_log", namespace, name))
        self._maybe_fail("pod_log")
        if (namespace, name) not in self.pods:
            raise KubeError(404, f'pods "{name}" not found', transient=False)
        return self.logs.get((namespace, name, params.get("container", "")), b"")

    def get_queue(self, name: str) -> dict[str, Any] | None:
        self.calls.append(("get_queue", "", name))
        self._maybe_fail("get_queue")
        return copy.deepcopy(self.queues.get(name))

    def replace_queue(self, name: str, body: dict[str, Any]) -> dict[str, Any]:
        self.calls.append(("replace_queue", "", name))
        self._maybe_fail("replace_queue")
        self.queues[name] = copy.deepcopy(body)
        return copy.deepcopy(body)

    def close(self) -> None:
        pass

    def add_pod(self, namespace: str, name: str, **status: Any) -> dict[str, Any]:
        pod = {
            "metadata": {"name": name, "namespace": namespace, "labels": {}},
            "spec": {"nodeName": "n1"},
            "status": {"phase": "Running", **status},
        }
        self.pods[(namespace, name)] = pod
        return pod


class World:
    """Builders for a cluster's rows: nodes, chips, slices, priority classes, requests."""

    def __init__(self, cluster: Any) -> None:
        self.cluster = cluster
        self._slice = 0

    def priority_classes(self) -> None:
        from apps.inventory.models import PriorityClass

        for name, value in (
            ("batch-low", 100),
            ("batch-medium", 1000),
            ("inference-high", 100000),
        ):
            PriorityClass.objects.get_or_create(
                cluster=self.cluster, name=name, defaults={"value": value}
            )

    def queue(self, name: str, namespaces: tuple[str, ...] = ("ci",), **fields: Any):
        """A queue whose pod policy allows ``namespaces`` (the tests' requests use ci).

        Open to all unless ``open_to_all=False`` is given: membership has tests
        of its own (tests/scheduling/test_queue_access.py).
        """
        from apps.scheduling.models import Queue

        queue, _ = Queue.objects.update_or_create(
            cluster=self.cluster,
            name=name,
            defaults={
                "allowed_namespaces": list(namespaces),
                "open_to_all": True,
                **fields,
            },
        )
        return queue

    def chips(
        self,
        common_word: str = "Ascend310P",
        count: int = 1,
        node: str = "n1",
        **extra: Any,
    ) -> list[Any]:
        from apps.inventory.models import Chip, Node

        sizes = {
            "Ascend310P": {"slots": 7, "memory": 21527, "aicore": 8, "aicpu": 7},
            "Ascend910B4": {"slots": 4, "memory": 32768, "aicore": 20, "aicpu": 7},
        }[common_word]
        row, _ = Node.objects.get_or_create(
            cluster=self.cluster,
            name=node,
            defaults={"ready": True, "labels": {"kubernetes.io/hostname": node}},
        )
        start = Chip.objects.filter(node=row, common_word=common_word).count()
        return [
            Chip.objects.create(
                cluster=self.cluster,
                node=row,
                common_word=common_word,
                uuid=f"{node}-{common_word}-{start + i}",
                index=start + i,
                healthy=True,
                **{**sizes, **extra},
            )
            for i in range(count)
        ]

    def slice(
        self,
        chip: Any,
        pod: str,
        template: str,
        *,
        namespace: str = "default",
        priority: int = 100,
        priority_class: str = "batch-low",
        age_seconds: float = 60,
    ) -> Any:
        from django.utils import timezone

        from apps.inventory.models import Slice

        shapes = {
            "vir01": (3072, 1, 1),
            "vir02": (6144, 2, 2),
            "vir04": (12288, 4, 4),
            "vir05_1c_8g": (8192, 5, 1),
            "vir10_3c_16g": (16384, 10, 3),
        }
        memory, aicore, aicpu = shapes[template]
        return Slice.objects.create(
            cluster=self.cluster,
            chip=chip,
            chip_uuid=chip.uuid,
            common_word=chip.common_word,
            namespace=namespace,
            pod_name=pod,
            node_name=chip.node.name,
            template=template,
            memory=memory,
            aicore=aicore,
            aicpu=aicpu,
            priority=priority,
            priority_class=priority_class,
            phase="Running",
            started_at=timezone.now() - timedelta(seconds=age_seconds),
        )

    def request(self, actor: Any, **fields: Any) -> Any:
        from apps.scheduling.services.requests import request_create

        data = {
            "cluster": self.cluster.pk,
            "namespace": "ci",
            "chip_type": "Ascend310P",
            "memory": 5000,
            "priority": "batch-medium",
            "workload": {"image": "busybox", "command": ["sleep", "5"]},
            **fields,
        }
        request, _ = request_create(actor=actor, **data)
        return request


def run_pass(cluster: Any, **kwargs: Any) -> Any:
    """One scheduling pass (reconcile, reserve, admit), asserting it got the lock."""
    from apps.scheduling.passes import scheduling_pass

    report = scheduling_pass(cluster.pk, **kwargs)
    assert report is not None, "the pass lock was taken"
    return report
