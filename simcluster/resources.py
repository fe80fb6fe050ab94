"""The registry of API resources that simcluster serves."""

from __future__ import annotations

from dataclasses import dataclass, field

ALL_VERBS = (
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
)
META_FIELDS = frozenset(
    {
        "name",
        "generateName",
        "namespace",
        "selfLink",
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "labels",
        "annotations",
        "ownerReferences",
        "finalizers",
        "managedFields",
    }
)
_SPEC_STATUS = frozenset({"apiVersion", "kind", "metadata", "spec", "status"})
_RULES = frozenset({"apiVersion", "kind", "metadata", "rules"})
_BINDING = frozenset({"apiVersion", "kind", "metadata", "subjects", "roleRef"})


@dataclass(frozen=True)
class ResourceType:
    """One REST resource: where it lives, what it is called and what it allows."""

    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    subresources: tuple[str, ...] = ()
    top_fields: frozenset[str] = _SPEC_STATUS
    categories: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ALL_VERBS
    singular: str = field(default="")

    @property
    def key(self) -> str:
        """Store key, unique across groups: ``plural.group`` or ``plural``."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def group_version(self) -> str:
        """``apiVersion`` string, e.g. ``v1`` or ``apps/v1``."""
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def singular_name(self) -> str:
        """Lower-case singular name."""
        return self.singular or self.kind.lower()

    @property
    def has_status(self) -> bool:
        """Whether writes to the main resource keep the stored status."""
        return "status" in self.subresources


RESOURCES: tuple[ResourceType, ...] = (
    ResourceType("", "v1", "Namespace", "namespaces", False, ("ns",), ("status",)),
    ResourceType("", "v1", "Node", "nodes", False, ("no",), ("status",)),
    ResourceType(
        "",
        "v1",
        "Pod",
        "pods",
        True,
        ("po",),
        ("status", "eviction", "binding", "log"),
        categories=("all",),
    ),
    ResourceType(
        "",
        "v1",
        "ConfigMap",
        "configmaps",
        True,
        ("cm",),
        top_fields=frozenset(
            {"apiVersion", "kind", "metadata", "data", "binaryData", "immutable"}
        ),
    ),
    ResourceType(
        "",
        "v1",
        "Event",
        "events",
        True,
        ("ev",),
        top_fields=frozenset(
            {
                "apiVersion",
                "kind",
                "metadata",
                "involvedObject",
                "reason",
                "message",
                "source",
                "firstTimestamp",
                "lastTimestamp",
                "count",
                "type",
                "eventTime",
                "series",
                "action",
                "related",
                "reportingComponent",
                "reportingInstance",
            }
        ),
    ),
    ResourceType(
        "scheduling.k8s.io",
        "v1",
        "PriorityClass",
        "priorityclasses",
        False,
        ("pc",),
        top_fields=frozenset(
            {
                "apiVersion",
                "kind",
                "metadata",
                "value",
                "globalDefault",
                "description",
                "preemptionPolicy",
            }
        ),
    ),
    ResourceType(
        "apps",
        "v1",
        "DaemonSet",
        "daemonsets",
        True,
        ("ds",),
        ("status",),
        categories=("all",),
    ),
    ResourceType(
        "apps",
        "v1",
        "Deployment",
        "deployments",
        True,
        ("deploy",),
        ("status",),
        categories=("all",),
    ),
    ResourceType(
        "policy",
        "v1",
        "PodDisruptionBudget",
        "poddisruptionbudgets",
        True,
        ("pdb",),
        ("status",),
    ),
    ResourceType(
        "scheduling.volcano.sh",
        "v1beta1",
        "Queue",
        "queues",
        False,
        ("q", "queue-v1beta1"),
        ("status",),
    ),
    # Objects a deployment of the portal itself brings (its ServiceAccount,
    # Service, Secret and RBAC), so that `kubectl apply --dry-run=server -f
    # deploy/` and RBAC checks work here. Stored and served; only RBAC acts.
    ResourceType(
        "",
        "v1",
        "ServiceAccount",
        "serviceaccounts",
        True,
        ("sa",),
        top_fields=frozenset(
            {
                "apiVersion",
                "kind",
                "metadata",
                "secrets",
                "imagePullSecrets",
                "automountServiceAccountToken",
            }
        ),
    ),
    ResourceType(
        "",
        "v1",
        "Service",
        "services",
        True,
        ("svc",),
        ("status",),
        categories=("all",),
    ),
    ResourceType(
        "",
        "v1",
        "Secret",
        "secrets",
        True,
        top_fields=frozenset(
            {
                "apiVersion",
                "kind",
                "metadata",
                "data",
                "stringData",
                "type",
                "immutable",
            }
        ),
    ),
    ResourceType(
        "rbac.authorization.k8s.io",
        "v1",
        "ClusterRole",
        "clusterroles",
        False,
        top_fields=_RULES | {"aggregationRule"},
    ),
    ResourceType(
        "rbac.authorization.k8s.io",
        "v1",
        "ClusterRoleBinding",
        "clusterrolebindings",
        False,
        top_fields=_BINDING,
    ),
    ResourceType(
        "rbac.authorization.k8s.io", "v1", "Role", "roles", True, top_fields=_RULES
    ),
    ResourceType(
        "rbac.authorization.k8s.io",
        "v1",
        "RoleBinding",
        "rolebindings",
        True,
        top_fields=_BINDING,
    ),
    ResourceType(
        "scheduling.volcano.sh",
        "v1beta1",
        "PodGroup",
        "podgroups",
        True,
        ("pg", "podgroup-v1beta1"),
        ("status",),
    ),
)

BY_KEY: dict[str, ResourceType] = {r.key: r for r in RESOURCES}
_BY_PATH: dict[tuple[str, str, str], ResourceType] = {
    (r.group, r.version, r.plural): r for r in RESOURCES
}

# Body fields of the subresource kinds that clients POST.
EVICTION_FIELDS = frozenset({"apiVersion", "kind", "metadata", "deleteOptions"})
BINDING_FIELDS = frozenset({"apiVersion", "kind", "metadata", "target"})


def lookup(group: str, version: str, plural: str) -> ResourceType | None:
    """Find the resource served at ``/apis/<group>/<version>/<plural>``."""
    return _BY_PATH.get((group, version, plural))


def group_versions() -> dict[str, list[str]]:
    """Map each group (``""`` = core) to its served versions."""
    out: dict[str, list[str]] = {}
    for res in RESOURCES:
        versions = out.setdefault(res.group, [])
        if res.version not in versions:
            versions.append(res.version)
    return out


def resources_in(group: str, version: str) -> list[ResourceType]:
    """The resources of one group-version, in registry order."""
    return [r for r in RESOURCES if r.group == group and r.version == version]


POD = BY_KEY["pods"]
NODE = BY_KEY["nodes"]
NAMESPACE = BY_KEY["namespaces"]
CONFIGMAP = BY_KEY["configmaps"]
EVENT = BY_KEY["events"]
PRIORITYCLASS = BY_KEY["priorityclasses.scheduling.k8s.io"]
DAEMONSET = BY_KEY["daemonsets.apps"]
DEPLOYMENT = BY_KEY["deployments.apps"]
PDB = BY_KEY["poddisruptionbudgets.policy"]
QUEUE = BY_KEY["queues.scheduling.volcano.sh"]
SERVICEACCOUNT = BY_KEY["serviceaccounts"]
SECRET = BY_KEY["secrets"]
CLUSTERROLE = BY_KEY["clusterroles.rbac.authorization.k8s.io"]
CLUSTERROLEBINDING = BY_KEY["clusterrolebindings.rbac.authorization.k8s.io"]
ROLE = BY_KEY["roles.rbac.authorization.k8s.io"]
ROLEBINDING = BY_KEY["rolebindings.rbac.authorization.k8s.io"]
PODGROUP = BY_KEY["podgroups.scheduling.volcano.sh"]
SERVICE = BY_KEY["services"]
