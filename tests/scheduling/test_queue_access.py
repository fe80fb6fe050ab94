"""Who may use a queue, and with which PriorityClass (issue 39, third probe).

Each test here failed before ``apps/scheduling/access.py``: any submitter could
take the cluster's highest PriorityClass (and win an auto-approved
preemption with it), any operator or unscoped token could use any queue, and
a token limited to queue ``ci`` of one cluster matched ``ci`` of every cluster.
"""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group
from rest_framework.test import APIClient

from apps.accounts.models import ApiToken
from apps.accounts.services import token_create, user_ensure
from apps.audit.models import AuditEvent
from apps.inventory.models import Cluster, PriorityClass
from apps.scheduling.choices import ProposalState, RequestState
from apps.scheduling.models import PreemptionProposal, Queue, Request
from tests.scheduling.helpers import run_pass

pytestmark = pytest.mark.django_db

BODY = {
    "namespace": "ci",
    "chip_type": "Ascend310P",
    "memory": 5000,
    "workload": {"image": "busybox", "command": ["sleep", "60"]},
}


def _body(world, **changes):
    return {
        "cluster": world.cluster.name,
        "priority": "batch-medium",
        **BODY,
        **changes,
    }


def _client(token: ApiToken | None = None, user=None, plaintext: str = ""):
    client = APIClient()
    if plaintext:
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {plaintext}")
    else:
        client.force_authenticate(user=user)
    return client


def _ci_token(username: str, queues: list[str]) -> APIClient:
    user = user_ensure(username=username, role="ci", is_service_account=True)
    return _client(plaintext=token_create(user=user, queues=queues).plaintext)


@pytest.fixture
def system_class(world):
    return PriorityClass.objects.create(
        cluster=world.cluster, name="system-node-critical", value=2000001000
    )


# -- PriorityClass ceiling ---------------------------------------------------


def test_a_ci_token_cannot_take_a_system_priority_class(world, system_class):
    world.queue("ci")
    client = _ci_token("bot", ["ci"])
    answer = client.post(
        "/api/requests/",
        _body(world, queue="ci", priority="system-node-critical"),
        format="json",
    )
    assert answer.status_code == 400, answer.json()
    assert "system PriorityClass" in answer.json()["errors"]["priority"][0]
    assert not Request.objects.exists()


def test_a_queue_that_names_a_system_class_allows_it(world, system_class, operator):
    world.queue("infra", system_priority_classes=["system-node-critical"])
    answer = _client(user=operator).post(
        "/api/requests/",
        _body(world, queue="infra", priority="system-node-critical"),
        format="json",
    )
    assert answer.status_code == 201, answer.json()


def test_a_class_above_the_queue_ceiling_is_refused_naming_priority(world, operator):
    world.queue("batch", max_priority=1000)
    client = _client(user=operator)
    high = client.post(
        "/api/requests/",
        _body(world, queue="batch", priority="inference-high"),
        format="json",
    )
    assert high.status_code == 400, high.json()
    assert "max_priority 1000" in high.json()["errors"]["priority"][0]
    at_the_ceiling = client.post(
        "/api/requests/", _body(world, queue="batch"), format="json"
    )
    assert at_the_ceiling.status_code == 201, at_the_ceiling.json()


@pytest.fixture
def full(world, fake_ops):
    """One 310P chip full of low-priority pods of another team."""
    (chip,) = world.chips("Ascend310P", 1)
    world.slice(chip, "big", "vir04", priority=100, age_seconds=600)
    world.slice(chip, "mid", "vir02", priority=100)
    world.slice(chip, "small", "vir01", priority=100)
    for name in ("big", "mid", "small"):
        fake_ops.add_pod("default", name)
    return chip


def test_a_lowered_ceiling_stops_auto_approval_and_the_pod(
    world, operator, full, fake_ops, settings
):
    settings.PREEMPTION_AUTO_APPROVE_PRIORITY_GAP = 50000
    queue = world.queue("urgent")
    request = world.request(
        operator,
        template="vir04",
        memory=None,
        priority="inference-high",
        queue="urgent",
    )
    Queue.objects.filter(pk=queue.pk).update(max_priority=1000)
    run_pass(world.cluster)
    proposal = PreemptionProposal.objects.get()
    # An admin may still approve; the portal does not on its own.
    assert proposal.state == ProposalState.PENDING
    assert proposal.auto_approved is False
    assert [c for c in fake_ops.calls if c[0] == "evict_pod"] == []
    request.refresh_from_db()
    assert request.state == RequestState.PENDING


def test_a_lowered_ceiling_fails_the_request_when_its_pod_is_built(
    world, operator, fake_ops
):
    world.chips("Ascend310P", 1)
    queue = world.queue("urgent")
    request = world.request(
        operator,
        template="vir01",
        memory=None,
        priority="inference-high",
        queue="urgent",
    )
    Queue.objects.filter(pk=queue.pk).update(max_priority=1000)
    run_pass(world.cluster)
    request.refresh_from_db()
    assert request.state == RequestState.FAILED
    assert "max_priority 1000" in request.reason
    assert [c for c in fake_ops.calls if c[0] == "create_pod"] == []


# -- Queue membership --------------------------------------------------------


@pytest.fixture
def privileged(world):
    """An admin-made queue for system work: members only."""
    return world.queue(
        "infra",
        namespaces=("kube-system",),
        open_to_all=False,
        pod_security="privileged",
        allowed_service_accounts=["hami-scheduler"],
    )


def _infra_body(world):
    return _body(world, queue="infra", namespace="kube-system")


