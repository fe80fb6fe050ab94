"""What a request's pod may carry: a queue's pod policy, checked field by field (pure).

A request's pod must never carry more power than its submitter has. Four
layers, each returning violations named by the field (``pod_template.spec.
containers[0].securityContext.privileged``) so the API answers 400 naming it:

0. **Shape** (``podfields``): only the PodSpec's keys (case-sensitive), the
   fields read below of their JSON types (``hostNetwork: "true"`` is refused,
   not read as unset), no ``ephemeralContainers`` or ``schedulingGates``.
1. **Where, as whom and with what**: the namespace must be one the queue
   allows (none listed: only ``default``; a ``kube-*`` namespace only when
   listed by name), the ServiceAccount one it allows (none listed: only
   ``default``), and each Secret and ConfigMap it references one it lists
   (none listed: none; ``podrefs``).
2. **What only the portal writes**, refused at every level: accelerator and
   other extended resources (the portal adds the vNPU itself, so quotas count
   every accelerator a pod gets), labels and annotations of HAMi, Huawei,
   Volcano, Kubernetes scheduling and the portal, the device plugin's
   environment variables (by name, and through an ``envFrom`` prefix that
   could make one), and the spec fields the portal sets to place the pod
   (node, scheduler, priority).
3. **Pod Security Standards** at the queue's level (``restricted`` by default,
   ``baseline``, ``privileged``), with the semantics of the API server's Pod
   Security admission at its latest version (Kubernetes 1.35): the real-stack
   tests hold the two verdicts side by side.

The module imports only the standard library, its pure siblings ``podfields``
and ``podrefs``, and the pure ``pods`` module (for the node hold's taint key):
it runs at submission and again when the pod is built, where a policy
tightened since submission must stop it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from apps.scheduling.podfields import ROOT, Violation, shape_violations
from apps.scheduling.podfields import as_list as _list
from apps.scheduling.podfields import as_map as _map
from apps.scheduling.podfields import containers_of as _containers
from apps.scheduling.podrefs import env_from_violations, reference_violations
from apps.scheduling.pods import HOLD_TAINT_PREFIX

DEFAULT_NAMESPACE = "default"
DEFAULT_SERVICE_ACCOUNT = "default"


class Level(StrEnum):
    """The Pod Security Standards levels, loosest last."""

    RESTRICTED = "restricted"
    BASELINE = "baseline"
    PRIVILEGED = "privileged"


@dataclass(frozen=True)
class PodPolicy:
    """One queue's policy for the pods of its requests.

    Attributes:
        allowed_namespaces: Namespaces its pods may run in; empty: ``default``.
        level: The Pod Security Standards level its pods must meet.
        allowed_service_accounts: ServiceAccounts its pods may use; empty:
            ``default``.
        allowed_secrets: Secrets its pods may reference; empty: none.
        allowed_config_maps: ConfigMaps its pods may reference; empty: none.
    """

    allowed_namespaces: tuple[str, ...] = ()
    level: Level = Level.RESTRICTED
    allowed_service_accounts: tuple[str, ...] = ()
    allowed_secrets: tuple[str, ...] = ()
    allowed_config_maps: tuple[str, ...] = ()


# Resources a template may ask for; everything else (huawei.com/*, nvidia.com/*,
# hugepages, DRA claims...) is an accelerator or device the portal must count.
PLAIN_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage"})
# Label and annotation domains only the portal writes (a subdomain counts too:
# ``scheduling.volcano.sh/queue-name`` is Volcano's).
RESERVED_DOMAINS = (
    "hami.io",
    "huawei.com",
    "volcano.sh",
    "scheduling.k8s.io",
    "vnpu-portal",
)
# The portal's own keys outside those domains (pods.py writes them).
RESERVED_KEYS = frozenset({"app.kubernetes.io/managed-by"})
# What the device plugin and the Ascend runtime set in the container: a template
# presetting them could point the workload at chips it was not given.
RESERVED_ENV = frozenset(
    {
        "ASCEND_VISIBLE_DEVICES",
        "ASCEND_VNPU_SPECS",
        "ASCEND_RUNTIME_OPTIONS",
        "NPU_MEM_QUOTA",
        "NPU_PRIORITY",
        "NPU_GLOBAL_SHM_PATH",
        "NPU_LOCAL_SHM_PATH",
    }
)
# Spec fields the portal sets to place the pod where it reserved room.
PORTAL_SPEC_FIELDS: Mapping[str, str] = {
    "nodeName": "the portal places the pod on the chip it reserved",
    "nodeSelector": "the portal places the pod on the chip it reserved",
    "schedulerName": "the portal schedules the pod with Volcano",
    "priorityClassName": "set the request's priority instead",
    "priority": "set the request's priority instead",
    "preemptionPolicy": "the request's PriorityClass decides it",
    "overhead": "set by the RuntimeClass, not by a template",
    "resourceClaims": "devices come from the portal's vNPU only",
    "resources": "pod-level resources are not supported; set them per container",
}

# Pod Security Standards (k8s.io/pod-security-admission, version 1.35).
BASELINE_CAPABILITIES = frozenset(
    {
        "AUDIT_WRITE",
        "CHOWN",
        "DAC_OVERRIDE",
        "FOWNER",
        "FSETID",
        "KILL",
        "MKNOD",
        "NET_BIND_SERVICE",
        "SETFCAP",
        "SETGID",
        "SETPCAP",
        "SETUID",
        "SYS_CHROOT",
    }
)
RESTRICTED_CAPABILITIES = frozenset({"NET_BIND_SERVICE"})
SAFE_SYSCTLS = frozenset(
    {
        "kernel.shm_rmid_forced",
        "net.ipv4.ip_local_port_range",
        "net.ipv4.tcp_syncookies",
        "net.ipv4.ping_group_range",
        "net.ipv4.ip_unprivileged_port_start",
        "net.ipv4.ip_local_reserved_ports",
        "net.ipv4.tcp_keepalive_time",
        "net.ipv4.tcp_fin_timeout",
        "net.ipv4.tcp_keepalive_intvl",
        "net.ipv4.tcp_keepalive_probes",
        "net.ipv4.tcp_rmem",
        "net.ipv4.tcp_wmem",
    }
)
SELINUX_TYPES = frozenset(
    {"", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"}
)
RESTRICTED_VOLUMES = frozenset(
    {
        "configMap",
        "csi",
        "downwardAPI",
        "emptyDir",
        "ephemeral",
        "image",
        "persistentVolumeClaim",
        "projected",
        "secret",
    }
)
APPARMOR_ANNOTATION = "container.apparmor.security.beta.kubernetes.io/"
SECCOMP_CONFINED = frozenset({"RuntimeDefault", "Localhost"})


def restricted_security_context() -> dict[str, Any]:
    """A container securityContext that meets ``restricted`` (for workload pods)."""
    return {
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"]},
        "runAsNonRoot": True,
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def check(
    namespace: str, pod_template: Mapping[str, Any], policy: PodPolicy
) -> list[Violation]:
    """Every way a request's pod goes beyond its queue's policy.

    Args:
        namespace: The request's namespace.
        pod_template: The PodTemplateSpec the pod is built from (for a
            workload request, the one the portal makes of it). Its shape has
            been validated (``validation.pod_template_errors``); the fields
            the checks read are refused when of another type (and otherwise
            treated as unset, so that no check crashes on them).
        policy: The queue's policy.

    Returns:
        The violations, in a stable order; empty when the pod is allowed.
    """
    spec = _map(pod_template.get("spec"))
    metadata = _map(pod_template.get("metadata"))
    found = shape_violations(spec)
    found += namespace_violations(namespace, policy)
    found += service_account_violations(spec, policy)
    found += reference_violations(
        spec,
        allowed_secrets=policy.allowed_secrets,
        allowed_config_maps=policy.allowed_config_maps,
    )
    found += portal_field_violations(metadata, spec)
    found += standard_violations(metadata, spec, policy.level)
    return found


def field_errors(violations: Sequence[Violation]) -> dict[str, list[str]]:
    """Violations as the API's field errors ``{path: [messages]}``."""
    errors: dict[str, list[str]] = {}
    for v in violations:
        errors.setdefault(v.field, []).append(v.message)
    return errors


