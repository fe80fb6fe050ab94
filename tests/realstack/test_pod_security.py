"""The portal's Pod Security verdict agrees with the real API server's (issue 20).

Two namespaces carry the real Pod Security admission's label
``pod-security.kubernetes.io/enforce`` (``restricted`` and ``baseline``). For
each template of a corpus, the pod the portal would build from it
(``pods.pod_manifest``: Volcano, priority class, node affinity, chip pin, vNPU
resources) is created with a server-side dry run, and the API server's answer
(created, or 403 "violates PodSecurity") must be the portal's verdict at that
level. The corpus is the pure tests' cases (tests/scheduling/test_podsecurity.py),
each one change away from a pod that meets ``restricted``; none touches the
fields only the portal writes, which the API server would allow.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from apps.scheduling.pods import pod_manifest, vnpu_resources
from apps.scheduling.podsecurity import Level, PodPolicy, check, portal_field_violations
from tests.scheduling.test_podsecurity import (
    BASELINE_CASES,
    BASELINE_ONLY,
    RESTRICTED_CASES,
    RESTRICTED_OK,
    _with,
)

pytestmark = [pytest.mark.realstack, pytest.mark.slow]

LEVELS = (Level.RESTRICTED, Level.BASELINE)
# Changes the API server refuses as invalid (422) on RESTRICTED_OK, before Pod
# Security sees them: a Windows host process needs a Windows pod on the host
# network; privileged contradicts allowPrivilegeEscalation: false; Unmasked
# /proc needs a user namespace. MORE holds valid variants of the last two.
INVALID_ALONE = {
    "spec.containers[0].securityContext.windowsOptions",
    "spec.containers[0].securityContext.privileged",
    "spec.containers[0].securityContext.procMount",
}
IN_USER_NAMESPACE = _with(RESTRICTED_OK, "spec.hostUsers", False)
MORE = [
    ("restricted pod", RESTRICTED_OK),
    ("plain pod", BASELINE_ONLY),
    (
        "privileged container",
        _with(BASELINE_ONLY, "spec.containers[0].securityContext.privileged", True),
    ),
    ("user namespace", IN_USER_NAMESPACE),
    (
        "Unmasked /proc in a user namespace",
        _with(
            IN_USER_NAMESPACE,
            "spec.containers[0].securityContext.procMount",
            "Unmasked",
        ),
    ),
    (
        "root in a user namespace",
        _with(IN_USER_NAMESPACE, "spec.containers[0].securityContext.runAsUser", 0),
    ),
    (
        "NET_BIND_SERVICE added",
        _with(
            RESTRICTED_OK,
            "spec.containers[0].securityContext.capabilities.add",
            ["NET_BIND_SERVICE"],
        ),
    ),
    (
        "safe sysctl",
        _with(
            RESTRICTED_OK,
            "spec.securityContext.sysctls",
            [{"name": "net.ipv4.tcp_syncookies", "value": "1"}],
        ),
    ),
    (
        "localhost seccomp",
        _with(
            RESTRICTED_OK,
            "spec.securityContext.seccompProfile",
            {"type": "Localhost", "localhostProfile": "profiles/audit.json"},
        ),
    ),
    (
        "projected volume",
        _with(
            RESTRICTED_OK,
            "spec.volumes[0]",
            {"name": "scratch", "projected": {"sources": []}},
        ),
    ),
    (
        "non-root uid",
        _with(RESTRICTED_OK, "spec.containers[0].securityContext.runAsUser", 1000),
    ),
    (
        "container_t SELinux",
        _with(
            RESTRICTED_OK,
            "spec.containers[0].securityContext.seLinuxOptions",
            {"type": "container_t"},
        ),
    ),
    (
        "container-level settings only",
        _with(
            _with(RESTRICTED_OK, "spec.securityContext", {}),
            "spec.containers[0].securityContext",
            {
                "allowPrivilegeEscalation": False,
                "capabilities": {"drop": ["ALL"]},
                "runAsNonRoot": True,
                "seccompProfile": {"type": "RuntimeDefault"},
            },
        ),
    ),
    (
        "privileged init container",
        _with(
            RESTRICTED_OK,
            "spec.initContainers",
            [
                {
                    "name": "init",
                    "image": "busybox",
                    "securityContext": {"privileged": True},
                }
            ],
        ),
    ),
]


def _corpus() -> list[tuple[str, dict[str, Any]]]:
    corpus = list(MORE)
    for path, value, field, _ in BASELINE_CASES + RESTRICTED_CASES:
        if path not in INVALID_ALONE:
            corpus.append((field, _with(RESTRICTED_OK, path, value)))
    return corpus


def _manifest_args(name: str, namespace: str) -> dict[str, Any]:
    return {
        "name": name,
        "namespace": namespace,
        "request_id": 1,
        "attempt": 0,
        "queue": "default",
        "priority_class": "batch-medium",
        "common_word": "Ascend310P",
        "chip_uuid": "uuid-0",
        "node_hostname": "node-310p3",
        "resources": vnpu_resources(
            "huawei.com/Ascend310P", "huawei.com/Ascend310P-memory", 3072
        ),
    }


def _pod(name: str, namespace: str, template: dict[str, Any]) -> dict[str, Any]:
    return pod_manifest(
        **_manifest_args(name, namespace),
        workload=None,
        pod_template=copy.deepcopy(template),
    )


def _api_server_allows(core: Any, namespace: str, pod: dict[str, Any]) -> bool | str:
    """True when a dry-run create passes; False when Pod Security forbids it.

    Any other refusal (the pod is invalid whatever the level) is returned as
    its message: such a template tests nothing and the corpus must not hold it.
    """
    from kubernetes.client.rest import ApiException

    try:
        core.create_namespaced_pod(namespace, pod, dry_run="All")
    except ApiException as error:
        if error.status == 403 and "violates PodSecurity" in (error.body or ""):
            return False
        return f"{error.status} {error.body}"
    return True


@pytest.fixture(scope="module")
def pss_namespaces(kube_stack):
    """One namespace per level, enforced by the real Pod Security admission.

    Made once for the module: a deleted namespace lingers while it terminates,
    so a second test could not make it again under the same name.
    """
    from kubernetes import client

    kube_core = client.CoreV1Api(kube_stack.kubernetes_client())
    names = {level: f"pss-{level.value}" for level in LEVELS}
    for level, name in names.items():
        kube_core.create_namespace(
            client.V1Namespace(
                metadata=client.V1ObjectMeta(
                    name=name,
                    labels={"pod-security.kubernetes.io/enforce": level.value},
                )
            )
        )
    yield names
    for name in names.values():
        kube_stack.kubectl(
            "delete",
            "namespace",
            name,
            "--wait=false",
            "--ignore-not-found",
            check=False,
        )


def test_the_portals_verdict_is_the_real_pod_security_admissions(
    kube_core, pss_namespaces
):
    corpus = _corpus()
    assert len(corpus) > 25
    disagreements = []
    invalid = []
    refused = dict.fromkeys(LEVELS, 0)
    for index, (label, template) in enumerate(corpus):
        # Only the Pod Security part is compared: the corpus stays clear of
        # what the portal refuses at every level.
        spec, metadata = template["spec"], template.get("metadata") or {}
        assert not portal_field_violations(metadata, spec), label
        for level, namespace in pss_namespaces.items():
            policy = PodPolicy(allowed_namespaces=(namespace,), level=level)
            portal = not check(namespace, template, policy)
            real = _api_server_allows(
                kube_core, namespace, _pod(f"pss-{index}", namespace, template)
            )
            if isinstance(real, str):
                invalid.append(f"{label}: {real[:300]}")
                continue
            refused[level] += not real
            if portal != real:
                disagreements.append(
                    f"{label} at {level}: portal {'allows' if portal else 'refuses'}, "
                    f"API server {'allows' if real else 'refuses'}"
                )
    assert not invalid, "\n".join(invalid)
    assert not disagreements, "\n".join(disagreements)
    # The corpus exercises both answers at both levels.
    assert 0 < refused[Level.BASELINE] < refused[Level.RESTRICTED] < len(corpus)


def test_a_workload_pod_is_built_to_meet_its_queues_level(kube_core, pss_namespaces):
    """A ``workload`` request has no template: the portal's own container must
    pass the real admission at the queue's level (and would not without the
    securityContext it adds for restricted)."""
    from apps.scheduling.selectors import workload_security_context

    workload = {"image": "busybox", "command": ["sleep", "60"], "env": []}
    for level, namespace in pss_namespaces.items():
        built = _workload_pod(namespace, workload, workload_security_context(level))
        assert _api_server_allows(kube_core, namespace, built) is True, level
    bare = _workload_pod(pss_namespaces[Level.RESTRICTED], workload, None)
    assert (
        _api_server_allows(kube_core, pss_namespaces[Level.RESTRICTED], bare) is False
    )


def _workload_pod(
    namespace: str, workload: dict[str, Any], security: dict[str, Any] | None
) -> dict[str, Any]:
    return pod_manifest(
        **_manifest_args("pss-workload", namespace),
        workload=workload,
        pod_template=None,
        security_context=security,
    )


# Issue 39: what the portal refuses at every level although Pod Security has no
# say in it (references around the pod policy, fields of the wrong type or
# case, fields a request's pod has no business with). For each, what the real
# API server does with it in both enforced namespaces: "created" marks where
# the portal is stricter on purpose (the API server cannot know which Secrets
# and ConfigMaps are a queue's, nor that an envFrom key could override the
# device plugin's variables; it drops an unknown field such as HostNetwork with
# a warning, and admits a gated pod that Volcano would then never bind),
# "invalid" where the API server refuses it too, but only because it is not a
# valid pod (the portal no longer relies on that).
_ENV_FROM = "spec.containers[0].envFrom"
STRICTER = [
    (
        "envFrom without a prefix",
        _with(RESTRICTED_OK, _ENV_FROM, [{"configMapRef": {"name": "chips"}}]),
        "created",
    ),
    (
        "envFrom with the prefix ASCEND_",
        _with(
            RESTRICTED_OK,
            _ENV_FROM,
            [{"prefix": "ASCEND_", "secretRef": {"name": "s"}}],
        ),
        "created",
    ),
    (
        "envFrom of a Secret not listed, with a safe prefix",
        _with(
            RESTRICTED_OK, _ENV_FROM, [{"prefix": "APP_", "secretRef": {"name": "s"}}]
        ),
        "created",
    ),
    (
        "secretKeyRef of a ServiceAccount token Secret",
        _with(
            RESTRICTED_OK,
            "spec.containers[0].env",
            [
                {
                    "name": "T",
                    "valueFrom": {
                        "secretKeyRef": {"name": "hami-scheduler-token", "key": "token"}
                    },
                }
            ],
        ),
        "created",
    ),
    (
        "secret volume",
        _with(
            RESTRICTED_OK,
            "spec.volumes[0]",
            {"name": "t", "secret": {"secretName": "hami-scheduler-token"}},
        ),
        "created",
    ),
    (
        "configMap volume",
        _with(
            RESTRICTED_OK, "spec.volumes[0]", {"name": "c", "configMap": {"name": "c"}}
        ),
        "created",
    ),
    (
        "HostNetwork (wrong case)",
        _with(RESTRICTED_OK, "spec.HostNetwork", True),
        "created",
    ),
    (
        "schedulingGates",
        _with(RESTRICTED_OK, "spec.schedulingGates", [{"name": "example.com/gate"}]),
        "created",
    ),
    (
        "hostNetwork as a string",
        _with(RESTRICTED_OK, "spec.hostNetwork", "true"),
        "invalid",
    ),
    (
        "volumes as a map",
        _with(RESTRICTED_OK, "spec.volumes", {"scratch": {"emptyDir": {}}}),
        "invalid",
    ),
    (
        "ephemeralContainers",
        _with(
            RESTRICTED_OK,
            "spec.ephemeralContainers",
            [{"name": "dbg", "image": "busybox"}],
        ),
        "invalid",
    ),
]


def test_the_portal_is_stricter_than_the_api_server_where_it_must_be(
    kube_core, pss_namespaces
):
    outcomes = []
    for index, (label, template, expected) in enumerate(STRICTER):
        for level, namespace in pss_namespaces.items():
            # The portal refuses it at every level, the loosest included.
            for portal_level in Level:
                policy = PodPolicy(allowed_namespaces=(namespace,), level=portal_level)
                assert check(namespace, template, policy), (label, portal_level)
            real = _api_server_allows(
                kube_core, namespace, _pod(f"strict-{index}", namespace, template)
            )
            got = (
                "created"
                if real is True
                else "forbidden"
                if real is False
                else "invalid"
            )
            if got != expected:
                outcomes.append(f"{label} at {level}: API server {got}: {real}")
    assert not outcomes, "\n".join(outcomes)
