"""The portal as deploy/'s ServiceAccount under the real API server's RBAC.

deploy/'s namespace and RBAC are applied to the real cluster; the portal
connects with a token the real TokenRequest API issued for that
ServiceAccount and runs every kind of call it makes (sync's list and watch,
the live device-config read and the guarded publish, restarts and their
state, admission's pod calls, eviction, events). The real API server's audit
log says what was asked and what was refused: nothing may be refused, and the
calls are exactly those of apps.common.kube_permissions. The server's own
answer to "what may this ServiceAccount do" (SelfSubjectRulesReview) must be
that list and nothing more.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from apps.common.kube_permissions import granted_atoms
from apps.inventory import services
from apps.inventory.choices import ConnectionKind
from tests.deploy.conftest import DEPLOY
from tests.deploy.portal_calls import (
    NODE_CONFIG_MAP,
    POD_NAMES,
    QUEUE_NAME,
    make_every_portal_call,
    refusals_beyond_the_grant,
)

pytestmark = [
    pytest.mark.realstack,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]
NAMESPACE, ACCOUNT = "vnpu-system", "vnpuportal"
USER = f"system:serviceaccount:{NAMESPACE}:{ACCOUNT}"
# Every authenticated identity may ask what it may do (system:basic-user).
SELF_REVIEWS = {
    ("authorization.k8s.io", "selfsubjectaccessreviews", "create", "*"),
    ("authorization.k8s.io", "selfsubjectrulesreviews", "create", "*"),
    ("authentication.k8s.io", "selfsubjectreviews", "create", "*"),
}


@pytest.fixture
def portal_token(kube_stack) -> Iterator[str]:
    for manifest in ("00-namespace.yaml", "10-rbac.yaml"):
        kube_stack.kubectl("apply", "-f", str(DEPLOY / manifest))
    namespace, name, key = NODE_CONFIG_MAP
    kube_stack.kubectl(
        "create", "configmap", name, "-n", namespace, f"--from-literal={key}=nodes: []"
    )
    yield kube_stack.kubectl(
        "create", "token", ACCOUNT, "-n", NAMESPACE, "--duration=2h"
    ).stdout.strip()
    # the guide stack is shared: it had no node config before this test
    kube_stack.kubectl(
        "delete", "configmap", name, "-n", namespace, "--ignore-not-found", check=False
    )


@pytest.fixture
def portal_cluster(kube_stack, portal_token, settings, tmp_path, kube_core):
    settings.LOCK_DIR = str(tmp_path / "locks")
    settings.VOLCANO_SCHEDULER_CONFIGMAP = "volcano-system/volcano-scheduler-configmap"
    settings.DEVICE_PLUGIN_DAEMONSET = "kube-system/hami-ascend-device-plugin"
    settings.WATCHED_DEPLOYMENTS = [
        "volcano-system/volcano-scheduler",
        "kube-system/hami-scheduler",
    ]
    before = kube_core.read_namespaced_config_map(
        "hami-scheduler-device", "kube-system"
    )
    yield services.cluster_create(
        actor=None,
        name="rbac",
        connection=ConnectionKind.TOKEN,
        api_url=kube_stack.url,
        token=portal_token,
        ca_cert=kube_stack.ca_pem.decode(),
    )
    # Leave the device config and the processes that read it as they were.
    kube_core.patch_namespaced_config_map(
        "hami-scheduler-device", "kube-system", {"data": before.data}
    )
    kube_stack.device_plugin.reload()
    kube_stack.restart_volcano_scheduler()


def _atom(event: dict) -> tuple[str, str, str, str]:
    ref = event["objectRef"]
    resource = ref["resource"] + (
        f"/{ref['subresource']}" if ref.get("subresource") else ""
    )
    wanted = granted_atoms()
    general = (ref.get("apiGroup", ""), resource, event["verb"], "*")
    if general in wanted:
        return general
    return (ref.get("apiGroup", ""), resource, event["verb"], ref.get("name", "*"))


def test_the_portal_needs_exactly_what_deploy_grants(
    kube_stack, portal_cluster, admin_user, cleanup
):
    cleanup.extend(("default", name) for name in POD_NAMES)
    try:
        make_every_portal_call(
            portal_cluster,
            admin_user,
            watch_seconds=3.0,
            touch_queue=lambda name: kube_stack.kubectl(
                "annotate", "queue", name, "example.com/touched=yes"
            ),
        )
    finally:
        kube_stack.kubectl(
            "delete", "queue", QUEUE_NAME, "--ignore-not-found", check=False
        )

    made = kube_stack.audit_events(USER)
    assert len(made) > 20
    refused = sorted(
        (e["verb"], e["requestURI"])
        for e in made
        if e.get("responseStatus", {}).get("code") in (401, 403)
    )
    # then the real RBAC refused nothing the portal does
    assert refused == []
    # and the portal used every permission it is granted, and nothing else
    assert {_atom(e) for e in made if "objectRef" in e} == granted_atoms()


def _rules_review_atoms(kube_stack, token: str, namespace: str) -> set[tuple]:
    from kubernetes import client

    configuration = client.Configuration()
    configuration.host = kube_stack.url
    configuration.ssl_ca_cert = str(kube_stack.pki.ca_cert)
    configuration.api_key = {"authorization": f"Bearer {token}"}
    api = client.ApiClient(configuration)
    review = client.AuthorizationV1Api(api).create_self_subject_rules_review(
        {"spec": {"namespace": namespace}}
    )
    atoms = set()
    for rule in review.status.resource_rules:
        for group in rule.api_groups or [""]:
            for resource in rule.resources or []:
                for verb in rule.verbs:
                    for name in rule.resource_names or ["*"]:
                        atoms.add((group, resource, verb, name))
    return atoms


def test_the_real_api_server_grants_no_more_than_the_list(
    kube_stack, portal_cluster, portal_token
):
    for namespace in ("default", "kube-system", NAMESPACE):
        granted = _rules_review_atoms(kube_stack, portal_token, namespace)
        assert granted - SELF_REVIEWS == granted_atoms(), namespace

    answers = refusals_beyond_the_grant(portal_cluster)
    assert [status for _, _, status in answers] == [403] * len(answers), answers
