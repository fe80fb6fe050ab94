"""A pod template's fields as the pod policy reads them, and their shape (pure).

The pod policy (``podsecurity``) reads a template field by field and treats a
field of an unexpected type as unset, so that it never crashes on bad input.
That is safe only if such a field never reaches the API server, which reads
it its own way: ``shape_violations`` refuses the spec's keys that are not the
PodSpec's (``HostNetwork``), the fields a request's pod has no business with
(``ephemeralContainers``, ``schedulingGates``), and the fields the policy reads
when of another JSON type (``hostNetwork: "true"``). Also here: the reading
helpers the policy shares.

Imports only the standard library.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

ROOT = "pod_template"


@dataclass(frozen=True)
class Violation:
    """One refused field: its path in the submission and why."""

    field: str
    message: str


CONTAINER_KINDS = ("containers", "initContainers", "ephemeralContainers")


class Kind(StrEnum):
    """The JSON type a field must have (what a 400 says it must be)."""

    BOOLEAN = "a boolean (true or false, not a string)"
    INTEGER = "an integer"
    STRING = "a string"
    LIST = "a list"
    MAP = "an object"


# The PodSpec's fields in Kubernetes 1.35 (k8s.io/api core/v1 types.go), with
# their JSON types. A key not listed (``HostNetwork``) is refused rather than
# left to the API server: it decodes JSON case-sensitively and drops unknown
# fields with a warning, so what the portal checked and what runs could differ.
POD_SPEC_FIELDS: Mapping[str, Kind] = {
    "volumes": Kind.LIST,
    "initContainers": Kind.LIST,
    "containers": Kind.LIST,
    "ephemeralContainers": Kind.LIST,
    "restartPolicy": Kind.STRING,
    "terminationGracePeriodSeconds": Kind.INTEGER,
    "activeDeadlineSeconds": Kind.INTEGER,
    "dnsPolicy": Kind.STRING,
    "nodeSelector": Kind.MAP,
    "serviceAccountName": Kind.STRING,
    "serviceAccount": Kind.STRING,
    "automountServiceAccountToken": Kind.BOOLEAN,
    "nodeName": Kind.STRING,
    "hostNetwork": Kind.BOOLEAN,
    "hostPID": Kind.BOOLEAN,
    "hostIPC": Kind.BOOLEAN,
    "shareProcessNamespace": Kind.BOOLEAN,
    "securityContext": Kind.MAP,
    "imagePullSecrets": Kind.LIST,
    "hostname": Kind.STRING,
    "subdomain": Kind.STRING,
    "affinity": Kind.MAP,
    "schedulerName": Kind.STRING,
    "tolerations": Kind.LIST,
    "hostAliases": Kind.LIST,
    "priorityClassName": Kind.STRING,
    "priority": Kind.INTEGER,
    "dnsConfig": Kind.MAP,
    "readinessGates": Kind.LIST,
    "runtimeClassName": Kind.STRING,
    "enableServiceLinks": Kind.BOOLEAN,
    "preemptionPolicy": Kind.STRING,
    "overhead": Kind.MAP,
    "topologySpreadConstraints": Kind.LIST,
    "setHostnameAsFQDN": Kind.BOOLEAN,
    "os": Kind.MAP,
    "hostUsers": Kind.BOOLEAN,
    "schedulingGates": Kind.LIST,
    "resourceClaims": Kind.LIST,
    "resources": Kind.MAP,
    "hostnameOverride": Kind.STRING,
    "workloadRef": Kind.MAP,
}
# Spec fields a request's pod may not carry at all, even empty.
REFUSED_SPEC_FIELDS: Mapping[str, str] = {
    "ephemeralContainers": (
        "a request's pod has no ephemeral containers (they are added to a "
        "running pod, for debugging)"
    ),
    "schedulingGates": (
        "the portal binds the pod to the chip it reserved; a gated pod is "
        "never scheduled and its request would wait out bind timeouts"
    ),
}
# The types of the other fields the checks read; JSON null is unset everywhere.
SECURITY_CONTEXT_FIELDS: Mapping[str, Kind] = {
    "privileged": Kind.BOOLEAN,
    "allowPrivilegeEscalation": Kind.BOOLEAN,
    "runAsNonRoot": Kind.BOOLEAN,
    "readOnlyRootFilesystem": Kind.BOOLEAN,
    "runAsUser": Kind.INTEGER,
    "runAsGroup": Kind.INTEGER,
    "fsGroup": Kind.INTEGER,
    "procMount": Kind.STRING,
    "capabilities": Kind.MAP,
    "seccompProfile": Kind.MAP,
    "seLinuxOptions": Kind.MAP,
    "windowsOptions": Kind.MAP,
    "appArmorProfile": Kind.MAP,
    "sysctls": Kind.LIST,
    "supplementalGroups": Kind.LIST,
}
SECURITY_CONTEXT_PARTS: Mapping[str, Mapping[str, Kind]] = {
    "capabilities": {"add": Kind.LIST, "drop": Kind.LIST},
    "seccompProfile": {"type": Kind.STRING},
    "appArmorProfile": {"type": Kind.STRING},
    "seLinuxOptions": {
        "type": Kind.STRING,
        "user": Kind.STRING,
        "role": Kind.STRING,
        "level": Kind.STRING,
    },
    "windowsOptions": {"hostProcess": Kind.BOOLEAN},
}
CONTAINER_FIELDS: Mapping[str, Kind] = {
    "securityContext": Kind.MAP,
    "env": Kind.LIST,
    "envFrom": Kind.LIST,
    "ports": Kind.LIST,
    "volumeMounts": Kind.LIST,
    "resources": Kind.MAP,
    "livenessProbe": Kind.MAP,
    "readinessProbe": Kind.MAP,
    "startupProbe": Kind.MAP,
    "lifecycle": Kind.MAP,
}


def shape_violations(spec: Mapping[str, Any]) -> list[Violation]:
    """Spec keys that are not the PodSpec's, refused fields, and mistyped fields.

    The other checks treat a field of an unexpected type as unset, so without
    this ``hostNetwork: "true"`` or ``privileged: "true"`` would pass them and
    rely on the API server to refuse it; and a key the API server does not
    know (``HostNetwork``) is dropped by it, so the pod would not be the one
    checked.
    """
    found = []
    pod = f"{ROOT}.spec"
    known = {key.lower(): key for key in POD_SPEC_FIELDS}
    for key in sorted(str(k) for k in spec):
        if key not in POD_SPEC_FIELDS:
            close = known.get(key.lower())
            found.append(
                Violation(
                    f"{pod}.{key}",
                    "not a field of a pod's spec (Kubernetes 1.35; names are "
                    "case-sensitive)" + (f": did you mean {close}?" if close else ""),
                )
            )
    for key, why in REFUSED_SPEC_FIELDS.items():
        if key in spec:
            found.append(Violation(f"{pod}.{key}", why))
    found += _mistyped(spec, POD_SPEC_FIELDS, pod)
    for key in ("volumes", "tolerations", "imagePullSecrets", *CONTAINER_KINDS):
        found += _mistyped_items(spec.get(key), f"{pod}.{key}")
    found += _security_context_mistyped(spec.get("securityContext"), pod)
    for path, container in containers_of(spec):
        found += _mistyped(container, CONTAINER_FIELDS, path)
        found += _security_context_mistyped(container.get("securityContext"), path)
        for key in ("env", "envFrom", "ports"):
            found += _mistyped_items(container.get(key), f"{path}.{key}")
        for index, env in enumerate(as_list(container.get("env"))):
            found += _mistyped(
                as_map(env), {"name": Kind.STRING}, f"{path}.env[{index}]"
            )
        for index, source in enumerate(as_list(container.get("envFrom"))):
            found += _mistyped(
                as_map(source), {"prefix": Kind.STRING}, f"{path}.envFrom[{index}]"
            )
        for index, port in enumerate(as_list(container.get("ports"))):
            found += _mistyped(
                as_map(port), {"hostPort": Kind.INTEGER}, f"{path}.ports[{index}]"
            )
    return found


def containers_of(spec: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Each container of the pod (init and ephemeral too), with its field path."""
    for kind in CONTAINER_KINDS:
        for index, container in enumerate(as_list(spec.get(kind))):
            if isinstance(container, Mapping):
                yield f"{ROOT}.spec.{kind}[{index}]", container


