"""Issue 20: a request's pod never carries more power than its submitter has.

A CI token limited to queue ``ci`` tries each attack of the issue through
``/api/requests/`` and gets a 400 naming the field, with nothing written. Only
admins set a queue's pod policy; a policy tightened after submission stops the
pod when it is built.
"""

from __future__ import annotations

import copy

import pytest
from rest_framework.test import APIClient

from apps.accounts.services import token_create, user_ensure
from apps.audit.models import AuditEvent
from apps.scheduling.choices import RequestState
from apps.scheduling.models import Queue, Request
from tests.scheduling.helpers import run_pass

pytestmark = pytest.mark.django_db

C0 = "pod_template.spec.containers[0]"
# A pod that meets "restricted": each attack changes one thing in it.
SAFE_TEMPLATE = {
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
            }
        ],
    }
}


def _template(**spec_changes):
    template = copy.deepcopy(SAFE_TEMPLATE)
    template["spec"].update(spec_changes)
    return template


def _container(**changes):
    container = copy.deepcopy(SAFE_TEMPLATE["spec"]["containers"][0])
    container.update(changes)
    return container


ATTACKS = [
    ({"namespace": "kube-system"}, "namespace"),
    (
        {"pod_template": _template(serviceAccountName="hami-scheduler")},
        "pod_template.spec.serviceAccountName",
    ),
    (
        {
            "pod_template": _template(
                containers=[
                    _container(
                        securityContext={
                            **SAFE_TEMPLATE["spec"]["containers"][0]["securityContext"],
                            "privileged": True,
                        }
                    )
                ]
            )
        },
        f"{C0}.securityContext.privileged",
    ),
    ({"pod_template": _template(hostNetwork=True)}, "pod_template.spec.hostNetwork"),
    ({"pod_template": _template(hostPID=True)}, "pod_template.spec.hostPID"),
    (
        {
            "pod_template": _template(
                volumes=[{"name": "host", "hostPath": {"path": "/"}}]
            )
        },
        "pod_template.spec.volumes[0].hostPath",
    ),
    (
        {
            "pod_template": _template(
                initContainers=[
                    _container(
                        name="grab",
                        resources={"limits": {"huawei.com/Ascend910B4": "8"}},
                    )
                ]
            )
        },
        "pod_template.spec.initContainers[0].resources.limits",
    ),
    (
        {
            "pod_template": {
                **_template(),
                "metadata": {"annotations": {"hami.io/vgpu-node": "node-910b4"}},
            }
        },
        "pod_template.metadata.annotations.hami.io/vgpu-node",
    ),
    (
        {
            "pod_template": _template(
                containers=[
                    _container(env=[{"name": "ASCEND_VISIBLE_DEVICES", "value": "0"}])
                ]
            )
        },
        f"{C0}.env[0].name",
    ),
    (
        {"workload": {"image": "busybox", "env": {"ASCEND_VISIBLE_DEVICES": "0"}}},
        "workload.env[0].name",
    ),
    (
        {"pod_template": _template(priorityClassName="system-node-critical")},
        "pod_template.spec.priorityClassName",
    ),
    (
        {"pod_template": _template(schedulerName="default-scheduler")},
        "pod_template.spec.schedulerName",
    ),
    (
        {"pod_template": _template(nodeName="node-910b4")},
        "pod_template.spec.nodeName",
    ),
    (
        {"pod_template": _template(containers=[{"name": "main", "image": "busybox"}])},
        f"{C0}.securityContext.allowPrivilegeEscalation",
    ),
    # Issue 39: references around the policy, and fields of the wrong type or case.
    (
        {
            "pod_template": _template(
                containers=[_container(envFrom=[{"configMapRef": {"name": "chips"}}])]
            )
        },
        f"{C0}.envFrom[0].prefix",
    ),
    (
        {
            "pod_template": _template(
                containers=[
                    _container(
                        envFrom=[{"prefix": "ASCEND_", "secretRef": {"name": "s"}}]
                    )
                ]
            )
        },
        f"{C0}.envFrom[0].prefix",
    ),
    (
        {
            "pod_template": _template(
                containers=[
                    _container(
                        env=[
                            {
                                "name": "TOKEN",
                                "valueFrom": {
                                    "secretKeyRef": {
                                        "name": "hami-scheduler-token",
                                        "key": "token",
                                    }
                                },
                            }
                        ]
                    )
                ]
            )
        },
        f"{C0}.env[0].valueFrom.secretKeyRef.name",
    ),
    (
        {
            "pod_template": _template(
                volumes=[
                    {"name": "t", "secret": {"secretName": "hami-scheduler-token"}}
                ]
            )
        },
        "pod_template.spec.volumes[0].secret.secretName",
    ),
    (
        {
            "pod_template": _template(
                volumes=[{"name": "c", "configMap": {"name": "other-team"}}]
            )
        },
        "pod_template.spec.volumes[0].configMap.name",
    ),
    ({"pod_template": _template(hostNetwork="true")}, "pod_template.spec.hostNetwork"),
    ({"pod_template": _template(HostNetwork=True)}, "pod_template.spec.HostNetwork"),
    (
        {"pod_template": _template(volumes={"host": {"hostPath": {"path": "/"}}})},
        "pod_template.spec.volumes",
    ),
    (
        {
            "pod_template": _template(
                ephemeralContainers=[{"name": "dbg", "image": "busybox"}]
            )
        },
        "pod_template.spec.ephemeralContainers",
    ),
    (
        {"pod_template": _template(schedulingGates=[{"name": "example.com/gate"}])},
        "pod_template.spec.schedulingGates",
    ),
]


