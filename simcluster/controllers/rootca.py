"""kube-controller-manager's root-ca-cert-publisher: ``kube-root-ca.crt`` everywhere.

Every namespace of a real cluster holds a ConfigMap ``kube-root-ca.crt`` whose
``ca.crt`` is the cluster's CA bundle (pods mount it with their projected
service-account token). The controller creates it in each new namespace, puts
it back when it is deleted, and restores its data when it is edited.
"""

from __future__ import annotations

from simcluster import errors, resources
from simcluster.controllers.base import Controller
from simcluster.store import Store, WatchEvent

NAME = "kube-root-ca.crt"
KEY = "ca.crt"
# What the real controller writes on its ConfigMaps.
ANNOTATION = "kubernetes.io/description"
DESCRIPTION = (
    "Contains a CA bundle that can be used to verify the kube-apiserver when "
    "using internal endpoints such as the internal service IP or "
    "kubernetes.default.svc. No other usage is guaranteed across distributions "
    "of Kubernetes clusters."
)


class RootCaPublisher(Controller):
    """Keeps ``kube-root-ca.crt`` in every namespace, as the real controller does."""

    name = "root-ca-cert-publisher"

    def __init__(self, store: Store, ca_pem: str) -> None:
        self.store = store
        self.ca_pem = ca_pem

    def resync(self) -> None:
        _, namespaces = self.store.list(resources.NAMESPACE)
        for stored in namespaces:
            self._ensure(stored.obj["metadata"]["name"])

    def on_events(self, events: list[WatchEvent]) -> None:
        for event in events:
            if event.res_key == resources.NAMESPACE.key and event.type == "ADDED":
                self._ensure(event.obj["metadata"]["name"])
            elif (
                event.res_key == resources.CONFIGMAP.key
                and event.obj["metadata"].get("name") == NAME
            ):
                self._ensure(event.namespace)

    def _ensure(self, namespace: str) -> None:
        namespace_obj = self.store.get(resources.NAMESPACE, "", namespace)
        if namespace_obj is None or namespace_obj.obj["metadata"].get(
            "deletionTimestamp"
        ):
            return
        current = self.store.get(resources.CONFIGMAP, namespace, NAME)
        if current is not None and (current.obj.get("data") or {}) == {
            KEY: self.ca_pem
        }:
            return
        body = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": NAME,
                "namespace": namespace,
                "annotations": {ANNOTATION: DESCRIPTION},
            },
            "data": {KEY: self.ca_pem},
        }
        try:
            if current is None:
                self.store.create(resources.CONFIGMAP, body)
            else:
                updated = dict(current.obj)
                updated["data"] = body["data"]
                self.store.update(resources.CONFIGMAP, updated)
        except errors.ApiError:
            pass  # raced with a client; the next event brings us back
