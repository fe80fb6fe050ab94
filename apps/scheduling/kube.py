"""The calls scheduling makes to a cluster, as the interface its code is typed by.

Admission, reconciliation, eviction and the queue mirror talk to a
``ClusterOps``: in production the cluster's :class:`~apps.inventory.kube.Gateway`
(the one gateway every part of the portal uses), in tests a fake through
``ops_for``. Every failure is a ``KubeError`` that says whether trying again
later can help, so callers decide between "retry on the next pass" and "this
request failed" without parsing HTTP statuses themselves.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, Protocol

from apps.inventory.kube import Eviction, KubeError, PodExists, gateway_for
from apps.inventory.models import Cluster

__all__ = ["ClusterOps", "Eviction", "KubeError", "PodExists", "ops_for"]


class ClusterOps(Protocol):
    """What scheduling needs from a cluster: namespaces, pods, events, node taints,
    Volcano Queues."""

    def namespace_exists(self, name: str) -> bool:
        """Whether the namespace exists (a GET of it; 404 is False)."""
        ...

    def namespaces(self) -> set[str]:
        """The names of every namespace of the cluster (one LIST)."""
        ...

    def create_pod(self, namespace: str, body: Mapping[str, Any]) -> dict[str, Any]:
        """Create a pod; raises PodExists on 409 AlreadyExists."""
        ...

    def get_pod(self, namespace: str, name: str) -> dict[str, Any] | None:
        """The pod, or None when it does not exist."""
        ...

    def delete_pod(
        self, namespace: str, name: str, *, grace_seconds: int | None = None
    ) -> bool:
        """Delete a pod; False when it was already gone."""
        ...

    def ended_pods(self, label_selector: str) -> list[dict[str, Any]]:
        """Every pod of the cluster that has ended (Succeeded, Failed or
        Unknown) matching ``label_selector``: one list call, filtered by the
        API server."""
        ...

    def patch_pod_annotations(
        self, namespace: str, name: str, annotations: Mapping[str, str]
    ) -> bool:
        """Merge annotations into a pod; False when it does not exist."""
        ...

    def evict_pod(self, namespace: str, name: str) -> tuple[Eviction, str]:
        """Evict through the Eviction API: evicted, gone, or blocked (429) with why."""
        ...

    def create_event(self, namespace: str, body: Mapping[str, Any]) -> None:
        """Record a core/v1 Event."""
        ...

    def node_taint(self, node: str, taint: Mapping[str, str]) -> bool:
        """Add a taint (replacing one of its key); False when the node is gone."""
        ...

    def node_untaint(self, node: str, *keys: str) -> bool:
        """Remove the node's taints of any of ``keys``; False when the node is gone."""
        ...

    def node_locks_release(
        self, node: str, stale: Callable[[str, str], bool]
    ) -> dict[str, datetime]:
        """Remove the node's scheduler locks (``hami.node_locks``) for which
        ``stale(key, value)`` is true; returns those removed. A lock that
        changed meanwhile (taken again) stays."""
        ...

    def create_queue(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """Create a Volcano Queue (cluster-scoped); 409 when it exists."""
        ...

    def pod_log(self, namespace: str, name: str, params: Mapping[str, str]) -> bytes:
        """A container's log (``pods/log`` with ``params`` in the API's names)."""
        ...

    def get_queue(self, name: str) -> dict[str, Any] | None:
        """The Volcano Queue as the API server has it now (None: not there)."""
        ...

    def replace_queue(self, name: str, body: Mapping[str, Any]) -> dict[str, Any]:
        """Replace a Volcano Queue (PUT, guarded by the body's resourceVersion)."""
        ...

    def close(self) -> None:
        """Release the connection."""
        ...


def ops_for(cluster: Cluster) -> ClusterOps:
    """The ClusterOps of ``cluster`` (tests replace this function with a fake)."""
    return gateway_for(cluster)