def namespace_violations(namespace: str, policy: PodPolicy) -> list[Violation]:
    """The namespace is one the queue lists (none listed: only ``default``)."""
    allowed = policy.allowed_namespaces or (DEFAULT_NAMESPACE,)
    if namespace in allowed:
        return []
    return [
        Violation(
            "namespace",
            f"this queue's pods may run only in: {', '.join(sorted(allowed))}",
        )
    ]


def service_account_violations(
    spec: Mapping[str, Any], policy: PodPolicy
) -> list[Violation]:
    """The ServiceAccount is one the queue lists (none listed: only ``default``)."""
    allowed = policy.allowed_service_accounts or (DEFAULT_SERVICE_ACCOUNT,)
    found = []
    # ``serviceAccount`` is the deprecated alias; the API server honours both.
    for key in ("serviceAccountName", "serviceAccount"):
        name = spec.get(key)
        if name not in (None, "") and name not in allowed:
            found.append(
                Violation(
                    f"{ROOT}.spec.{key}",
                    f"this queue's pods may use only: {', '.join(sorted(allowed))}",
                )
            )
    return found


def portal_field_violations(
    metadata: Mapping[str, Any], spec: Mapping[str, Any]
) -> list[Violation]:
    """Fields only the portal writes, refused at every level."""
    found = []
    for part in ("labels", "annotations"):
        for key in sorted(_map(metadata.get(part))):
            if _reserved_key(str(key)):
                found.append(
                    Violation(
                        f"{ROOT}.metadata.{part}.{key}",
                        "only the portal writes this key",
                    )
                )
    for key, why in PORTAL_SPEC_FIELDS.items():
        if spec.get(key) not in (None, "", {}, []):
            found.append(Violation(f"{ROOT}.spec.{key}", why))
    affinity = _map(spec.get("affinity"))
    if affinity.get("nodeAffinity"):
        found.append(
            Violation(
                f"{ROOT}.spec.affinity.nodeAffinity",
                "the portal places the pod on the chip it reserved",
            )
        )
    for index, toleration in enumerate(_list(spec.get("tolerations"))):
        toleration = _map(toleration)
        key = toleration.get("key")
        if isinstance(key, str) and key.startswith(HOLD_TAINT_PREFIX):
            why = "only the portal's own pod may use the node it holds for a request"
        elif not key and toleration.get("operator") == "Exists":
            why = (
                "a toleration of every taint also tolerates the node the portal "
                "holds for another request; name the taints to tolerate"
            )
        else:
            continue
        found.append(Violation(f"{ROOT}.spec.tolerations[{index}]", why))
    for path, container in _containers(spec):
        resources = _map(container.get("resources"))
        for part in ("limits", "requests"):
            extra = sorted(
                str(k) for k in _map(resources.get(part)) if k not in PLAIN_RESOURCES
            )
            if extra:
                found.append(
                    Violation(
                        f"{path}.resources.{part}",
                        f"only cpu, memory and ephemeral-storage; the portal adds "
                        f"the vNPU and counts it against the quota (remove "
                        f"{', '.join(extra)})",
                    )
                )
        if resources.get("claims"):
            found.append(
                Violation(
                    f"{path}.resources.claims",
                    "devices come from the portal's vNPU only",
                )
            )
        for index, env in enumerate(_list(container.get("env"))):
            name = _map(env).get("name")
            if isinstance(name, str) and name in RESERVED_ENV:
                found.append(
                    Violation(
                        f"{path}.env[{index}].name",
                        f"{name} is set by the device plugin for the chip given",
                    )
                )
        found += env_from_violations(path, container, RESERVED_ENV)
    return found