def _ci_client():
    user = user_ensure(username="ci-bot", role="operator", is_service_account=True)
    issued = token_create(user=user, queues=["ci"])
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {issued.plaintext}")
    return client


def _body(world, **changes):
    body = {
        "cluster": world.cluster.name,
        "namespace": "ci",
        "queue": "ci",
        "chip_type": "Ascend310P",
        "memory": 5000,
        "priority": "batch-medium",
        **changes,
    }
    if "pod_template" in changes:
        body.pop("workload", None)
    elif "workload" not in changes:
        body["pod_template"] = copy.deepcopy(SAFE_TEMPLATE)
    return body


@pytest.mark.parametrize(("changes", "field"), ATTACKS)
def test_a_queue_limited_ci_token_gets_400_naming_the_field(world, changes, field):
    world.queue("ci", namespaces=("ci",))
    response = _ci_client().post(
        "/api/requests/", _body(world, **changes), format="json"
    )
    assert response.status_code == 400, response.json()
    assert field in response.json()["errors"], response.json()
    assert not Request.objects.exists()


def test_a_pod_within_the_policy_is_accepted_and_built_as_submitted(world, fake_ops):
    world.queue("ci", namespaces=("ci",))
    world.chips("Ascend310P", 1)
    response = _ci_client().post("/api/requests/", _body(world), format="json")
    assert response.status_code == 201, response.json()
    run_pass(world.cluster)
    request = Request.objects.get()
    assert request.state == RequestState.ADMITTED, request.reason
    pod = fake_ops.pods[("ci", request.pod_name)]
    assert pod["spec"]["securityContext"]["runAsNonRoot"] is True


