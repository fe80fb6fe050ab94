"""What sync lists and watches in a cluster, and where each result goes."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from apps.inventory.models import Cluster
from apps.inventory.nodeconfig.selectors import NODE_CONFIG_TARGET
from apps.inventory.sync.derive import slim_pod

Events = Sequence[tuple[str, Mapping[str, Any]]]
#: The key (and SyncCursor resource) of the Volcano Queue stream.
VOLCANO_QUEUES = "volcano-queues"


@dataclass(frozen=True)
class Target:
    """One list+watch stream: a path, an optional name, and its two handlers."""

    key: str
    path: str
    name: str | None  # a single object (fieldSelector metadata.name)
    apply_full: Callable[[Any, Sequence[Mapping[str, Any]]], None]
    apply_events: Callable[[Any, Events], None]
    kind: str = ""  # of its objects (list items carry no kind), for skipped objects
    # A resource the cluster may not serve (a CRD): a 404 on its list is
    # recorded as "not served" on the cursor, not as an error.
    optional: bool = False
    # Maps each listed object as its page arrives, keeping only what the
    # handlers read (pods: derive.slim_pod); None keeps objects whole.
    keep: Callable[[Any], Any] | None = None

    @property
    def field_selector(self) -> str | None:
        return f"metadata.name={self.name}" if self.name else None


def _objects(
    kind: str, path: str, name: str
) -> tuple[Callable[..., None], Callable[..., None]]:
    namespace = path.split("/namespaces/", 1)[1].split("/", 1)[0]

    def full(handler: Any, items: Sequence[Mapping[str, Any]]) -> None:
        handler.replace_objects(kind, namespace, name, items)

    def events(handler: Any, batch: Events) -> None:
        handler.apply_object_events(kind, batch)

    return full, events


def targets_for(cluster: Cluster) -> list[Target]:
    """The streams of one cluster: the lists of the inventory, then the
    single control-plane objects (their names from settings)."""
    return [*_listed_targets(), *_single_object_targets(cluster)]


def _listed_targets() -> list[Target]:
    """Whole lists: nodes, pods, events, PriorityClasses, Volcano's Queues."""
    return [
        Target(
            "nodes",
            "/api/v1/nodes",
            None,
            lambda h, i: h.replace_nodes(i),
            lambda h, e: h.apply_node_events(e),
            "Node",
        ),
        Target(
            "pods",
            "/api/v1/pods",
            None,
            lambda h, i: h.replace_pods(i),
            lambda h, e: h.apply_pod_events(e),
            "Pod",
            keep=slim_pod,
        ),
        Target(
            "events",
            "/api/v1/events",
            None,
            lambda h, i: h.apply_scheduling_events([("ADDED", x) for x in i]),
            lambda h, e: h.apply_scheduling_events(e),
            "Event",
        ),
        Target(
            "priorityclasses",
            "/apis/scheduling.k8s.io/v1/priorityclasses",
            None,
            lambda h, i: h.replace_priority_classes(i),
            lambda h, e: h.apply_priority_class_events(e),
            "PriorityClass",
        ),
        # Every Volcano Queue: scheduling holds requests whose queue is missing
        # or not Open, and keeps the portal's queues in step with them.
        Target(
            VOLCANO_QUEUES,
            "/apis/scheduling.volcano.sh/v1beta1/queues",
            None,
            lambda h, i: h.replace_volcano_queues(i),
            lambda h, e: h.apply_volcano_queue_events(e),
            "Queue",
            optional=True,
        ),
    ]


def _single_object_targets(cluster: Cluster) -> list[Target]:
    """One object each: the device config, Volcano's scheduler conf, the device
    plugin's node config and DaemonSet and the watched Deployments (the schedulers)."""
    volcano_ns, volcano_cm = settings.VOLCANO_SCHEDULER_CONFIGMAP.split("/", 1)
    plugin_ns, plugin_ds = settings.DEVICE_PLUGIN_DAEMONSET.split("/", 1)
    node_ns, node_cm = settings.DEVICE_NODE_CONFIGMAP.split("/", 1)
    single = [
        (
            "configmap:device-config",
            "ConfigMap",
            f"/api/v1/namespaces/{cluster.device_config_namespace}/configmaps",
            cluster.device_config_name,
        ),
        (
            "configmap:volcano-scheduler",
            "ConfigMap",
            f"/api/v1/namespaces/{volcano_ns}/configmaps",
            volcano_cm,
        ),
        # The device plugin's per-node config (apps.inventory.nodeconfig).
        (
            NODE_CONFIG_TARGET,
            "ConfigMap",
            f"/api/v1/namespaces/{node_ns}/configmaps",
            node_cm,
        ),
        (
            "daemonset:device-plugin",
            "DaemonSet",
            f"/apis/apps/v1/namespaces/{plugin_ns}/daemonsets",
            plugin_ds,
        ),
    ]
    for ref in settings.WATCHED_DEPLOYMENTS:
        namespace, name = ref.split("/", 1)
        single.append(
            (
                f"deployment:{name}",
                "Deployment",
                f"/apis/apps/v1/namespaces/{namespace}/deployments",
                name,
            )
        )
    targets = []
    for key, kind, path, name in single:
        full, events = _objects(kind, path, name)
        targets.append(Target(key, path, name, full, events, kind))
    return targets
