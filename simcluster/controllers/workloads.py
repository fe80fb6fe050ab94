"""Minimal Deployment and DaemonSet controllers, PDB status, owner garbage collection.

Deployment pods are owned by the Deployment directly (no ReplicaSets). A change of
``spec.template`` (e.g. ``kubectl rollout restart``) creates new pods; old ones are
deleted as new ones become Ready.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

from simcluster import podutil, resources
from simcluster.controllers.base import Controller
from simcluster.resources import ResourceType
from simcluster.selectors import match_label_selector
from simcluster.store import Obj, Store, WatchEvent

HASH_LABEL = {
    "Deployment": "pod-template-hash",
    "DaemonSet": "controller-revision-hash",
}
_WATCHED = {
    resources.POD.key,
    resources.DEPLOYMENT.key,
    resources.DAEMONSET.key,
    resources.NODE.key,
    resources.PDB.key,
}


def template_hash(owner: Obj) -> str:
    """A stable short hash of ``spec.template``, like the upstream pod-template-hash."""
    template = (owner.get("spec") or {}).get("template") or {}
    digest = hashlib.sha256(json.dumps(template, sort_keys=True).encode()).hexdigest()
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    number = int(digest[:16], 16)
    chars = []
    for _ in range(10):
        number, rest = divmod(number, len(alphabet))
        chars.append(alphabet[rest])
    return "".join(chars)


def pod_from_template(owner: Obj, node: str | None = None) -> Obj:
    """A new pod for a Deployment or DaemonSet (name, labels, ownerReference)."""
    meta = owner["metadata"]
    kind = owner.get("kind", "Deployment")
    template = json.loads(json.dumps((owner.get("spec") or {}).get("template") or {}))
    tmeta = template.get("metadata") or {}
    digest = template_hash(owner)
    labels = dict(tmeta.get("labels") or {})
    labels[HASH_LABEL.get(kind, "pod-template-hash")] = digest
    prefix = f"{meta['name']}-{digest}-" if kind == "Deployment" else f"{meta['name']}-"
    if kind == "DaemonSet":
        labels["pod-template-generation"] = str(meta.get("generation", 1))
    pod: Obj = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": prefix + podutil.random_suffix(),
            "generateName": prefix,
            "namespace": meta.get("namespace", "default"),
            "labels": labels,
            "ownerReferences": [
                {
                    "apiVersion": owner.get("apiVersion", "apps/v1"),
                    "kind": kind,
                    "name": meta["name"],
                    "uid": meta.get("uid", ""),
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": template.get("spec") or {},
    }
    if tmeta.get("annotations"):
        pod["metadata"]["annotations"] = dict(tmeta["annotations"])
    if node:
        pod["spec"]["nodeName"] = node
    return pod


def _owner_uid(pod: Obj) -> str | None:
    for ref in (pod.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return str(ref.get("uid"))
    return None


def _created(pod: Obj) -> str:
    return (pod.get("metadata") or {}).get("creationTimestamp") or ""


class Workloads(Controller):
    """Reconciles Deployments, DaemonSets and PDB statuses after relevant changes."""

    name = "workloads"

    def __init__(
        self,
        store: Store,
        admit_pod: Callable[[Obj], None],
        delete_pod: Callable[[str, str], None],
    ) -> None:
        self.store = store
        self.admit_pod = admit_pod
        self.delete_pod = delete_pod
        self._dirty = True
        self.reconciles = 0  # full passes over every pod (for tests)

    def resync(self) -> None:
        """Reconcile everything on the next tick."""
        self._dirty = True

    def on_events(self, events: list[WatchEvent]) -> None:
        """Nodes, workloads, PDBs, and the pods they own or count, matter.

        A change to any other pod (a label patch on one of 30,000 batch pods)
        does not: reconciling scans every pod, and doing it for each such
        change made the whole simulator crawl under load.
        """
        pdb_namespaces: set[str] | None = None
        for event in events:
            if event.res_key != resources.POD.key:
                if event.res_key in _WATCHED:
                    self._dirty = True
                    return
                continue
            if _owner_uid(event.obj) or (event.prev and _owner_uid(event.prev)):
                self._dirty = True
                return
            if (
                pdb_namespaces is None
            ):  # PDB statuses count every pod of their namespace
                _, pdbs = self.store.list(resources.PDB)
                pdb_namespaces = {p.obj["metadata"].get("namespace", "") for p in pdbs}
            if event.namespace in pdb_namespaces:
                self._dirty = True
                return

    def tick(self, now: float) -> None:
        """Reconcile when something changed."""
        if not self._dirty:
            return
        self._dirty = False
        self.reconciles += 1
        _, pods = self.store.list(resources.POD)
        by_owner: dict[str, list[Obj]] = {}
        for pod in pods:
            uid = _owner_uid(pod.obj)
            if uid is not None:
                by_owner.setdefault(uid, []).append(pod.obj)
        owners: set[str] = set()
        for res, reconcile in (
            (resources.DEPLOYMENT, self._deployment),
            (resources.DAEMONSET, self._daemonset),
        ):
            _, items = self.store.list(res)
            for item in items:
                uid = item.obj["metadata"].get("uid", "")
                owners.add(uid)
                reconcile(
                    item.obj,
                    [p for p in by_owner.get(uid, []) if not podutil.is_terminal(p)],
                )
        for uid, owned in by_owner.items():
            kinds = {
                r.get("kind")
                for p in owned
                for r in p["metadata"].get("ownerReferences", [])
            }
            if uid not in owners and kinds & {"Deployment", "DaemonSet"}:
                for pod in owned:  # garbage collection of orphans
                    if not podutil.is_terminating(pod):
                        self.delete_pod(
                            pod["metadata"]["namespace"], pod["metadata"]["name"]
                        )
        self._pdbs([p.obj for p in pods])

    def _create(self, owner: Obj, node: str | None = None) -> None:
        pod = pod_from_template(owner, node)
        self.admit_pod(pod)
        self.store.create(resources.POD, pod)

    def _deployment(self, deploy: Obj, owned: list[Obj]) -> None:
        digest = template_hash(deploy)
        desired = int((deploy.get("spec") or {}).get("replicas", 1))
        alive = [p for p in owned if not podutil.is_terminating(p)]
        current = sorted(
            (
                p
                for p in alive
                if podutil.labels_of(p).get("pod-template-hash") == digest
            ),
            key=_created,
        )
        old = sorted(
            (
                p
                for p in alive
                if podutil.labels_of(p).get("pod-template-hash") != digest
            ),
            key=_created,
        )
        for _ in range(desired - len(current)):
            self._create(deploy)
        for pod in current[desired:][::-1]:
            self.delete_pod(pod["metadata"]["namespace"], pod["metadata"]["name"])
        current = current[:desired]
        ready_current = sum(1 for p in current if podutil.is_ready(p))
        removable = (
            max(0, ready_current + len(old) - desired) if len(current) >= desired else 0
        )
        for pod in old[:removable]:
            self.delete_pod(pod["metadata"]["namespace"], pod["metadata"]["name"])
        ready = sum(1 for p in alive if podutil.is_ready(p))
        updated_ready = ready_current
        status: dict[str, Any] = {
            "observedGeneration": deploy["metadata"].get("generation", 1),
            "replicas": len(alive),
            "updatedReplicas": len(current),
            "readyReplicas": ready,
            "availableReplicas": ready,
            "unavailableReplicas": max(0, desired - ready),
            "conditions": [
                {
                    "type": "Available",
                    "status": "True" if ready >= desired else "False",
                    "reason": "MinimumReplicasAvailable"
                    if ready >= desired
                    else "MinimumReplicasUnavailable",
                },
                {
                    "type": "Progressing",
                    "status": "True",
                    "reason": "NewReplicaSetAvailable"
                    if updated_ready >= desired and not old
                    else "ReplicaSetUpdated",
                },
            ],
        }
        for key in ("readyReplicas", "availableReplicas", "unavailableReplicas"):
            if not status[key]:
                del status[key]
        self._set_status(resources.DEPLOYMENT, deploy, status)

    def _daemonset(self, ds: Obj, owned: list[Obj]) -> None:
        digest = template_hash(ds)
        template = ((ds.get("spec") or {}).get("template") or {}).get("spec") or {}
        selector = template.get("nodeSelector") or {}
        _, nodes = self.store.list(resources.NODE)
        wanted = [
            n.obj["metadata"]["name"]
            for n in nodes
            if match_label_selector({"matchLabels": selector}, podutil.labels_of(n.obj))
        ]
        on_node: dict[str, list[Obj]] = {}
        for pod in owned:
            on_node.setdefault((pod.get("spec") or {}).get("nodeName", ""), []).append(
                pod
            )
        for node, pods in on_node.items():
            if node not in wanted:
                for pod in pods:
                    if not podutil.is_terminating(pod):
                        self.delete_pod(
                            pod["metadata"]["namespace"], pod["metadata"]["name"]
                        )
        updated = ready = scheduled = 0
        for node in wanted:
            pods = on_node.get(node, [])
            alive = [p for p in pods if not podutil.is_terminating(p)]
            for pod in alive:
                if podutil.labels_of(pod).get("controller-revision-hash") != digest:
                    self.delete_pod(
                        pod["metadata"]["namespace"], pod["metadata"]["name"]
                    )
            alive = [
                p
                for p in alive
                if podutil.labels_of(p).get("controller-revision-hash") == digest
            ]
            if not pods:
                self._create(ds, node)
            if pods:
                scheduled += 1
            updated += len(alive) > 0
            ready += any(podutil.is_ready(p) for p in alive)
        status = {
            "observedGeneration": ds["metadata"].get("generation", 1),
            "desiredNumberScheduled": len(wanted),
            "currentNumberScheduled": scheduled,
            "numberMisscheduled": 0,
            "numberReady": ready,
            "numberAvailable": ready,
            "updatedNumberScheduled": updated,
        }
        if len(wanted) - ready:
            status["numberUnavailable"] = len(wanted) - ready
        self._set_status(resources.DAEMONSET, ds, status)

    def _set_status(self, res: ResourceType, obj: Obj, status: dict[str, Any]) -> None:
        if obj.get("status") == status:
            return
        meta = obj["metadata"]

        def write(current: Obj) -> None:
            current["status"] = status

        self.store.mutate(res, meta.get("namespace", ""), meta["name"], write)

    def _pdbs(self, pods: list[Obj]) -> None:
        _, pdbs = self.store.list(resources.PDB)
        for pdb in pdbs:
            namespace = pdb.obj["metadata"].get("namespace", "")
            status = podutil.pdb_status(
                pdb.obj,
                [p for p in pods if p["metadata"].get("namespace") == namespace],
            )
            old = dict(pdb.obj.get("status") or {})
            if "disruptedPods" in old:
                status["disruptedPods"] = old["disruptedPods"]
            self._set_status(resources.PDB, pdb.obj, status)