def test_a_workload_pod_meets_its_queues_level(world, fake_ops, operator):
    world.chips("Ascend310P", 2)
    restricted = world.request(operator)
    run_pass(world.cluster)
    pod = fake_ops.pods[("ci", Request.objects.get(pk=restricted.pk).pod_name)]
    assert pod["spec"]["containers"][0]["securityContext"] == {
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"]},
        "runAsNonRoot": True,
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    world.queue("default", namespaces=("ci",), pod_security="baseline")
    plain = world.request(operator)
    run_pass(world.cluster)
    pod = fake_ops.pods[("ci", Request.objects.get(pk=plain.pk).pod_name)]
    assert "securityContext" not in pod["spec"]["containers"][0]


def test_a_policy_tightened_after_submission_stops_the_pod(world, fake_ops):
    queue = world.queue("ci", namespaces=("ci",), pod_security="baseline")
    world.chips("Ascend310P", 1)
    response = _ci_client().post(
        "/api/requests/",
        _body(world, pod_template={"spec": {"containers": [_container(name="a")]}}),
        format="json",
    )
    assert response.status_code == 201, response.json()
    # Stored while baseline allowed it; the admin then moves the queue to restricted.
    queue.pod_security = "restricted"
    queue.save()
    run_pass(world.cluster)
    request = Request.objects.get()
    assert request.state == RequestState.FAILED
    assert "pod policy of queue ci" in request.reason
    assert f"{C0}.securityContext.runAsNonRoot" in request.reason
    assert not fake_ops.pods


def test_only_admins_set_a_queues_pod_policy(world, admin_client_api, operator_client):
    body = {
        "cluster": world.cluster.pk,
        "name": "team",
        "allowed_namespaces": ["team-a", "kube-system"],
        "pod_security": "baseline",
        "allowed_service_accounts": ["trainer"],
    }
    assert operator_client.post("/api/queues/", body, format="json").status_code == 403
    created = admin_client_api.post("/api/queues/", body, format="json")
    assert created.status_code == 201, created.json()
    shown = created.json()
    assert shown["allowed_namespaces"] == ["kube-system", "team-a"]
    assert shown["pod_security"] == "baseline"
    assert shown["allowed_service_accounts"] == ["trainer"]

    url = f"/api/queues/{shown['id']}/"
    refused = operator_client.patch(url, {"pod_security": "privileged"}, format="json")
    assert refused.status_code == 403
    assert Queue.objects.get(pk=shown["id"]).pod_security == "baseline"

    changed = admin_client_api.patch(
        url, {"pod_security": "privileged", "allowed_namespaces": []}, format="json"
    )
    assert changed.status_code == 200, changed.json()
    assert changed.json()["pod_security"] == "privileged"
    assert changed.json()["allowed_namespaces"] == []
    assert changed.json()["allowed_service_accounts"] == ["trainer"]
    event = AuditEvent.objects.filter(action="queue.update").latest("pk")
    assert event.before["pod_security"] == "baseline"
    assert event.after["pod_security"] == "privileged"


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"pod_security": "root"}, "pod_security"),
        ({"allowed_namespaces": ["Bad_NS"]}, "allowed_namespaces[0]"),
        ({"allowed_namespaces": "ci"}, "allowed_namespaces"),
        ({"allowed_service_accounts": ["ok", "no way"]}, "allowed_service_accounts[1]"),
    ],
)
def test_a_malformed_policy_is_a_400_naming_the_field(
    world, admin_client_api, changes, field
):
    queue = world.queue("ci")
    response = admin_client_api.patch(
        f"/api/queues/{queue.pk}/", changes, format="json"
    )
    assert response.status_code == 400, response.json()
    assert field in response.json()["errors"], response.json()
    queue.refresh_from_db()
    assert queue.pod_security == "restricted"
    assert queue.allowed_namespaces == ["ci"]


# --- issue 39: Secrets and ConfigMaps by the queue's allow lists --------------------

REFERENCING = _template(
    containers=[
        _container(
            envFrom=[{"prefix": "CFG_", "configMapRef": {"name": "ci-config"}}],
            env=[
                {
                    "name": "TOKEN",
                    "valueFrom": {"secretKeyRef": {"name": "ci-creds", "key": "t"}},
                }
            ],
            volumeMounts=[{"name": "creds", "mountPath": "/creds"}],
        )
    ],
    volumes=[{"name": "creds", "secret": {"secretName": "ci-creds"}}],
)


def test_references_the_queue_allows_are_accepted_and_built(world, fake_ops):
    world.queue(
        "ci",
        namespaces=("ci",),
        allowed_secrets=["ci-creds"],
        allowed_config_maps=["ci-config"],
    )
    world.chips("Ascend310P", 1)
    response = _ci_client().post(
        "/api/requests/", _body(world, pod_template=REFERENCING), format="json"
    )
    assert response.status_code == 201, response.json()
    run_pass(world.cluster)
    request = Request.objects.get()
    assert request.state == RequestState.ADMITTED, request.reason
    pod = fake_ops.pods[("ci", request.pod_name)]
    assert pod["spec"]["volumes"][0]["secret"] == {"secretName": "ci-creds"}


def test_every_reference_not_allowed_is_named_in_one_400(world):
    world.queue("ci", namespaces=("ci",), allowed_secrets=["other"])
    template = copy.deepcopy(REFERENCING)
    template["spec"]["hostNetwork"] = "true"
    template["spec"]["containers"][0]["envFrom"][0]["prefix"] = ""
    response = _ci_client().post(
        "/api/requests/", _body(world, pod_template=template), format="json"
    )
    assert response.status_code == 400, response.json()
    errors = response.json()["errors"]
    assert {
        f"{C0}.envFrom[0].prefix",
        f"{C0}.envFrom[0].configMapRef.name",
        f"{C0}.env[0].valueFrom.secretKeyRef.name",
        "pod_template.spec.volumes[0].secret.secretName",
        "pod_template.spec.hostNetwork",
    } <= set(errors), errors
    assert "other" in errors["pod_template.spec.volumes[0].secret.secretName"][0]
    assert not Request.objects.exists()