def test_an_operator_who_is_not_a_member_cannot_use_a_members_queue(
    world, privileged, operator
):
    answer = _client(user=operator).post(
        "/api/requests/", _infra_body(world), format="json"
    )
    assert answer.status_code == 403, answer.json()
    assert "not a member" in answer.json()["detail"]["queue"][0]
    assert not Request.objects.exists()


def test_members_by_name_or_group_and_admins_may_use_it(
    world, privileged, operator, admin_user
):
    privileged.members.add(operator)
    assert (
        _client(user=operator)
        .post("/api/requests/", _infra_body(world), format="json")
        .status_code
        == 201
    )
    grouped = user_ensure(username="sre", role="operator")
    team = Group.objects.create(name="sre-team")
    grouped.groups.add(team)
    privileged.member_groups.add(team)
    assert (
        _client(user=grouped)
        .post("/api/requests/", _infra_body(world), format="json")
        .status_code
        == 201
    )
    assert (
        _client(user=admin_user)
        .post("/api/requests/", _infra_body(world), format="json")
        .status_code
        == 201
    )


def test_an_unscoped_token_of_an_earlier_release_is_held_to_membership(
    world, privileged
):
    user = user_ensure(username="old-bot", role="ci", is_service_account=True)
    issued = token_create(user=user, queues=["infra"])
    ApiToken.objects.filter(pk=issued.token.pk).update(queue_ids=[])  # as migrated
    answer = _client(plaintext=issued.plaintext).post(
        "/api/requests/", _infra_body(world), format="json"
    )
    assert answer.status_code == 403, answer.json()


# -- Tokens: queues by cluster and name, every non-admin token bound ------


@pytest.fixture
def second_cluster(world):
    other = Cluster.objects.create(name="other")
    Queue.objects.create(cluster=other, name="ci", open_to_all=True)
    return other


def test_a_token_for_ci_of_one_cluster_does_not_match_ci_of_another(
    world, second_cluster
):
    world.queue("ci")
    client = _ci_token("bot", [f"{second_cluster.name}/ci"])
    answer = client.post("/api/requests/", _body(world, queue="ci"), format="json")
    assert answer.status_code == 403, answer.json()
    assert answer.json()["detail"]["queue"] == ["not allowed for this token: 'ci'"]
    own = _ci_token("bot2", [f"{world.cluster.name}/ci"])
    assert (
        own.post("/api/requests/", _body(world, queue="ci"), format="json").status_code
        == 201
    )


def test_a_bare_queue_name_of_several_clusters_is_a_400_naming_it(
    world, second_cluster, admin_client_api
):
    world.queue("ci")
    answer = admin_client_api.post(
        "/api/tokens/",
        {"username": "bot", "role": "ci", "queues": ["ci"]},
        format="json",
    )
    assert answer.status_code == 400, answer.json()
    assert "cluster/queue" in answer.json()["errors"]["queues[0]"][0]
    from django.contrib.auth import get_user_model

    assert not get_user_model().objects.filter(username="bot").exists()


def test_a_non_admin_token_must_name_its_queues(world, admin_client_api):
    answer = admin_client_api.post(
        "/api/tokens/", {"username": "bot", "role": "ci"}, format="json"
    )
    assert answer.status_code == 400, answer.json()
    assert "queues" in answer.json()["errors"]
    assert not ApiToken.objects.exists()
    admin_token = admin_client_api.post(
        "/api/tokens/", {"username": "root-bot", "role": "admin"}, format="json"
    )
    assert admin_token.status_code == 201, admin_token.json()
    assert admin_token.json()["queues"] == []


def test_a_token_shows_its_queues_as_cluster_and_name(world, admin_client_api):
    world.queue("ci")
    answer = admin_client_api.post(
        "/api/tokens/",
        {"username": "bot", "role": "ci", "queues": ["ci"]},
        format="json",
    )
    assert answer.status_code == 201, answer.json()
    assert answer.json()["queues"] == [f"{world.cluster.name}/ci"]


def test_a_role_changed_by_issuing_a_token_is_audited(
    world, admin_client_api, admin_user
):
    world.queue("ci")
    user_ensure(username="person", role="viewer")
    answer = admin_client_api.post(
        "/api/tokens/",
        {"username": "person", "role": "operator", "queues": ["ci"]},
        format="json",
    )
    assert answer.status_code == 201, answer.json()
    event = AuditEvent.objects.get(action="user.role", after__role="operator")
    assert event.before == {"role": "viewer"}
    assert event.actor_id == admin_user.pk


# -- The queue API ---------------------------------------------------------


def test_an_admin_sets_who_may_use_a_queue(world, admin_client_api, operator):
    created = admin_client_api.post(
        "/api/queues/",
        {
            "cluster": world.cluster.name,
            "name": "team-a",
            "members": [operator.username],
            "member_groups": ["team-a-devs"],
            "max_priority": 1000,
        },
        format="json",
    )
    assert created.status_code == 201, created.json()
    body = created.json()
    assert body["open_to_all"] is False
    assert body["members"] == [operator.username]
    assert body["member_groups"] == ["team-a-devs"]
    assert body["max_priority"] == 1000


def test_an_unknown_member_is_a_400_naming_it_and_writes_nothing(
    world, admin_client_api
):
    answer = admin_client_api.post(
        "/api/queues/",
        {"cluster": world.cluster.name, "name": "team-b", "members": ["nobody"]},
        format="json",
    )
    assert answer.status_code == 400, answer.json()
    assert answer.json()["errors"] == {"members[0]": ["no user 'nobody'"]}
    assert not Queue.objects.filter(name="team-b").exists()