def standard_violations(
    metadata: Mapping[str, Any], spec: Mapping[str, Any], level: Level
) -> list[Violation]:
    """The Pod Security Standards checks of ``level`` (nothing for privileged)."""
    if level == Level.PRIVILEGED:
        return []
    found = _baseline(metadata, spec)
    if level == Level.RESTRICTED:
        found += _restricted(spec)
    return found


# --- Pod Security Standards ---------------------------------------------------------


def _baseline(metadata: Mapping[str, Any], spec: Mapping[str, Any]) -> list[Violation]:
    found = _baseline_pod(metadata, spec)
    user_namespace = spec.get("hostUsers") is False
    for path, container in _containers(spec):
        found += _baseline_container(path, container, user_namespace)
    return found


def _baseline_pod(
    metadata: Mapping[str, Any], spec: Mapping[str, Any]
) -> list[Violation]:
    """Baseline's checks of the pod as a whole (host namespaces, sysctls, ...)."""
    found = []
    pod = f"{ROOT}.spec"
    pod_sc = _map(spec.get("securityContext"))
    for key in ("hostNetwork", "hostPID", "hostIPC"):
        if spec.get(key) is True:
            found.append(Violation(f"{pod}.{key}", "host namespaces are not allowed"))
    if _map(pod_sc.get("windowsOptions")).get("hostProcess") is True:
        found.append(
            Violation(
                f"{pod}.securityContext.windowsOptions.hostProcess",
                "host processes are not allowed",
            )
        )
    for index, volume in enumerate(_list(spec.get("volumes"))):
        if _map(volume).get("hostPath") is not None:
            found.append(
                Violation(
                    f"{pod}.volumes[{index}].hostPath",
                    "hostPath volumes are not allowed",
                )
            )
    for index, sysctl in enumerate(_list(pod_sc.get("sysctls"))):
        name = _map(sysctl).get("name")
        if not isinstance(name, str) or name not in SAFE_SYSCTLS:
            found.append(
                Violation(
                    f"{pod}.securityContext.sysctls[{index}].name",
                    f"sysctl {name!r} is not in the safe set",
                )
            )
    found += _selinux(pod_sc, f"{pod}.securityContext")
    found += _apparmor(pod_sc, f"{pod}.securityContext")
    if _seccomp_type(pod_sc) == "Unconfined":
        found.append(
            Violation(
                f"{pod}.securityContext.seccompProfile.type",
                "Unconfined is not allowed",
            )
        )
    for key, value in sorted(_map(metadata.get("annotations")).items()):
        if str(key).startswith(APPARMOR_ANNOTATION) and not _apparmor_value_ok(value):
            found.append(
                Violation(
                    f"{ROOT}.metadata.annotations.{key}",
                    "AppArmor must be runtime/default or localhost/*",
                )
            )
    return found


