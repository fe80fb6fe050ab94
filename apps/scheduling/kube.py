"""The few calls scheduling makes to a cluster's API server, behind one small interface.

Admission, reconciliation and eviction talk to ``ClusterOps``; production uses
``KubeClusterOps`` (raw JSON over the ``kubernetes`` client, like the rest of
the portal), tests swap in a fake through ``ops_for``. Every failure becomes a
``KubeError`` that says whether trying again later can help, so callers decide
between "retry on the next pass" and "this request failed" without parsing
HTTP statuses themselves.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, Literal, Protocol

from kubernetes import client
from kubernetes.client.rest import ApiException
from kubernetes.config.config_exception import ConfigException
from urllib3.exceptions import HTTPError

from apps.common.exceptions import ValidationFailed
from apps.inventory.hami.annotations import node_locks
from apps.inventory.kube import api_client_for, kube_json
from apps.inventory.models import Cluster

Eviction = Literal["evicted", "gone", "blocked"]
VOLCANO_QUEUES_PATH = "/apis/scheduling.volcano.sh/v1beta1/queues"


class KubeError(Exception):
    """A call failed; ``transient`` says whether the same call may succeed later.

    Attributes:
        status: The HTTP status, or None when the server was not reached.
        message: The server's message (or the transport error).
        transient: True for 429, 5xx, timeouts and unreachable servers.
    """

    def __init__(self, status: int | None, message: str, *, transient: bool) -> None:
        super().__init__(f"{status or 'no answer'}: {message}")
        self.status = status
        self.message = message
        self.transient = transient


class PodExists(Exception):
    """Creating a pod answered 409 AlreadyExists; ``pod`` is the existing one (or None)."""

    def __init__(self, pod: dict[str, Any] | None) -> None:
        super().__init__("pod already exists")
        self.pod = pod


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

    def node_untaint(self, node: str, key: str) -> bool:
        """Remove the node's taints of ``key``; False when the node is gone."""
        ...

    def node_locks_release(
        self, node: str, taken_before: datetime
    ) -> dict[str, datetime]:
        """Remove the node's scheduler locks taken before ``taken_before``
        (``hami.node_locks``); returns those removed. A lock that changed
        meanwhile (taken again) stays."""
        ...

    def create_queue(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """Create a Volcano Queue (cluster-scoped); 409 when it exists."""
        ...

    def replace_queue(self, name: str, body: Mapping[str, Any]) -> dict[str, Any]:
        """Replace a Volcano Queue (PUT, guarded by the body's resourceVersion)."""
        ...

    def close(self) -> None:
        """Release the connection."""
        ...


def _error(exc: Exception) -> KubeError:
    if isinstance(exc, ApiException):
        status = exc.status or None
        message = exc.reason or ""
        if exc.body:
            # The API server's Status says what went wrong better than the reason.
            with contextlib.suppress(ValueError, AttributeError):
                message = json.loads(exc.body).get("message") or message
        transient = status is None or status == 429 or status >= 500
        return KubeError(status, message, transient=transient)
    return KubeError(None, f"{type(exc).__name__}: {exc}", transient=True)


class KubeClusterOps:
    """``ClusterOps`` over the cluster's API server (one connection per instance)."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self._api: client.ApiClient | None = None

    def _client(self) -> client.ApiClient:
        if self._api is None:
            try:
                self._api = api_client_for(self.cluster)
            except ValidationFailed as exc:  # no connection configured
                raise KubeError(None, exc.message, transient=True) from exc
            except (ConfigException, OSError, ValueError, TypeError) as exc:
                raise KubeError(
                    None, f"cannot load the connection: {exc}", transient=True
                ) from exc
        return self._api

    def _call(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        content_type: str = "application/json",
        query: Mapping[str, str] | None = None,
    ) -> dict[str, Any]:
        try:
            return kube_json(
                self._client(),
                method,
                path,
                body=body,
                content_type=content_type,
                query=query,
            )
        except (ApiException, HTTPError, OSError, ValueError) as exc:
            raise _error(exc) from exc

    def namespace_exists(self, name: str) -> bool:
        try:
            self._call("GET", f"/api/v1/namespaces/{name}")
        except KubeError as exc:
            if exc.status == 404:
                return False
            raise
        return True

    def namespaces(self) -> set[str]:
        # Names only: the metadata-only table would do, but a namespace list is small.
        answer = self._call("GET", "/api/v1/namespaces")
        return {
            str((item.get("metadata") or {}).get("name", ""))
            for item in answer.get("items") or []
        }

    @staticmethod
    def _pods(namespace: str) -> str:
        return f"/api/v1/namespaces/{namespace}/pods"

    def create_pod(self, namespace: str, body: Mapping[str, Any]) -> dict[str, Any]:
        try:
            return self._call("POST", self._pods(namespace), body=dict(body))
        except KubeError as exc:
            if exc.status != 409:
                raise
        name = str((body.get("metadata") or {}).get("name", ""))
        raise PodExists(self.get_pod(namespace, name))

    def get_pod(self, namespace: str, name: str) -> dict[str, Any] | None:
        try:
            return self._call("GET", f"{self._pods(namespace)}/{name}")
        except KubeError as exc:
            if exc.status == 404:
                return None
            raise

    def delete_pod(
        self, namespace: str, name: str, *, grace_seconds: int | None = None
    ) -> bool:
        query = (
            {} if grace_seconds is None else {"gracePeriodSeconds": str(grace_seconds)}
        )
        try:
            self._call("DELETE", f"{self._pods(namespace)}/{name}", query=query)
        except KubeError as exc:
            if exc.status == 404:
                return False
            raise
        return True

    def patch_pod_annotations(
        self, namespace: str, name: str, annotations: Mapping[str, str]
    ) -> bool:
        try:
            self._call(
                "PATCH",
                f"{self._pods(namespace)}/{name}",
                body={"metadata": {"annotations": dict(annotations)}},
                content_type="application/merge-patch+json",
            )
        except KubeError as exc:
            if exc.status == 404:
                return False
            raise
        return True

    def evict_pod(self, namespace: str, name: str) -> tuple[Eviction, str]:
        body = {
            "apiVersion": "policy/v1",
            "kind": "Eviction",
            "metadata": {"name": name, "namespace": namespace},
        }
        try:
            self._call("POST", f"{self._pods(namespace)}/{name}/eviction", body=body)
        except KubeError as exc:
            if exc.status == 404:
                return "gone", ""
            if exc.status == 429:  # a PodDisruptionBudget says not now: never force
                return "blocked", exc.message
            raise
        return "evicted", ""

    def create_event(self, namespace: str, body: Mapping[str, Any]) -> None:
        self._call("POST", f"/api/v1/namespaces/{namespace}/events", body=dict(body))

    def node_taint(self, node: str, taint: Mapping[str, str]) -> bool:
        return self._edit_taints(
            node,
            lambda taints: (
                [t for t in taints if t.get("key") != taint["key"]] + [dict(taint)]
            ),
        )

    def node_untaint(self, node: str, key: str) -> bool:
        return self._edit_taints(
            node, lambda taints: [t for t in taints if t.get("key") != key]
        )

    def node_locks_release(
        self, node: str, taken_before: datetime
    ) -> dict[str, datetime]:
        path = f"/api/v1/nodes/{node}"
        try:
            current = self._call("GET", path)
        except KubeError as exc:
            if exc.status == 404:
                return {}
            raise
        annotations = (current.get("metadata") or {}).get("annotations") or {}
        stale = {
            key: at for key, at in node_locks(annotations).items() if at < taken_before
        }
        if not stale:
            return {}
        # Each removal is preceded by a test of the value read: if a scheduler
        # released and took the lock again meanwhile, the whole patch fails
        # and the live lock stays.
        patch: list[dict[str, Any]] = []
        for key in stale:
            pointer = "/metadata/annotations/" + key.replace("~", "~0").replace(
                "/", "~1"
            )
            patch += [
                {"op": "test", "path": pointer, "value": annotations[key]},
                {"op": "remove", "path": pointer},
            ]
        try:
            self._call(
                "PATCH", path, body=patch, content_type="application/json-patch+json"
            )
        except KubeError as exc:
            if exc.status in (404, 409, 422):
                return {}
            raise
        return stale

    def _edit_taints(
        self,
        node: str,
        edit: Callable[[list[dict[str, Any]]], list[dict[str, Any]]],
    ) -> bool:
        # A merge patch replaces the whole list, so it carries the
        # resourceVersion it was made from: a concurrent change (the node
        # lifecycle controller taints nodes too) answers 409, and we redo it.
        path = f"/api/v1/nodes/{node}"
        for _ in range(5):
            try:
                current = self._call("GET", path)
            except KubeError as exc:
                if exc.status == 404:
                    return False
                raise
            taints = list((current.get("spec") or {}).get("taints") or [])
            wanted = edit(taints)
            if wanted == taints:
                return True
            try:
                self._call(
                    "PATCH",
                    path,
                    body={
                        "metadata": {
                            "resourceVersion": current["metadata"]["resourceVersion"]
                        },
                        "spec": {"taints": wanted or None},
                    },
                    content_type="application/merge-patch+json",
                )
            except KubeError as exc:
                if exc.status == 409:
                    continue
                if exc.status == 404:
                    return False
                raise
            return True
        raise KubeError(
            409, f"node {node} kept changing under its taint edit", transient=True
        )

    def create_queue(self, body: Mapping[str, Any]) -> dict[str, Any]:
        return self._call("POST", VOLCANO_QUEUES_PATH, body=dict(body))

    def replace_queue(self, name: str, body: Mapping[str, Any]) -> dict[str, Any]:
        return self._call("PUT", f"{VOLCANO_QUEUES_PATH}/{name}", body=dict(body))

    def close(self) -> None:
        if self._api is not None:
            self._api.close()
            self._api = None


def ops_for(cluster: Cluster) -> ClusterOps:
    """The ClusterOps of ``cluster`` (tests replace this function with a fake)."""
    return KubeClusterOps(cluster)
