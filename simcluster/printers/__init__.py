"""What kube-apiserver v1.35 prints for each resource in a server-side Table.

The columns and cell rules follow the server's printers
(k8s.io/kubernetes ``pkg/printers/internalversion``): built-in kinds have
hand-made columns, ClusterRoles and Roles get the default NAME / CREATED AT
table, and the Volcano CRDs their ``additionalPrinterColumns`` (Volcano
v1.15.1 ``config/crd/volcano/bases``). The server always prints the wide
(priority 1) columns too; kubectl hides them unless ``-o wide``.

The printers read the stored (v1) objects and apply on the fly the defaults
that the real server adds when it decodes them (Deployment replicas 1, Service
type ClusterIP, PriorityClass preemptionPolicy, pod IP from ``status.podIP``).
"""

from __future__ import annotations

from simcluster import resources
from simcluster.printers import core, crds, pods, rbac, workloads
from simcluster.printers.base import (
    Column,
    Printer,
    human_duration,
    selector_string,
)
from simcluster.printers.pods import pod_status

__all__ = [
    "PRINTERS",
    "Column",
    "Printer",
    "human_duration",
    "pod_status",
    "printer_for",
    "selector_string",
]

PRINTERS: dict[str, Printer] = {
    resources.POD.key: pods.POD,
    resources.NODE.key: core.NODE,
    resources.NAMESPACE.key: core.NAMESPACE,
    resources.CONFIGMAP.key: core.CONFIGMAP,
    resources.SECRET.key: core.SECRET,
    resources.SERVICEACCOUNT.key: core.SERVICEACCOUNT,
    resources.SERVICE.key: core.SERVICE,
    resources.EVENT.key: core.EVENT,
    resources.DEPLOYMENT.key: workloads.DEPLOYMENT,
    resources.DAEMONSET.key: workloads.DAEMONSET,
    resources.PDB.key: workloads.PDB,
    resources.PRIORITYCLASS.key: workloads.PRIORITYCLASS,
    resources.CLUSTERROLEBINDING.key: rbac.binding_printer("ClusterRoleBinding"),
    resources.ROLEBINDING.key: rbac.binding_printer("RoleBinding"),
    resources.CLUSTERROLE.key: rbac.DEFAULT,
    resources.ROLE.key: rbac.DEFAULT,
    resources.QUEUE.key: crds.QUEUE,
    resources.PODGROUP.key: crds.PODGROUP,
}


def printer_for(res: resources.ResourceType) -> Printer:
    """The printer of a resource (the default NAME / CREATED AT one if none)."""
    return PRINTERS.get(res.key, rbac.DEFAULT)