def _baseline_container(
    path: str, container: Mapping[str, Any], user_namespace: bool
) -> list[Violation]:
    """Baseline's checks of one container (privileges, capabilities, ports, ...)."""
    found = []
    sc = _map(container.get("securityContext"))
    at = f"{path}.securityContext"
    if sc.get("privileged") is True:
        found.append(Violation(f"{at}.privileged", "privileged is not allowed"))
    if _map(sc.get("windowsOptions")).get("hostProcess") is True:
        found.append(
            Violation(
                f"{at}.windowsOptions.hostProcess", "host processes are not allowed"
            )
        )
    added = [str(c) for c in _list(_map(sc.get("capabilities")).get("add"))]
    bad = sorted(c for c in added if c not in BASELINE_CAPABILITIES)
    if bad:
        found.append(
            Violation(
                f"{at}.capabilities.add",
                f"capabilities beyond the default set: {', '.join(bad)}",
            )
        )
    for index, port in enumerate(_list(container.get("ports"))):
        if _map(port).get("hostPort") not in (None, 0):
            found.append(
                Violation(
                    f"{path}.ports[{index}].hostPort", "host ports are not allowed"
                )
            )
    if sc.get("procMount") not in (None, "Default") and not user_namespace:
        found.append(
            Violation(f"{at}.procMount", "only the Default /proc mount is allowed")
        )
    found += _selinux(sc, at)
    found += _apparmor(sc, at)
    if _seccomp_type(sc) == "Unconfined":
        found.append(
            Violation(f"{at}.seccompProfile.type", "Unconfined is not allowed")
        )
    found += _host_probes(container, path)
    return found


