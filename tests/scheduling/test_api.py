"""The REST API of requests, queues and preemptions: roles, tokens, errors, idempotency."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from apps.accounts.services import token_create, user_ensure
from apps.scheduling.choices import ProposalState, RequestState
from apps.scheduling.models import PreemptionProposal, Queue, QueueQuota, Request
from tests.scheduling.helpers import run_pass

pytestmark = pytest.mark.django_db

BODY = {
    "namespace": "ci",
    "chip_type": "Ascend310P",
    "memory": 5000,
    "priority": "batch-medium",
    "workload": {"image": "busybox", "command": ["sleep", "60"], "env": {"A": "1"}},
}


def _body(world, **changes):
    return {"cluster": world.cluster.name, **BODY, **changes}


def _token_client(username: str, role: str, queues: list[str] | None = None):
    user = user_ensure(username=username, role=role, is_service_account=True)
    issued = token_create(user=user, queues=queues)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {issued.plaintext}")
    return client


def world_request_env(request_id: int) -> list:
    from apps.scheduling.models import Request

    return Request.objects.get(pk=request_id).workload["env"]


def test_submit_poll_and_cancel(world, operator_client):
    created = operator_client.post(
        "/api/requests/", _body(world, idempotency_key="job-1"), format="json"
    )
    assert created.status_code == 201, created.json()
    body = created.json()
    assert body["state"] == RequestState.PENDING
    assert body["queue"] == "default"
    assert body["priority"] == "batch-medium"
    assert body["priority_value"] == 1000
    assert body["position"] == 1
    # env values are secrets: stored for the pod, never shown (issue 20)
    assert body["workload"]["env"] == [{"name": "A", "value": "***"}]
    assert world_request_env(body["id"]) == [{"name": "A", "value": "1"}]

    shown = operator_client.get(f"/api/requests/{body['id']}/").json()
    assert shown["reason"]
    assert shown["position"] == 1

    cancelled = operator_client.delete(f"/api/requests/{body['id']}/")
    assert cancelled.status_code == 200
    assert cancelled.json()["state"] == RequestState.CANCELLED
    assert cancelled.json()["position"] is None


def test_the_same_idempotency_key_returns_the_same_request(world, operator_client):
    first = operator_client.post(
        "/api/requests/", _body(world, idempotency_key="job-7"), format="json"
    )
    again = operator_client.post(
        "/api/requests/", _body(world, idempotency_key="job-7"), format="json"
    )
    assert (first.status_code, again.status_code) == (201, 200)
    assert first.json()["id"] == again.json()["id"]
    assert Request.objects.count() == 1

    other = operator_client.post(
        "/api/requests/",
        _body(world, idempotency_key="job-7", memory=9000),
        format="json",
    )
    assert other.status_code == 409
    assert other.json()["code"] == "idempotency_conflict"
    assert "idempotency_key" in other.json()["detail"]
    assert Request.objects.count() == 1


def test_without_a_key_every_post_is_a_new_request(world, operator_client):
    for _ in range(2):
        assert (
            operator_client.post(
                "/api/requests/", _body(world), format="json"
            ).status_code
            == 201
        )
    assert Request.objects.count() == 2


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"cluster": "nope"}, "cluster"),
        ({"namespace": "Bad_NS"}, "namespace"),
        ({"chip_type": "Ascend999"}, "chip_type"),
        ({"memory": 99999}, "memory"),
        ({"memory": -1}, "memory"),
        ({"template": "vir99", "memory": None}, "template"),
        ({"template": "vir02"}, "memory"),  # memory and template both given
        ({"memory": None}, "memory"),  # neither
        ({"priority": "ultra"}, "priority"),
        ({"queue": "nope"}, "queue"),
        ({"workload": None}, "workload"),
        ({"workload": {"command": ["x"]}}, "workload.image"),
        ({"workload": {"image": "x", "env": {"1BAD": "x"}}}, "workload.env"),
        ({"workload": {"image": "x", "grace_seconds": -1}}, "workload.grace_seconds"),
        (
            {"workload": {"image": "x", "grace_seconds": 3601}},
            "workload.grace_seconds",
        ),
        (
            {"workload": {"image": "x", "grace_seconds": "soon"}},
            "workload.grace_seconds",
        ),
        ({"time_limit_seconds": 0}, "time_limit_seconds"),
        ({"idempotency_key": "has space"}, "idempotency_key"),
        (
            {
                "workload": None,
                "pod_template": {
                    "spec": {
                        "nodeName": "n",
                        "containers": [{"name": "a", "image": "b"}],
                    }
                },
            },
            "pod_template.spec.nodeName",
        ),
        (
            {
                "workload": None,
                "pod_template": {"spec": {"containers": [{"name": "a"}]}},
            },
            "pod_template.spec.containers[0].image",
        ),
        (
            {
                "workload": None,
                "pod_template": {
                    "spec": {
                        "containers": [
                            {
                                "name": "a",
                                "image": "b",
                                "resources": {"limits": {"huawei.com/Ascend310P": "1"}},
                            }
                        ]
                    }
                },
            },
            "pod_template.spec.containers[0].resources.limits",
        ),
        ({"workload": None, "pod_template": "yaml?"}, "pod_template"),
    ],
)
def test_bad_input_is_a_400_naming_the_field_and_writes_nothing(
    world, operator_client, changes, field
):
    queues = list(Queue.objects.values_list("name", flat=True))
    response = operator_client.post(
        "/api/requests/", _body(world, **changes), format="json"
    )
    assert response.status_code == 400, response.json()
    assert field in response.json()["errors"], response.json()
    assert Request.objects.count() == 0
    assert list(Queue.objects.values_list("name", flat=True)) == queues


def test_every_mistake_against_the_cluster_comes_in_one_400(world, operator_client):
    """A form shows all of them at once, not one more per submit."""
    body = _body(world, chip_type="Ascend999", priority="urgentest")
    response = operator_client.post("/api/requests/", body, format="json")
    assert response.status_code == 400, response.json()
    errors = response.json()["errors"]
    assert "no chip type 'Ascend999'" in errors["chip_type"][0]
    assert "no PriorityClass 'urgentest'" in errors["priority"][0]
    assert Request.objects.count() == 0


def test_priority_defaults_to_the_clusters_global_default(world, operator_client):
    from apps.inventory.models import PriorityClass

    body = _body(world)
    del body["priority"]
    assert (
        operator_client.post("/api/requests/", body, format="json").status_code == 400
    )
    PriorityClass.objects.filter(name="batch-low").update(global_default=True)
    response = operator_client.post("/api/requests/", body, format="json")
    assert response.status_code == 201
    assert response.json()["priority"] == "batch-low"


def test_roles(world, viewer_client, operator_client, admin_client_api):
    assert (
        viewer_client.post("/api/requests/", _body(world), format="json").status_code
        == 403
    )
    created = operator_client.post("/api/requests/", _body(world), format="json").json()
    assert viewer_client.get("/api/requests/").status_code == 200
    assert viewer_client.delete(f"/api/requests/{created['id']}/").status_code == 403


def test_only_the_submitter_or_an_admin_cancels(
    world, operator_client, admin_client_api
):
    created = operator_client.post("/api/requests/", _body(world), format="json").json()
    other = _token_client("other-op", "operator", queues=["default"])
    assert other.delete(f"/api/requests/{created['id']}/").status_code == 403
    response = admin_client_api.delete(f"/api/requests/{created['id']}/")
    assert response.status_code == 200
    assert response.json()["state"] == RequestState.CANCELLED


def test_a_token_limited_to_queues_only_sees_and_acts_on_them(world, operator_client):
    world.queue("ci")
    world.queue("prod")
    elsewhere = operator_client.post(
        "/api/requests/", _body(world, queue="prod"), format="json"
    ).json()
    ci = _token_client("ci-bot", "operator", queues=["ci"])

    refused = ci.post("/api/requests/", _body(world, queue="prod"), format="json")
    assert refused.status_code == 403
    assert refused.json()["message"].startswith("queue:")
    assert "queue" in refused.json()["detail"]
    # the default queue is a queue too
    assert ci.post("/api/requests/", _body(world), format="json").status_code == 403

    mine = ci.post("/api/requests/", _body(world, queue="ci"), format="json")
    assert mine.status_code == 201
    listed = ci.get("/api/requests/").json()["results"]
    assert [r["id"] for r in listed] == [mine.json()["id"]]
    assert ci.get("/api/requests/?queue=prod").status_code == 403
    detail = ci.get(f"/api/requests/{elsewhere['id']}/")
    assert detail.status_code == 403
    assert "queue" in detail.json()["message"]
    assert ci.delete(f"/api/requests/{elsewhere['id']}/").status_code == 403
    assert Request.objects.get(pk=elsewhere["id"]).state == RequestState.PENDING


def test_createtoken_with_queue_gives_a_token_limited_to_it(world, capsys):
    world.queue("ci")
    call_command("createtoken", "pipeline", "--role", "operator", "--queue", "ci")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {capsys.readouterr().out.strip()}")
    assert (
        client.post(
            "/api/requests/", _body(world, queue="ci"), format="json"
        ).status_code
        == 201
    )
    assert client.post("/api/requests/", _body(world), format="json").status_code == 403


def test_positions_follow_priority_then_age(world, operator_client):
    ids = [
        operator_client.post(
            "/api/requests/", _body(world, priority=p), format="json"
        ).json()["id"]
        for p in ("batch-low", "inference-high", "batch-low")
    ]
    rows = {
        r["id"]: r["position"]
        for r in operator_client.get("/api/requests/?state=pending").json()["results"]
    }
    assert rows == {ids[1]: 1, ids[0]: 2, ids[2]: 3}


def test_positions_are_counted_in_one_query_with_every_tie_broken(
    world, operator_client, django_assert_num_queries
):
    from django.utils import timezone

    from apps.scheduling.selectors import queue_positions

    priorities = ["batch-low", "inference-high", "batch-medium"] * 4
    ids = [
        operator_client.post(
            "/api/requests/", _body(world, priority=p), format="json"
        ).json()["id"]
        for p in priorities
    ]
    # Four submitted in the same instant: the id breaks their tie.
    Request.objects.filter(pk__in=ids[4:8]).update(created_at=timezone.now())
    rows = list(Request.objects.filter(pk__in=ids))
    expected = sorted(rows, key=lambda r: (-r.priority, r.created_at, r.pk))
    with django_assert_num_queries(1):
        positions = queue_positions(rows)
    assert positions == {r.pk: n for n, r in enumerate(expected, start=1)}
    # one request alone knows how many are ahead of it
    last = expected[-1]
    assert queue_positions([last]) == {last.pk: len(ids)}
    assert queue_positions([]) == {}


def test_queue_admin(world, admin_client_api, operator_client):
    body = {
        "cluster": world.cluster.pk,
        "name": "ci",
        "description": "pipelines",
        "allowed_namespaces": ["ci"],
        "open_to_all": True,
        "quotas": [
            {"chip_type": "Ascend310P", "memory_limit": 12288, "slots_limit": 2}
        ],
    }
    assert operator_client.post("/api/queues/", body, format="json").status_code == 403
    created = admin_client_api.post("/api/queues/", body, format="json")
    assert created.status_code == 201, created.json()
    queue = created.json()
    assert queue["quotas"] == [
        {"chip_type": "Ascend310P", "memory_limit": 12288, "slots_limit": 2}
    ]
    again = admin_client_api.post("/api/queues/", body, format="json")
    assert again.status_code == 400
    assert "name" in again.json()["errors"]
    bad = admin_client_api.post(
        "/api/queues/",
        {**body, "name": "x", "quotas": [{"chip_type": "Nope"}]},
        format="json",
    )
    assert bad.status_code == 400
    assert "quotas[0].chip_type" in bad.json()["errors"]
    bad_name = admin_client_api.post(
        "/api/queues/", {**body, "name": "Not A Name"}, format="json"
    )
    assert bad_name.status_code == 400
    assert "name" in bad_name.json()["errors"]

    changed = admin_client_api.patch(
        f"/api/queues/{queue['id']}/",
        {"quotas": [{"chip_type": "Ascend910B4", "slots_limit": 1}]},
        format="json",
    )
    assert changed.status_code == 200
    assert [q["chip_type"] for q in changed.json()["quotas"]] == ["Ascend910B4"]
    assert QueueQuota.objects.count() == 1

    operator_client.post("/api/requests/", _body(world, queue="ci"), format="json")
    shown = operator_client.get(f"/api/queues/{queue['id']}/").json()
    assert shown["usage"] == [
        {
            "chip_type": "Ascend310P",
            "memory_used": 0,
            "slots_used": 0,
            "pending": 1,
            "running": 0,
        }
    ]
    in_use = admin_client_api.delete(f"/api/queues/{queue['id']}/")
    assert in_use.status_code == 409


def test_preemption_api(world, operator, operator_client, admin_client_api, fake_ops):
    (chip,) = world.chips("Ascend310P", 1)
    world.slice(chip, "big", "vir04", priority=100)
    world.slice(chip, "mid", "vir02", priority=1000)
    world.slice(chip, "small", "vir01", priority=1000)
    request = world.request(
        operator, template="vir04", memory=None, priority="inference-high"
    )
    run_pass(world.cluster)
    proposal = PreemptionProposal.objects.get()

    listed = operator_client.get(
        f"/api/preemptions/?chip={chip.pk}&queue=default&state=pending"
    ).json()["results"]
    assert [p["id"] for p in listed] == [proposal.pk]
    assert listed[0]["victims"][0]["pod"] == "big"
    assert listed[0]["request"] == request.pk
    assert operator_client.get("/api/preemptions/?queue=other").json()["results"] == []
    assert operator_client.get("/api/preemptions/?state=done").json()["results"] == []

    url = f"/api/preemptions/{proposal.pk}"
    assert (
        operator_client.post(
            f"{url}/approve/", {"reason": "x"}, format="json"
        ).status_code
        == 403
    )
    no_reason = admin_client_api.post(f"{url}/approve/", {}, format="json")
    assert no_reason.status_code == 400
    assert "reason" in no_reason.json()["errors"]
    approved = admin_client_api.post(
        f"{url}/approve/", {"reason": "urgent"}, format="json"
    )
    assert approved.status_code == 200, approved.json()
    assert approved.json()["state"] == ProposalState.APPROVED
    assert approved.json()["decided_by"] == "ada"
    again = admin_client_api.post(f"{url}/reject/", {"reason": "oops"}, format="json")
    assert again.status_code == 409
    assert again.json()["code"] == "proposal_decided"


def test_a_queue_is_created_by_name_alone_or_with_the_clusters_name(
    world, admin_client_api
):
    made = admin_client_api.post(
        "/api/queues/", {"name": "ci", "allowed_namespaces": ["ci"]}, format="json"
    )
    assert made.status_code == 201, made.json()
    assert made.json()["cluster"] == world.cluster.pk
    assert made.json()["allowed_namespaces"] == ["ci"]
    by_name = admin_client_api.post(
        "/api/queues/",
        {"cluster": world.cluster.name, "name": "nightly"},
        format="json",
    )
    assert by_name.status_code == 201, by_name.json()
    unknown = admin_client_api.post(
        "/api/queues/", {"cluster": "nowhere", "name": "x"}, format="json"
    )
    assert unknown.status_code == 400
    assert list(unknown.json()["errors"]) == ["cluster"]

    # With two clusters, the name alone no longer says which one.
    from apps.inventory.models import Cluster

    Cluster.objects.create(name="second")
    count = Queue.objects.count()
    ambiguous = admin_client_api.post("/api/queues/", {"name": "x"}, format="json")
    assert ambiguous.status_code == 400
    assert list(ambiguous.json()["errors"]) == ["cluster"]
    assert Queue.objects.count() == count


def test_a_submission_reads_its_queue_once(world):
    """The checks find the queue, and the insert uses that row (issue 38: a
    POST's CPU is mostly its queries; it read the queue three times)."""
    client = _token_client("ci-queries", "operator", ["default"])
    first = client.post(
        "/api/requests/", _body(world, idempotency_key="q0"), format="json"
    )
    assert first.status_code == 201, first.json()
    with CaptureQueriesContext(connection) as queries:
        answer = client.post(
            "/api/requests/", _body(world, idempotency_key="q1"), format="json"
        )
    assert answer.status_code == 201, answer.json()
    reads = [
        q["sql"]
        for q in queries.captured_queries
        if q["sql"].startswith("SELECT") and 'FROM "scheduling_queue"' in q["sql"]
    ]
    assert len(reads) == 1, reads
    # Nor is the new request read back for its answer: it holds its rows.
    read_back = [
        q["sql"]
        for q in queries.captured_queries
        if q["sql"].startswith('SELECT "scheduling_request"."id", ')
        and 'JOIN "inventory_cluster"' in q["sql"]
    ]
    assert read_back == []
    assert answer.json()["queue"] == "default"
    assert answer.json()["submitted_by"] == "ci-queries"


def test_a_workloads_grace_period_reaches_its_pod_and_only_when_given(
    world, operator_client, fake_ops
):
    """``workload.grace_seconds`` is the pod's terminationGracePeriodSeconds
    (how long a release, preemption or drain waits for the container); a
    workload without it is stored as before it existed, and its pod gets
    Kubernetes' default."""
    world.chips("Ascend310P", 1)
    quick = {**BODY["workload"], "grace_seconds": 5}
    given = operator_client.post(
        "/api/requests/",
        _body(world, workload=quick, idempotency_key="quick"),
        format="json",
    )
    plain = operator_client.post(
        "/api/requests/", _body(world, idempotency_key="plain"), format="json"
    )
    assert (given.status_code, plain.status_code) == (201, 201), given.json()
    assert given.json()["workload"]["grace_seconds"] == 5
    assert "grace_seconds" not in plain.json()["workload"]
    # the same body again is the same request; another grace is another body
    again = operator_client.post(
        "/api/requests/",
        _body(world, workload=quick, idempotency_key="quick"),
        format="json",
    )
    assert (again.status_code, again.json()["id"]) == (200, given.json()["id"])
    other = operator_client.post(
        "/api/requests/",
        _body(world, workload={**quick, "grace_seconds": 6}, idempotency_key="quick"),
        format="json",
    )
    assert other.status_code == 409, other.json()

    run_pass(world.cluster)
    pods = {
        request.idempotency_key: fake_ops.pods[("ci", request.pod_name)]["spec"]
        for request in Request.objects.exclude(pod_name="")
    }
    assert set(pods) == {"quick", "plain"}
    assert pods["quick"]["terminationGracePeriodSeconds"] == 5
    assert "terminationGracePeriodSeconds" not in pods["plain"]