def test_an_allow_list_shortened_after_submission_stops_the_pod(world, fake_ops):
    queue = world.queue(
        "ci",
        namespaces=("ci",),
        allowed_secrets=["ci-creds"],
        allowed_config_maps=["ci-config"],
    )
    world.chips("Ascend310P", 1)
    response = _ci_client().post(
        "/api/requests/", _body(world, pod_template=REFERENCING), format="json"
    )
    assert response.status_code == 201, response.json()
    queue.allowed_secrets = []
    queue.save()
    run_pass(world.cluster)
    request = Request.objects.get()
    assert request.state == RequestState.FAILED
    assert "pod_template.spec.volumes[0].secret.secretName" in request.reason
    assert not fake_ops.pods


def test_admins_set_a_queues_secrets_and_config_maps(world, admin_client_api):
    created = admin_client_api.post(
        "/api/queues/",
        {
            "cluster": world.cluster.pk,
            "name": "team",
            "allowed_secrets": ["b-creds", "a-creds", "b-creds"],
            "allowed_config_maps": ["cfg.v2"],
        },
        format="json",
    )
    assert created.status_code == 201, created.json()
    shown = created.json()
    # Stored sorted and without repeats.
    assert shown["allowed_secrets"] == ["a-creds", "b-creds"]
    assert shown["allowed_config_maps"] == ["cfg.v2"]
    queue = Queue.objects.get(pk=shown["id"])
    assert queue.allowed_secrets == ["a-creds", "b-creds"]
    assert AuditEvent.objects.get(action="queue.create").after["allowed_secrets"] == [
        "a-creds",
        "b-creds",
    ]

    url = f"/api/queues/{shown['id']}/"
    changed = admin_client_api.patch(
        url, {"allowed_secrets": [], "allowed_config_maps": ["x", "x"]}, format="json"
    )
    assert changed.status_code == 200, changed.json()
    assert changed.json()["allowed_secrets"] == []
    assert changed.json()["allowed_config_maps"] == ["x"]
    event = AuditEvent.objects.filter(action="queue.update").latest("pk")
    assert event.before["allowed_secrets"] == ["a-creds", "b-creds"]
    assert event.after["allowed_secrets"] == []
    assert event.before["allowed_config_maps"] == ["cfg.v2"]
    assert event.after["allowed_config_maps"] == ["x"]
    # A queue made before the fields existed lists none (the default).
    assert (
        admin_client_api.get(f"/api/queues/{world.queue('ci').pk}/").json()[
            "allowed_secrets"
        ]
        == []
    )


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"allowed_secrets": ["ok", "Not_A_Name"]}, "allowed_secrets[1]"),
        ({"allowed_secrets": ["-creds"]}, "allowed_secrets[0]"),
        # Over 253 characters: the serializer's check, in DRF's spelling.
        ({"allowed_config_maps": ["a" * 254]}, "allowed_config_maps.0"),
        ({"allowed_config_maps": ["UPPER"]}, "allowed_config_maps[0]"),
        ({"allowed_secrets": "creds"}, "allowed_secrets"),
    ],
)
def test_a_malformed_allow_list_is_a_400_naming_the_entry(
    world, admin_client_api, changes, field
):
    queue = world.queue("ci", allowed_secrets=["kept"])
    response = admin_client_api.patch(
        f"/api/queues/{queue.pk}/", changes, format="json"
    )
    assert response.status_code == 400, response.json()
    assert field in response.json()["errors"], response.json()
    queue.refresh_from_db()
    assert queue.allowed_secrets == ["kept"]
    assert queue.allowed_config_maps == []


def test_the_allow_lists_are_validated_on_create_too(world, admin_client_api):
    response = admin_client_api.post(
        "/api/queues/",
        {
            "cluster": world.cluster.pk,
            "name": "team",
            "allowed_secrets": ["a b"],
            "allowed_config_maps": ["ok", "no/slash"],
        },
        format="json",
    )
    assert response.status_code == 400, response.json()
    assert {"allowed_secrets[0]", "allowed_config_maps[1]"} <= set(
        response.json()["errors"]
    )
    assert not Queue.objects.filter(name="team").exists()