def _restricted(spec: Mapping[str, Any]) -> list[Violation]:
    found = []
    pod = f"{ROOT}.spec"
    pod_sc = _map(spec.get("securityContext"))
    windows = _map(spec.get("os")).get("name") == "windows"
    user_namespace = spec.get("hostUsers") is False
    for index, volume in enumerate(_list(spec.get("volumes"))):
        kinds = sorted(str(k) for k in _map(volume) if k != "name")
        bad = [k for k in kinds if k not in RESTRICTED_VOLUMES]
        if bad or not kinds:
            found.append(
                Violation(
                    f"{pod}.volumes[{index}]",
                    f"volume type {', '.join(bad) or 'unknown'} is not allowed; use "
                    "configMap, secret, emptyDir, projected, downwardAPI, csi, "
                    "persistentVolumeClaim, ephemeral or image",
                )
            )
    pod_non_root = pod_sc.get("runAsNonRoot")
    if not user_namespace:
        if pod_non_root is False:
            found.append(
                Violation(
                    f"{pod}.securityContext.runAsNonRoot", "must be true (or unset)"
                )
            )
        if pod_sc.get("runAsUser") == 0:
            found.append(
                Violation(f"{pod}.securityContext.runAsUser", "must not be 0 (root)")
            )
    pod_seccomp = _seccomp_type(pod_sc)
    for path, container in _containers(spec):
        sc = _map(container.get("securityContext"))
        at = f"{path}.securityContext"
        if not windows and sc.get("allowPrivilegeEscalation") is not False:
            found.append(Violation(f"{at}.allowPrivilegeEscalation", "must be false"))
        if not user_namespace:
            non_root = sc.get("runAsNonRoot")
            if non_root is False or (non_root is None and pod_non_root is not True):
                found.append(
                    Violation(
                        f"{at}.runAsNonRoot",
                        "must be true (here or in the pod's securityContext)",
                    )
                )
            if sc.get("runAsUser") == 0:
                found.append(Violation(f"{at}.runAsUser", "must not be 0 (root)"))
        # Outside a user namespace baseline has named it already.
        if user_namespace and sc.get("procMount") not in (None, "Default"):
            found.append(
                Violation(f"{at}.procMount", "only the Default /proc mount is allowed")
            )
        if not windows:
            seccomp = _seccomp_type(sc)
            if seccomp is None and pod_seccomp not in SECCOMP_CONFINED:
                found.append(
                    Violation(
                        f"{at}.seccompProfile.type",
                        "must be RuntimeDefault or Localhost (here or in the pod's "
                        "securityContext)",
                    )
                )
            caps = _map(sc.get("capabilities"))
            if "ALL" not in [str(c) for c in _list(caps.get("drop"))]:
                found.append(Violation(f"{at}.capabilities.drop", "must include ALL"))
            added = sorted(
                str(c)
                for c in _list(caps.get("add"))
                if str(c) not in RESTRICTED_CAPABILITIES
            )
            if added:
                found.append(
                    Violation(
                        f"{at}.capabilities.add",
                        f"only NET_BIND_SERVICE may be added (not {', '.join(added)})",
                    )
                )
    return found


def _selinux(sc: Mapping[str, Any], at: str) -> list[Violation]:
    options = _map(sc.get("seLinuxOptions"))
    found = []
    kind = options.get("type", "")
    if not isinstance(kind, str) or kind not in SELINUX_TYPES:
        found.append(
            Violation(f"{at}.seLinuxOptions.type", "only the container_* types")
        )
    for key in ("user", "role"):
        if options.get(key):
            found.append(Violation(f"{at}.seLinuxOptions.{key}", "must not be set"))
    return found


def _apparmor(sc: Mapping[str, Any], at: str) -> list[Violation]:
    kind = _map(sc.get("appArmorProfile")).get("type")
    if kind not in (None, "", "RuntimeDefault", "Localhost"):
        return [
            Violation(
                f"{at}.appArmorProfile.type", "must be RuntimeDefault or Localhost"
            )
        ]
    return []


def _apparmor_value_ok(value: Any) -> bool:
    text = str(value)
    return text in ("", "runtime/default") or text.startswith("localhost/")


def _host_probes(container: Mapping[str, Any], path: str) -> list[Violation]:
    found = []
    handlers = [
        (probe, _map(container.get(probe)))
        for probe in ("livenessProbe", "readinessProbe", "startupProbe")
    ]
    lifecycle = _map(container.get("lifecycle"))
    handlers += [
        (f"lifecycle.{hook}", _map(lifecycle.get(hook)))
        for hook in ("postStart", "preStop")
    ]
    for where, handler in handlers:
        for kind in ("httpGet", "tcpSocket"):
            if _map(handler.get(kind)).get("host"):
                found.append(
                    Violation(
                        f"{path}.{where}.{kind}.host",
                        "probes and hooks may not reach another host",
                    )
                )
    return found


# --- helpers ------------------------------------------------------------------------


def _seccomp_type(sc: Mapping[str, Any]) -> str | None:
    profile = sc.get("seccompProfile")
    if not isinstance(profile, Mapping):
        return None
    kind = profile.get("type")
    return str(kind) if kind is not None else None


def _reserved_key(key: str) -> bool:
    if key in RESERVED_KEYS:
        return True
    domain = key.split("/", 1)[0] if "/" in key else ""
    return any(domain == d or domain.endswith(f".{d}") for d in RESERVED_DOMAINS)
