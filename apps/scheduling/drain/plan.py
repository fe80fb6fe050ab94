"""What a drain would do: every pod holding a slice on its chips (reads only).

The pods come from sync's mirror (Slices); which of them are the portal's
own from the requests holding them; their labels and the PodDisruptionBudgets
that cover them from the cluster itself (one list of the node's pods, one of
the budgets), so the plan shows what the Eviction API will decide now.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from apps.inventory.chipstate import chip_state
from apps.inventory.kube import cluster_gateway
from apps.inventory.models import Chip, Cluster, Slice
from apps.scheduling.choices import HOLDING_STATES
from apps.scheduling.drain.pdbs import covering, what_happens
from apps.scheduling.models import Request

PodKey = tuple[str, str]
PORTAL_OUTCOME = (
    "evicted at once; request {request} goes back to Pending in queue {queue} "
    "and is placed again, never on a cordoned chip"
)
FOREIGN_OUTCOME = "evicted once an admin approves the drain"


@dataclass
class ClusterFacts:
    """What the cluster says now about the pods of one node."""

    labels: dict[PodKey, dict[str, str]] = field(default_factory=dict)
    budgets: list[dict[str, Any]] = field(default_factory=list)


def cluster_facts(cluster: Cluster, node: str) -> ClusterFacts:
    """The labels of the node's pods and every PodDisruptionBudget.

    Raises:
        ClusterUnavailable: The API server could not be read (503).
    """
    with cluster_gateway(cluster) as gateway:
        pods = gateway.call(
            "GET", "/api/v1/pods", query={"fieldSelector": f"spec.nodeName={node}"}
        )
        budgets = gateway.call("GET", "/apis/policy/v1/poddisruptionbudgets")
    labels = {
        (meta.get("namespace", ""), meta.get("name", "")): dict(
            meta.get("labels") or {}
        )
        for meta in ((p.get("metadata") or {}) for p in pods.get("items") or [])
    }
    return ClusterFacts(labels=labels, budgets=list(budgets.get("items") or []))


def planned_pods(
    cluster: Cluster, chip_uuids: Sequence[str], facts: ClusterFacts
) -> list[dict[str, Any]]:
    """One entry per pod with a slice on ``chip_uuids`` (a drain's victims)."""
    pods: dict[PodKey, dict[str, Any]] = {}
    for s in Slice.objects.filter(cluster=cluster, chip_uuid__in=list(chip_uuids)):
        entry = pods.setdefault(
            (s.namespace, s.pod_name),
            {
                "namespace": s.namespace,
                "pod": s.pod_name,
                "node": s.node_name,
                "chips": [],
                "templates": [],
                "memory": 0,
                "priority": s.priority,
                "priority_class": s.priority_class,
            },
        )
        entry["chips"] = sorted({*entry["chips"], s.chip_uuid})
        entry["templates"].append(s.template)
        entry["memory"] += s.memory
    requests = _requests_of(cluster, set(pods))
    for key, entry in pods.items():
        request = requests.get(key)
        entry["foreign"] = request is None
        entry["request"] = request.pk if request else None
        entry["request_queue"] = request.queue.name if request else None
        entry["pdbs"] = covering(key[0], facts.labels.get(key, {}), facts.budgets)
        first = (
            PORTAL_OUTCOME.format(request=request.pk, queue=request.queue.name)
            if request
            else FOREIGN_OUTCOME
        )
        entry["outcome"] = what_happens(entry["pdbs"], first)
    return [pods[key] for key in sorted(pods)]


def _requests_of(cluster: Cluster, keys: set[PodKey]) -> dict[PodKey, Request]:
    """The portal's requests holding these pods (by namespace and pod name)."""
    found = Request.objects.filter(
        cluster=cluster,
        state__in=HOLDING_STATES,
        pod_name__in=sorted({pod for _, pod in keys}),
    ).select_related("queue")
    return {
        (r.namespace, r.pod_name): r for r in found if (r.namespace, r.pod_name) in keys
    }


def drain_plan(
    *, cluster: Cluster, scope: str, node: str, chips: Sequence[Chip]
) -> dict[str, Any]:
    """The plan ``GET .../drain/`` shows: the chips, their pods, the open drain.

    Raises:
        ClusterUnavailable: The API server could not be read (503).
    """
    facts = cluster_facts(cluster, node)
    pods = planned_pods(cluster, [c.uuid for c in chips], facts)
    open_drains = sorted({c.active_drain for c in chips if c.active_drain})
    return {
        "cluster": cluster.pk,
        "scope": scope,
        "node": node,
        "chips": [
            {
                "id": c.pk,
                "uuid": c.uuid,
                "index": c.index,
                "common_word": c.common_word,
                "state": chip_state(c).value,
            }
            for c in chips
        ],
        "drain": open_drains[0] if open_drains else None,
        "needs_approval": any(p["foreign"] for p in pods),
        "pods": pods,
    }