def as_map(value: Any) -> Mapping[str, Any]:
    """``value`` if it is an object, else an empty one (a mistyped field is unset)."""
    return value if isinstance(value, Mapping) else {}


def as_list(value: Any) -> list[Any]:
    """``value`` if it is a list, else an empty one (a mistyped field is unset)."""
    return value if isinstance(value, list) else []


def _is(value: Any, kind: Kind) -> bool:
    if value is None:  # JSON null: unset, as the API server reads it
        return True
    if kind == Kind.BOOLEAN:
        return isinstance(value, bool)
    if kind == Kind.INTEGER:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == Kind.STRING:
        return isinstance(value, str)
    if kind == Kind.LIST:
        return isinstance(value, list)
    return isinstance(value, Mapping)


def _mistyped(
    obj: Mapping[str, Any], kinds: Mapping[str, Kind], at: str
) -> list[Violation]:
    return [
        Violation(f"{at}.{key}", f"must be {kind}")
        for key, kind in kinds.items()
        if key in obj and not _is(obj[key], kind)
    ]


def _mistyped_items(value: Any, at: str) -> list[Violation]:
    """Each item of a list of objects that is not an object."""
    return [
        Violation(f"{at}[{index}]", f"must be {Kind.MAP}")
        for index, item in enumerate(as_list(value))
        if not isinstance(item, Mapping)
    ]


def _security_context_mistyped(value: Any, at: str) -> list[Violation]:
    sc = as_map(value)
    at = f"{at}.securityContext"
    found = _mistyped(sc, SECURITY_CONTEXT_FIELDS, at)
    for part, kinds in SECURITY_CONTEXT_PARTS.items():
        found += _mistyped(as_map(sc.get(part)), kinds, f"{at}.{part}")
    found += _mistyped_items(sc.get("sysctls"), f"{at}.sysctls")
    return found
