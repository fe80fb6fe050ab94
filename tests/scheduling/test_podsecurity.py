"""The pod policy (apps/scheduling/podsecurity.py), without Django.

Each case names the field the check must name. ``RESTRICTED_OK`` is a pod that
meets ``restricted``; every case changes one thing in it, so a case fails only
for the reason it is about.
"""

from __future__ import annotations

import copy
import subprocess
import sys
from typing import Any

import pytest

from apps.scheduling.podsecurity import (
    Level,
    PodPolicy,
    check,
    field_errors,
    restricted_security_context,
)

C0 = "pod_template.spec.containers[0]"
SC0 = f"{C0}.securityContext"

RESTRICTED_OK: dict[str, Any] = {
    "metadata": {"labels": {"team": "a"}, "annotations": {"note": "x"}},
    "spec": {
        "securityContext": {
            "runAsNonRoot": True,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "containers": [
            {
                "name": "main",
                "image": "busybox",
                "securityContext": {
                    "allowPrivilegeEscalation": False,
                    "capabilities": {"drop": ["ALL"]},
                },
                "resources": {"limits": {"cpu": "1", "memory": "1Gi"}},
            }
        ],
        "volumes": [{"name": "scratch", "emptyDir": {}}],
    },
}
BASELINE_ONLY: dict[str, Any] = {
    "spec": {"containers": [{"name": "main", "image": "busybox"}]}
}


def _with(base: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A copy of ``base`` with ``value`` at the dotted ``path`` (``[i]`` indexes)."""
    template = copy.deepcopy(base)
    node: Any = template
    parts = path.replace("[", ".").replace("]", "").split(".")
    for part in parts[:-1]:
        key: Any = int(part) if part.isdigit() else part
        node = node.setdefault(key, {}) if isinstance(node, dict) else node[key]
    last = parts[-1]
    node[int(last) if last.isdigit() else last] = value
    return template


def _fields(
    template: dict[str, Any], level: Level, namespace: str = "default", **policy: Any
) -> set[str]:
    found = check(namespace, template, PodPolicy(level=level, **policy))
    return {v.field for v in found}


@pytest.mark.parametrize("level", list(Level))
def test_the_restricted_pod_is_allowed_at_every_level(level):
    assert _fields(RESTRICTED_OK, level) == set()


def test_a_plain_pod_is_baseline_but_not_restricted():
    assert _fields(BASELINE_ONLY, Level.BASELINE) == set()
    assert _fields(BASELINE_ONLY, Level.PRIVILEGED) == set()
    assert _fields(BASELINE_ONLY, Level.RESTRICTED) == {
        f"{SC0}.allowPrivilegeEscalation",
        f"{SC0}.runAsNonRoot",
        f"{SC0}.seccompProfile.type",
        f"{SC0}.capabilities.drop",
    }


def test_the_portals_workload_security_context_meets_restricted():
    template = _with(
        BASELINE_ONLY,
        "spec.containers[0].securityContext",
        restricted_security_context(),
    )
    assert _fields(template, Level.RESTRICTED) == set()


# (path in the template, value, field named, lowest level that allows it or None)
BASELINE_CASES = [
    ("spec.hostNetwork", True, "pod_template.spec.hostNetwork", Level.PRIVILEGED),
    ("spec.hostPID", True, "pod_template.spec.hostPID", Level.PRIVILEGED),
    ("spec.hostIPC", True, "pod_template.spec.hostIPC", Level.PRIVILEGED),
    (
        "spec.containers[0].securityContext.privileged",
        True,
        f"{SC0}.privileged",
        Level.PRIVILEGED,
    ),
    (
        "spec.volumes[0]",
        {"name": "root", "hostPath": {"path": "/"}},
        "pod_template.spec.volumes[0].hostPath",
        Level.PRIVILEGED,
    ),
    (
        "spec.containers[0].ports",
        [{"containerPort": 80, "hostPort": 80}],
        f"{C0}.ports[0].hostPort",
        Level.PRIVILEGED,
    ),
    (
        "spec.containers[0].securityContext.capabilities",
        {"drop": ["ALL"], "add": ["SYS_ADMIN"]},
        f"{SC0}.capabilities.add",
        Level.PRIVILEGED,
    ),
    (
        "spec.securityContext.sysctls",
        [{"name": "kernel.msgmax", "value": "1"}],
        "pod_template.spec.securityContext.sysctls[0].name",
        Level.PRIVILEGED,
    ),
    (
        "spec.containers[0].securityContext.procMount",
        "Unmasked",
        f"{SC0}.procMount",
        Level.PRIVILEGED,
    ),
    (
        "spec.containers[0].securityContext.seccompProfile",
        {"type": "Unconfined"},
        f"{SC0}.seccompProfile.type",
        Level.PRIVILEGED,
    ),
    (
        "spec.securityContext.seLinuxOptions",
        {"type": "spc_t"},
        "pod_template.spec.securityContext.seLinuxOptions.type",
        Level.PRIVILEGED,
    ),
    (
        "spec.containers[0].securityContext.seLinuxOptions",
        {"user": "system_u"},
        f"{SC0}.seLinuxOptions.user",
        Level.PRIVILEGED,
    ),
    (
        "spec.containers[0].securityContext.appArmorProfile",
        {"type": "Unconfined"},
        f"{SC0}.appArmorProfile.type",
        Level.PRIVILEGED,
    ),
    (
        "metadata.annotations",
        {"container.apparmor.security.beta.kubernetes.io/main": "unconfined"},
        "pod_template.metadata.annotations."
        "container.apparmor.security.beta.kubernetes.io/main",
        Level.PRIVILEGED,
    ),
    (
        "spec.containers[0].livenessProbe",
        {"httpGet": {"host": "10.0.0.1", "port": 80}},
        f"{C0}.livenessProbe.httpGet.host",
        Level.PRIVILEGED,
    ),
    (
        "spec.containers[0].securityContext.windowsOptions",
        {"hostProcess": True},
        f"{SC0}.windowsOptions.hostProcess",
        Level.PRIVILEGED,
    ),
]
RESTRICTED_CASES = [
    (
        "spec.volumes[0]",
        {"name": "nfs", "nfs": {"server": "x", "path": "/"}},
        "pod_template.spec.volumes[0]",
        Level.BASELINE,
    ),
    (
        "spec.containers[0].securityContext.allowPrivilegeEscalation",
        True,
        f"{SC0}.allowPrivilegeEscalation",
        Level.BASELINE,
    ),
    (
        "spec.securityContext.runAsNonRoot",
        False,
        "pod_template.spec.securityContext.runAsNonRoot",
        Level.BASELINE,
    ),
    (
        "spec.containers[0].securityContext.runAsUser",
        0,
        f"{SC0}.runAsUser",
        Level.BASELINE,
    ),
    (
        "spec.securityContext.runAsUser",
        0,
        "pod_template.spec.securityContext.runAsUser",
        Level.BASELINE,
    ),
    (
        "spec.containers[0].securityContext.capabilities",
        {"drop": ["ALL"], "add": ["CHOWN"]},
        f"{SC0}.capabilities.add",
        Level.BASELINE,
    ),
    (
        "spec.containers[0].securityContext.capabilities",
        {"drop": ["NET_RAW"]},
        f"{SC0}.capabilities.drop",
        Level.BASELINE,
    ),
    (
        "spec.securityContext.seccompProfile",
        None,
        f"{SC0}.seccompProfile.type",
        Level.BASELINE,
    ),
]


@pytest.mark.parametrize(
    ("path", "value", "field", "allowed_from"), BASELINE_CASES + RESTRICTED_CASES
)
def test_each_standard_rule_names_its_field_at_the_levels_that_refuse_it(
    path, value, field, allowed_from
):
    template = _with(RESTRICTED_OK, path, value)
    order = [Level.RESTRICTED, Level.BASELINE, Level.PRIVILEGED]
    for level in order:
        found = _fields(template, level)
        if order.index(level) >= order.index(allowed_from):
            assert found == set(), (level, found)
        else:
            assert field in found, (level, found)


def test_restricted_accepts_what_the_standard_accepts():
    allowed = [
        ("spec.containers[0].securityContext.capabilities.add", ["NET_BIND_SERVICE"]),
        ("spec.securityContext.sysctls", [{"name": "net.ipv4.tcp_syncookies"}]),
        ("spec.securityContext.seccompProfile", {"type": "Localhost"}),
        (
            "spec.volumes[0]",
            {"name": "c", "projected": {"sources": []}},
        ),
        ("spec.containers[0].securityContext.seLinuxOptions", {"type": "container_t"}),
        ("spec.containers[0].securityContext.runAsUser", 1000),
        ("spec.containers[0].ports", [{"containerPort": 8080}]),
        # User namespaces relax the root rules (Kubernetes 1.35).
        ("spec.hostUsers", False),
    ]
    for path, value in allowed:
        assert _fields(_with(RESTRICTED_OK, path, value), Level.RESTRICTED) == set(), (
            path
        )
    in_user_namespace = _with(
        _with(RESTRICTED_OK, "spec.hostUsers", False),
        "spec.securityContext.runAsUser",
        0,
    )
    assert _fields(in_user_namespace, Level.RESTRICTED) == set()


def test_container_level_settings_satisfy_restricted_without_pod_level_ones():
    template = copy.deepcopy(RESTRICTED_OK)
    del template["spec"]["securityContext"]
    sc = template["spec"]["containers"][0]["securityContext"]
    assert _fields(template, Level.RESTRICTED) == {
        f"{SC0}.runAsNonRoot",
        f"{SC0}.seccompProfile.type",
    }
    sc["runAsNonRoot"] = True
    sc["seccompProfile"] = {"type": "RuntimeDefault"}
    assert _fields(template, Level.RESTRICTED) == set()
    sc["runAsNonRoot"] = False
    template["spec"]["securityContext"] = {"runAsNonRoot": True}
    # The container's explicit false wins over the pod's true.
    assert f"{SC0}.runAsNonRoot" in _fields(template, Level.RESTRICTED)


def test_init_and_ephemeral_containers_are_checked_like_containers():
    for kind in ("initContainers", "ephemeralContainers"):
        template = _with(
            RESTRICTED_OK,
            f"spec.{kind}",
            [
                {
                    "name": "x",
                    "image": "busybox",
                    "securityContext": {"privileged": True},
                }
            ],
        )
        found = _fields(template, Level.BASELINE)
        assert f"pod_template.spec.{kind}[0].securityContext.privileged" in found


# --- what only the portal writes: refused at every level ---------------------------

PORTAL_CASES = [
    (
        "spec.initContainers",
        [
            {
                "name": "grab",
                "image": "busybox",
                "resources": {"limits": {"huawei.com/Ascend910B4": "8"}},
            }
        ],
        "pod_template.spec.initContainers[0].resources.limits",
    ),
    (
        "spec.containers[0].resources.requests",
        {"nvidia.com/gpu": "1"},
        f"{C0}.resources.requests",
    ),
    (
        "spec.containers[0].resources.limits",
        {"cpu": "1", "huawei.com/Ascend310P-memory": "3072"},
        f"{C0}.resources.limits",
    ),
    (
        "spec.ephemeralContainers",
        [
            {
                "name": "dbg",
                "image": "busybox",
                "resources": {"limits": {"hugepages-2Mi": "1Gi"}},
            }
        ],
        "pod_template.spec.ephemeralContainers[0].resources.limits",
    ),
    (
        "spec.containers[0].resources.claims",
        [{"name": "npu"}],
        f"{C0}.resources.claims",
    ),
    ("spec.resourceClaims", [{"name": "npu"}], "pod_template.spec.resourceClaims"),
    (
        "metadata.annotations",
        {"hami.io/vgpu-node": "node-910b4"},
        "pod_template.metadata.annotations.hami.io/vgpu-node",
    ),
    (
        "metadata.annotations",
        {"huawei.com/Ascend910B4": "[]"},
        "pod_template.metadata.annotations.huawei.com/Ascend910B4",
    ),
    (
        "metadata.annotations",
        {"scheduling.volcano.sh/queue-name": "prod"},
        "pod_template.metadata.annotations.scheduling.volcano.sh/queue-name",
    ),
    (
        "metadata.labels",
        {"vnpu-portal/request": "1"},
        "pod_template.metadata.labels.vnpu-portal/request",
    ),
    (
        "metadata.labels",
        {"app.kubernetes.io/managed-by": "me"},
        "pod_template.metadata.labels.app.kubernetes.io/managed-by",
    ),
    (
        "metadata.annotations",
        {"scheduling.k8s.io/group-name": "g"},
        "pod_template.metadata.annotations.scheduling.k8s.io/group-name",
    ),
    (
        "spec.containers[0].env",
        [{"name": "ASCEND_VISIBLE_DEVICES", "value": "0,1,2,3"}],
        f"{C0}.env[0].name",
    ),
    (
        "spec.containers[0].env",
        [{"name": "OK", "value": "1"}, {"name": "ASCEND_VNPU_SPECS", "value": "vir16"}],
        f"{C0}.env[1].name",
    ),
    ("spec.nodeName", "node-910b4", "pod_template.spec.nodeName"),
    (
        "spec.nodeSelector",
        {"kubernetes.io/hostname": "x"},
        "pod_template.spec.nodeSelector",
    ),
    (
        "spec.affinity",
        {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": []}},
        "pod_template.spec.affinity.nodeAffinity",
    ),
    ("spec.schedulerName", "default-scheduler", "pod_template.spec.schedulerName"),
    (
        "spec.priorityClassName",
        "system-node-critical",
        "pod_template.spec.priorityClassName",
    ),
    ("spec.priority", 2000000000, "pod_template.spec.priority"),
    ("spec.preemptionPolicy", "Never", "pod_template.spec.preemptionPolicy"),
    (
        "spec.tolerations",
        [
            {"key": "dedicated", "operator": "Equal", "value": "npu"},
            {"key": "vnpu-portal/held", "operator": "Exists"},
        ],
        "pod_template.spec.tolerations[1]",
    ),
    ("spec.tolerations", [{"operator": "Exists"}], "pod_template.spec.tolerations[0]"),
]


@pytest.mark.parametrize(("path", "value", "field"), PORTAL_CASES)
@pytest.mark.parametrize("level", list(Level))
def test_what_only_the_portal_writes_is_refused_at_every_level(
    path, value, field, level
):
    assert field in _fields(_with(RESTRICTED_OK, path, value), level)


def test_labels_env_and_tolerations_that_merely_look_alike_are_allowed():
    template = _with(
        _with(
            RESTRICTED_OK,
            "metadata.labels",
            {"example.com/hami.io": "x", "myhuawei.com/x": "y", "team": "hami.io"},
        ),
        "spec.containers[0].env",
        [{"name": "ASCEND_HOME", "value": "/usr/local/Ascend"}],
    )
    template = _with(
        template,
        "spec.tolerations",
        [
            {"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"},
            {"key": "vnpu-portal/other", "operator": "Exists"},
        ],
    )
    assert _fields(template, Level.RESTRICTED) == set()


# --- namespaces and ServiceAccounts -------------------------------------------------


def test_namespaces_default_to_default_only():
    assert _fields(RESTRICTED_OK, Level.PRIVILEGED, namespace="default") == set()
    assert _fields(RESTRICTED_OK, Level.PRIVILEGED, namespace="ci") == {"namespace"}
    assert _fields(RESTRICTED_OK, Level.PRIVILEGED, namespace="kube-system") == {
        "namespace"
    }


def test_listed_namespaces_replace_the_default_and_kube_needs_its_own_name():
    allowed = ("ci", "team-a")
    for namespace, ok in (
        ("ci", True),
        ("team-a", True),
        ("default", False),
        ("kube-system", False),
    ):
        found = _fields(
            RESTRICTED_OK,
            Level.PRIVILEGED,
            namespace=namespace,
            allowed_namespaces=allowed,
        )
        assert (found == set()) is ok, namespace
    assert (
        _fields(
            RESTRICTED_OK,
            Level.PRIVILEGED,
            namespace="kube-system",
            allowed_namespaces=("kube-system",),
        )
        == set()
    )


@pytest.mark.parametrize("key", ["serviceAccountName", "serviceAccount"])
def test_service_accounts_default_to_default_only(key):
    other = _with(RESTRICTED_OK, f"spec.{key}", "hami-scheduler")
    own = _with(RESTRICTED_OK, f"spec.{key}", "default")
    field = f"pod_template.spec.{key}"
    assert field in _fields(other, Level.PRIVILEGED)
    assert _fields(own, Level.RESTRICTED) == set()
    assert (
        _fields(other, Level.RESTRICTED, allowed_service_accounts=("hami-scheduler",))
        == set()
    )


def test_the_pod_of_the_issue_is_refused_on_every_count():
    """Issue 20: kube-system, hami-scheduler, privileged, host network and PID,
    the host's / mounted, eight whole chips in an init container, a forged
    hami.io annotation."""
    template = {
        "metadata": {"annotations": {"hami.io/vgpu-node": "node-910b4"}},
        "spec": {
            "serviceAccountName": "hami-scheduler",
            "hostNetwork": True,
            "hostPID": True,
            "initContainers": [
                {
                    "name": "grab",
                    "image": "busybox",
                    "resources": {"limits": {"huawei.com/Ascend910B4": "8"}},
                }
            ],
            "containers": [
                {
                    "name": "main",
                    "image": "busybox",
                    "securityContext": {"privileged": True},
                    "volumeMounts": [{"name": "host", "mountPath": "/host"}],
                }
            ],
            "volumes": [{"name": "host", "hostPath": {"path": "/"}}],
        },
    }
    errors = field_errors(check("kube-system", template, PodPolicy()))
    for field in (
        "namespace",
        "pod_template.spec.serviceAccountName",
        "pod_template.spec.hostNetwork",
        "pod_template.spec.hostPID",
        f"{SC0}.privileged",
        "pod_template.spec.volumes[0].hostPath",
        "pod_template.spec.initContainers[0].resources.limits",
        "pod_template.metadata.annotations.hami.io/vgpu-node",
    ):
        assert errors.get(field), (field, errors)
    # Even a privileged queue allowing kube-system refuses what only the portal writes.
    loose = PodPolicy(
        allowed_namespaces=("kube-system",),
        level=Level.PRIVILEGED,
        allowed_service_accounts=("hami-scheduler",),
    )
    assert {v.field for v in check("kube-system", template, loose)} == {
        "pod_template.spec.initContainers[0].resources.limits",
        "pod_template.metadata.annotations.hami.io/vgpu-node",
    }


def test_malformed_parts_are_treated_as_unset_not_crashed_on():
    template = {
        "metadata": "x",
        "spec": {
            "containers": [
                "x",
                {"name": "a", "securityContext": "y", "env": "z"},
                {
                    "name": "b",
                    "env": [{"name": ["ASCEND_VISIBLE_DEVICES"]}, "e"],
                    "securityContext": {
                        "capabilities": {"add": [{"x": 1}], "drop": "ALL"},
                        "seLinuxOptions": {"type": ["spc_t"]},
                        "seccompProfile": {"type": {}},
                        "procMount": [],
                    },
                    "ports": [{"hostPort": []}],
                },
            ],
            "volumes": "v",
            "securityContext": {"sysctls": [{"name": {}}, "s"], "runAsUser": []},
        },
    }
    for level in Level:
        check("default", template, PodPolicy(level=level))
    # Unhashable values where names belong are refused, never crashed on.
    fields = {v.field for v in check("default", template, PodPolicy())}
    assert "pod_template.spec.securityContext.sysctls[0].name" in fields
    assert (
        "pod_template.spec.containers[2].securityContext.seLinuxOptions.type" in fields
    )


def test_the_module_imports_no_django():
    code = (
        "import apps.scheduling.podsecurity, sys; "
        "assert not [m for m in sys.modules if m.split('.')[0] in "
        "{'django', 'rest_framework', 'celery', 'channels'}]"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# --- issue 39: references, envFrom and the shape of the spec -----------------------

# (path in the template, value, field named, kind of object, its name)
REFERENCE_CASES = [
    (
        "spec.containers[0].env",
        [{"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "sa-token"}}}],
        f"{C0}.env[0].valueFrom.secretKeyRef.name",
        "secret",
        "sa-token",
    ),
    (
        "spec.containers[0].env",
        [
            {"name": "OK", "value": "1"},
            {"name": "MODE", "valueFrom": {"configMapKeyRef": {"name": "cfg"}}},
        ],
        f"{C0}.env[1].valueFrom.configMapKeyRef.name",
        "config_map",
        "cfg",
    ),
    (
        "spec.containers[0].envFrom",
        [{"prefix": "APP_", "secretRef": {"name": "creds"}}],
        f"{C0}.envFrom[0].secretRef.name",
        "secret",
        "creds",
    ),
    (
        "spec.containers[0].envFrom",
        [{"prefix": "APP_", "configMapRef": {"name": "cfg"}}],
        f"{C0}.envFrom[0].configMapRef.name",
        "config_map",
        "cfg",
    ),
    (
        "spec.volumes[0]",
        {"name": "t", "secret": {"secretName": "hami-scheduler-token"}},
        "pod_template.spec.volumes[0].secret.secretName",
        "secret",
        "hami-scheduler-token",
    ),
    (
        "spec.volumes[0]",
        {"name": "c", "configMap": {"name": "cfg"}},
        "pod_template.spec.volumes[0].configMap.name",
        "config_map",
        "cfg",
    ),
    (
        "spec.volumes[0]",
        {
            "name": "p",
            "projected": {
                "sources": [
                    {"serviceAccountToken": {"path": "token"}},
                    {"secret": {"name": "creds"}},
                ]
            },
        },
        "pod_template.spec.volumes[0].projected.sources[1].secret.name",
        "secret",
        "creds",
    ),
    (
        "spec.volumes[0]",
        {"name": "p", "projected": {"sources": [{"configMap": {"name": "cfg"}}]}},
        "pod_template.spec.volumes[0].projected.sources[0].configMap.name",
        "config_map",
        "cfg",
    ),
    (
        "spec.volumes[0]",
        {
            "name": "c",
            "csi": {"driver": "x.csi.io", "nodePublishSecretRef": {"name": "creds"}},
        },
        "pod_template.spec.volumes[0].csi.nodePublishSecretRef.name",
        "secret",
        "creds",
    ),
    (
        "spec.imagePullSecrets",
        [{"name": "other-teams-registry"}],
        "pod_template.spec.imagePullSecrets[0].name",
        "secret",
        "other-teams-registry",
    ),
    (
        "spec.initContainers",
        [
            {
                "name": "init",
                "image": "busybox",
                "securityContext": RESTRICTED_OK["spec"]["containers"][0][
                    "securityContext"
                ],
                "env": [{"name": "T", "valueFrom": {"secretKeyRef": {"name": "s"}}}],
            }
        ],
        "pod_template.spec.initContainers[0].env[0].valueFrom.secretKeyRef.name",
        "secret",
        "s",
    ),
]


@pytest.mark.parametrize(("path", "value", "field", "kind", "name"), REFERENCE_CASES)
def test_secrets_and_config_maps_need_the_queues_allow_list(
    path, value, field, kind, name
):
    template = _with(RESTRICTED_OK, path, value)
    # None listed: none may be referenced, at any level.
    for level in Level:
        assert field in _fields(template, level), level
    errors = field_errors(check("default", template, PodPolicy()))
    assert (
        f"allowed_{'secrets' if kind == 'secret' else 'config_maps'}"
        in (errors[field][0])
    )
    # Another name listed: still refused, and the answer says what is allowed.
    other = {f"allowed_{kind}s": ("something-else",)}
    errors = field_errors(check("default", template, PodPolicy(**other)))
    assert "something-else" in errors[field][0]
    # Its name listed: allowed.
    listed = {f"allowed_{kind}s": (name,)}
    assert _fields(template, Level.RESTRICTED, **listed) == set()


def test_ephemeral_containers_references_are_named_too():
    template = _with(
        RESTRICTED_OK,
        "spec.ephemeralContainers",
        [
            {
                "name": "dbg",
                "image": "busybox",
                "envFrom": [{"secretRef": {"name": "s"}}],
            }
        ],
    )
    found = _fields(template, Level.PRIVILEGED)
    assert "pod_template.spec.ephemeralContainers[0].envFrom[0].secretRef.name" in found
    assert "pod_template.spec.ephemeralContainers[0].envFrom[0].prefix" in found


def test_a_projected_service_account_token_is_the_pods_own_and_allowed():
    template = _with(
        RESTRICTED_OK,
        "spec.volumes[0]",
        {
            "name": "token",
            "projected": {
                "sources": [
                    {"serviceAccountToken": {"path": "t", "audience": "vault"}},
                    {"downwardAPI": {"items": []}},
                ]
            },
        },
    )
    assert _fields(template, Level.RESTRICTED) == set()


@pytest.mark.parametrize(
    "prefix",
    [None, "", "A", "ASCEND_", "ASCEND_VISIBLE_", "NPU_", "ASCEND_VISIBLE_DEVICES"],
)
@pytest.mark.parametrize("source", ["configMapRef", "secretRef"])
def test_env_from_may_not_make_a_device_plugin_variable(prefix, source):
    """Issue 39: ``envFrom`` brought ``ASCEND_VISIBLE_DEVICES`` in; the kubelet puts
    the container's env after the device plugin's, so it won. Even a source the
    queue allows: the portal cannot see its keys, only the prefix."""
    entry: dict[str, Any] = {source: {"name": "cfg"}}
    if prefix is not None:
        entry["prefix"] = prefix
    template = _with(RESTRICTED_OK, "spec.containers[0].envFrom", [entry])
    for level in Level:
        found = _fields(
            template, level, allowed_secrets=("cfg",), allowed_config_maps=("cfg",)
        )
        assert found == {f"{C0}.envFrom[0].prefix"}, (level, found)


@pytest.mark.parametrize("prefix", ["APP_", "ascend_", "X", "CFG_ASCEND_"])
def test_env_from_with_a_prefix_no_reserved_name_begins_with_is_allowed(prefix):
    template = _with(
        RESTRICTED_OK,
        "spec.initContainers",
        [
            {
                **RESTRICTED_OK["spec"]["containers"][0],
                "name": "init",
                "envFrom": [{"prefix": prefix, "configMapRef": {"name": "cfg"}}],
            }
        ],
    )
    assert _fields(template, Level.RESTRICTED, allowed_config_maps=("cfg",)) == set()


# (path in the template, value, field named): refused at every level.
SHAPE_CASES = [
    ("spec.hostNetwork", "true", "pod_template.spec.hostNetwork"),
    ("spec.HostNetwork", True, "pod_template.spec.HostNetwork"),
    ("spec.hostPID", 1, "pod_template.spec.hostPID"),
    ("spec.hostnetwork", True, "pod_template.spec.hostnetwork"),
    (
        "spec.volumes",
        {"host": {"hostPath": {"path": "/"}}},
        "pod_template.spec.volumes",
    ),
    (
        "spec.volumes",
        [{"name": "s", "emptyDir": {}}, "x"],
        "pod_template.spec.volumes[1]",
    ),
    ("spec.ephemeralContainers", [], "pod_template.spec.ephemeralContainers"),
    (
        "spec.ephemeralContainers",
        [{"name": "dbg", "image": "busybox"}],
        "pod_template.spec.ephemeralContainers",
    ),
    (
        "spec.schedulingGates",
        [{"name": "example.com/wait"}],
        "pod_template.spec.schedulingGates",
    ),
    ("spec.initContainers", {"name": "x"}, "pod_template.spec.initContainers"),
    ("spec.tolerations", "all", "pod_template.spec.tolerations"),
    (
        "spec.containers[0].securityContext.privileged",
        "true",
        f"{SC0}.privileged",
    ),
    (
        "spec.containers[0].securityContext.runAsNonRoot",
        "false",
        f"{SC0}.runAsNonRoot",
    ),
    ("spec.containers[0].securityContext.runAsUser", "0", f"{SC0}.runAsUser"),
    (
        "spec.securityContext.runAsUser",
        0.0,
        "pod_template.spec.securityContext.runAsUser",
    ),
    (
        "spec.containers[0].securityContext.windowsOptions",
        {"hostProcess": "true"},
        f"{SC0}.windowsOptions.hostProcess",
    ),
    (
        "spec.containers[0].securityContext.capabilities",
        {"drop": "ALL"},
        f"{SC0}.capabilities.drop",
    ),
    ("spec.containers[0].securityContext", "privileged", SC0),
    ("spec.containers[0].env", {"ASCEND_VISIBLE_DEVICES": "0"}, f"{C0}.env"),
    (
        "spec.containers[0].env",
        [{"name": ["ASCEND_VISIBLE_DEVICES"], "value": "0"}],
        f"{C0}.env[0].name",
    ),
    (
        "spec.containers[0].envFrom",
        {"configMapRef": {"name": "cfg"}},
        f"{C0}.envFrom",
    ),
    ("spec.containers[0].ports", [{"hostPort": "80"}], f"{C0}.ports[0].hostPort"),
]


@pytest.mark.parametrize(("path", "value", "field"), SHAPE_CASES)
@pytest.mark.parametrize("level", list(Level))
def test_fields_of_the_wrong_type_or_case_are_refused_at_every_level(
    path, value, field, level
):
    """Issue 39: the checks read these as unset, and relied on the API server."""
    assert field in _fields(_with(RESTRICTED_OK, path, value), level)


def test_every_pod_spec_field_of_kubernetes_1_35_is_known():
    from apps.scheduling.podfields import POD_SPEC_FIELDS

    assert len(POD_SPEC_FIELDS) == 42
    assert {"hostUsers", "resourceClaims", "hostnameOverride", "workloadRef"} <= set(
        POD_SPEC_FIELDS
    )
    # An unknown key says which known one it is, if only the case differs.
    errors = field_errors(
        check("default", _with(RESTRICTED_OK, "spec.HostNetwork", True), PodPolicy())
    )
    assert "did you mean hostNetwork?" in errors["pod_template.spec.HostNetwork"][0]


def test_null_is_unset_not_a_type_error():
    template = _with(
        _with(RESTRICTED_OK, "spec.hostNetwork", None),
        "spec.containers[0].securityContext.privileged",
        None,
    )
    assert _fields(template, Level.RESTRICTED) == set()


def test_every_reference_and_shape_error_comes_at_once():
    template = _with(
        _with(
            _with(RESTRICTED_OK, "spec.hostNetwork", "true"),
            "spec.volumes[0]",
            {"name": "t", "secret": {"secretName": "token"}},
        ),
        "spec.containers[0].envFrom",
        [{"configMapRef": {"name": "cfg"}}],
    )
    assert {
        "pod_template.spec.hostNetwork",
        "pod_template.spec.volumes[0].secret.secretName",
        f"{C0}.envFrom[0].prefix",
        f"{C0}.envFrom[0].configMapRef.name",
    } <= _fields(template, Level.PRIVILEGED)
