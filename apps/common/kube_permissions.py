"""Every call the portal makes to a cluster's API server, in one place: the RBAC it needs.

``deploy/10-rbac.yaml`` grants the portal's ServiceAccount exactly these
permissions and nothing more. Three tests keep the three in step
(``tests/deploy/``):

- the ClusterRole in ``deploy/`` equals :func:`cluster_role_rules` (same
  verbs, resources and names, nothing extra);
- the portal's real code paths (sync's list and watch of every target, the
  live device-config read and publish, component restarts and their state,
  scheduling's namespace get/list, pod create/get/patch/delete, eviction
  and events, Volcano Queue create/update) run against
  simcluster with the ServiceAccount's token and simcluster enforcing that
  ClusterRole: none is refused, and the calls simcluster logged are exactly
  :data:`PORTAL_CALLS` (a new call fails the test until it is listed here
  and granted; a listed call nobody makes fails it too);
- the code's own entry points are the only ones that talk to clusters:
  ``apps.inventory.sync.kubeapi`` (list, watch) and
  ``apps.inventory.kube.kube_json`` (everything else).

Object names are the defaults of the settings that name them
(``DEVICE_PLUGIN_DAEMONSET``, ``WATCHED_DEPLOYMENTS``,
``VOLCANO_SCHEDULER_CONFIGMAP``, ``DEVICE_NODE_CONFIGMAP``, and each
cluster's device-config ConfigMap, ``kube-system/hami-scheduler-device`` by default): a deployment that changes
them changes the ``resourceNames`` in the ClusterRole too.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

DEVICE_CONFIG = "hami-scheduler-device"
NODE_CONFIG = "hami-device-node-config"
VOLCANO_CONFIG = "volcano-scheduler-configmap"
DEVICE_PLUGIN = "hami-ascend-device-plugin"
RESTARTED_DEPLOYMENTS = ("hami-scheduler", "volcano-scheduler")


@dataclass(frozen=True)
class KubeCall:
    """One kind of request: verb, API group, resource[/subresource], names it is limited to."""

    verb: str
    group: str
    resource: str
    names: tuple[str, ...] = ()
    why: str = ""

    def atoms(self) -> set[tuple[str, str, str, str]]:
        """(group, resource, verb, name or "*") tuples, the unit the tests compare."""
        return {(self.group, self.resource, self.verb, n) for n in self.names or ("*",)}


def _calls(
    verbs: str, group: str, resource: str, why: str, *names: str
) -> list[KubeCall]:
    return [
        KubeCall(verb, group, resource, tuple(names), why) for verb in verbs.split()
    ]


PORTAL_CALLS: tuple[KubeCall, ...] = (
    # sync (apps.inventory.sync.targets): list once, then watch from there
    *_calls("list watch", "", "nodes", "sync: nodes, chip registrations"),
    *_calls("list watch", "", "pods", "sync: slices; restart state lists pods"),
    *_calls("list watch", "", "events", "sync: scheduling events (why pending)"),
    *_calls("list watch", "scheduling.k8s.io", "priorityclasses", "sync: priorities"),
    *_calls(
        "list watch",
        "scheduling.volcano.sh",
        "queues",
        "sync: Volcano Queues (is a request's queue there and Open?)",
    ),
    *_calls(
        "list watch",
        "",
        "configmaps",
        "sync: the device config, the plugin's node config and Volcano's scheduler config",
        DEVICE_CONFIG,
        NODE_CONFIG,
        VOLCANO_CONFIG,
    ),
    *_calls("list watch", "apps", "daemonsets", "sync: plugin health", DEVICE_PLUGIN),
    *_calls(
        "list watch",
        "apps",
        "deployments",
        "sync: scheduler health",
        *RESTARTED_DEPLOYMENTS,
    ),
    # publishing, the live device config and restarts (apps.inventory.deviceconfig.publishing,
    # apps.inventory.deviceconfig.liveconfig, apps.inventory.deviceconfig.restarts)
    *_calls(
        "get update",
        "",
        "configmaps",
        "publish: read live, write guarded by resourceVersion (the node config"
        " too, never created: an absent one is refused with the command to make it)",
        DEVICE_CONFIG,
        NODE_CONFIG,
    ),
    *_calls(
        "get patch", "apps", "daemonsets", "restart the device plugin", DEVICE_PLUGIN
    ),
    *_calls(
        "get patch",
        "apps",
        "deployments",
        "restart the schedulers",
        *RESTARTED_DEPLOYMENTS,
    ),
    # scheduling (apps.inventory.kube.Gateway, as ClusterOps): admission and preemption
    *_calls(
        "get patch",
        "",
        "nodes",
        "preemption: hold the node for the request while its victims leave",
    ),
    *_calls(
        "get list",
        "",
        "namespaces",
        "a request's namespace exists (at submission, and each pass)",
    ),
    *_calls(
        "create get delete patch",
        "",
        "pods",
        "admission; victim annotations; a node's device-plugin pod restarted",
    ),
    *_calls("create", "", "pods/eviction", "preemption through the Eviction API"),
    *_calls("create", "", "events", "record why a pod was evicted"),
    # apps.scheduling.volcano: each portal queue's Volcano Queue, kept in step
    *_calls(
        "create get update",
        "scheduling.volcano.sh",
        "queues",
        "create a portal queue's Volcano Queue; update its capability "
        "(read again after a conflict)",
    ),
)


def granted_atoms(
    calls: tuple[KubeCall, ...] = PORTAL_CALLS,
) -> set[tuple[str, str, str, str]]:
    """Everything ``calls`` need, as (group, resource, verb, name or "*") tuples."""
    atoms: set[tuple[str, str, str, str]] = set()
    for call in calls:
        atoms |= call.atoms()
    # A permission on every name of a resource makes a per-name one redundant.
    return {a for a in atoms if a[3] == "*" or (*a[:3], "*") not in atoms}


def cluster_role_rules(
    calls: tuple[KubeCall, ...] = PORTAL_CALLS,
) -> list[dict[str, Any]]:
    """The fewest RBAC rules that grant exactly ``calls`` (sorted, for a stable file)."""
    by_target: dict[tuple[str, str, tuple[str, ...]], set[str]] = defaultdict(set)
    for group, resource, verb, name in granted_atoms(calls):
        by_target[(group, resource, (name,) if name != "*" else ())].add(verb)
    # Merge the names that share a verb set on one resource into one rule.
    merged: dict[tuple[str, str, tuple[str, ...]], set[str]] = defaultdict(set)
    for (group, resource, names), verbs in by_target.items():
        merged[(group, resource, tuple(sorted(verbs)))].update(names)
    rules: list[dict[str, Any]] = []
    for (group, resource, verbs), names in sorted(merged.items()):
        rule: dict[str, Any] = {
            "apiGroups": [group],
            "resources": [resource],
            "verbs": list(verbs),
        }
        if names:
            rule["resourceNames"] = sorted(names)
        rules.append(rule)
    return rules


def rule_atoms(rules: list[dict[str, Any]]) -> set[tuple[str, str, str, str]]:
    """Expand RBAC rules (as in a ClusterRole) into the atoms :func:`granted_atoms` gives."""
    atoms: set[tuple[str, str, str, str]] = set()
    for rule in rules:
        for group in rule.get("apiGroups") or [""]:
            for resource in rule.get("resources") or []:
                for verb in rule.get("verbs") or []:
                    for name in rule.get("resourceNames") or ["*"]:
                        atoms.add((group, resource, verb, name))
    return atoms
