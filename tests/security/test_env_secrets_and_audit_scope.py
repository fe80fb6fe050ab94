"""Env values are secrets, and the audit log is scoped like the requests (issue 20).

Before: a token limited to queue ``ci`` read other queues' request bodies,
env values included, through ``/api/audit-events/``, and every viewer saw
every env value in ``/api/requests/``.
"""

from __future__ import annotations

import json

import pytest
from rest_framework.test import APIClient

from apps.accounts.services import token_create, user_ensure
from apps.common.redaction import (
    REDACTED,
    env_redacted,
    payload_redacted,
    pod_template_redacted,
)

pytestmark = pytest.mark.django_db

SECRET = "hunter2-do-not-show"
PLAIN = "plain-visible-3"
TEMPLATE_SECRET = "template-secret-77"


@pytest.fixture
def scene(guide_cluster, operator, admin_user, viewer, settings):
    from apps.inventory.models import PriorityClass
    from apps.scheduling.services.queues import queue_create
    from apps.scheduling.services.requests import request_create

    settings.THROTTLE_RATES = {
        "login": "1000/min",
        "token": "100000/min",
        "request_create": "1000/min",
    }
    PriorityClass.objects.create(
        cluster=guide_cluster, name="batch-low", value=100, global_default=True
    )
    queue_create(
        actor=admin_user,
        cluster=guide_cluster,
        name="ci",
        access={"open_to_all": True},
    )
    # baseline: the pod template below is about secrets, not Pod Security; it
    # reads the Secret "s", which the queue must list (issue 39)
    queue_create(
        actor=admin_user,
        cluster=guide_cluster,
        name="other",
        pod_security="baseline",
        allowed_secrets=["s"],
        access={"open_to_all": True},
    )
    ci_user = user_ensure(username="ci-bot", role="ci", is_service_account=True)
    ci_token = token_create(user=ci_user, queues=["ci"])

    def submit(user, queue, token=None, **body):
        request, _ = request_create(
            actor=user,
            token=token,
            cluster=guide_cluster.pk,
            namespace="default",
            chip_type="Ascend310P",
            memory=3072,
            queue=queue,
            **body,
        )
        return request

    elsewhere = submit(
        operator,
        "other",
        workload={
            "image": "busybox",
            "env": [
                {"name": "PASSWORD", "value": SECRET},
                {"name": "EPOCHS", "value": PLAIN, "secret": False},
            ],
        },
    )
    templated = submit(
        operator,
        "other",
        pod_template={
            "spec": {
                "containers": [
                    {
                        "name": "main",
                        "image": "busybox",
                        "env": [
                            {"name": "TOKEN", "value": TEMPLATE_SECRET},
                            {
                                "name": "FROM_SECRET",
                                "valueFrom": {
                                    "secretKeyRef": {"name": "s", "key": "k"}
                                },
                            },
                        ],
                    }
                ]
            }
        },
    )
    own = submit(
        ci_user, "ci", ci_token.token, workload={"image": "busybox", "env": {"K": "v"}}
    )
    return {
        "ci": ci_token.plaintext,
        "viewer": token_create(user=viewer, queues=["ci", "other"]).plaintext,
        "admin": token_create(user=admin_user).plaintext,
        "elsewhere": elsewhere,
        "templated": templated,
        "own": own,
    }


def _client(token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


def _all_pages(client: APIClient, path: str) -> list[dict]:
    rows: list[dict] = []
    url: str | None = path
    while url:
        body = client.get(url).json()
        rows.extend(body["results"])
        url = body.get("next")
    return rows


def test_a_queue_limited_token_sees_no_audit_event_of_another_queues_request(scene):
    client = _client(scene["ci"])
    rows = _all_pages(client, "/api/audit-events/?page_size=500")
    about_requests = {
        int(r["object_id"]) for r in rows if r["object_type"] == "request"
    }
    assert about_requests == {scene["own"].pk}
    # Filtering by the object does not get around it either.
    other = client.get(
        f"/api/audit-events/?object_type=request&object_id={scene['elsewhere'].pk}"
    ).json()["results"]
    assert other == []
    # Events not about a request (queues here) stay visible.
    assert any(r["object_type"] == "queue" for r in rows)


def test_a_queue_limited_token_cannot_read_another_queues_event_by_id(scene):
    from apps.audit.models import AuditEvent

    event = AuditEvent.objects.get(
        action="request.create", object_id=str(scene["elsewhere"].pk)
    )
    assert _client(scene["ci"]).get(f"/api/audit-events/{event.pk}/").status_code == 404
    # A session user or an unlimited token still reads it.
    assert (
        _client(scene["viewer"]).get(f"/api/audit-events/{event.pk}/").status_code
        == 200
    )


@pytest.mark.parametrize("caller", ["viewer", "admin"])
def test_env_values_are_redacted_in_the_requests_api(scene, caller):
    client = _client(scene[caller])
    text = json.dumps(_all_pages(client, "/api/requests/?page_size=500"))
    text += json.dumps(client.get(f"/api/requests/{scene['elsewhere'].pk}/").json())
    assert SECRET not in text
    assert TEMPLATE_SECRET not in text
    shown = client.get(f"/api/requests/{scene['elsewhere'].pk}/").json()
    assert shown["workload"]["env"] == [
        {"name": "PASSWORD", "value": REDACTED},
        {"name": "EPOCHS", "value": PLAIN, "secret": False},
    ]
    template = client.get(f"/api/requests/{scene['templated'].pk}/").json()
    env = template["pod_template"]["spec"]["containers"][0]["env"]
    assert env[0] == {"name": "TOKEN", "value": REDACTED}
    assert env[1]["valueFrom"] == {"secretKeyRef": {"name": "s", "key": "k"}}


def test_env_values_are_redacted_in_every_audit_entry(scene):
    from apps.audit.models import AuditEvent

    # Stored redacted: the audit table itself holds no secret.
    stored = json.dumps(list(AuditEvent.objects.values("before", "after")))
    assert SECRET not in stored
    assert TEMPLATE_SECRET not in stored
    assert PLAIN in stored  # marked non-secret
    # And an admin reading the log sees none.
    text = json.dumps(_all_pages(_client(scene["admin"]), "/api/audit-events/"))
    assert SECRET not in text
    assert TEMPLATE_SECRET not in text


def test_audit_rows_written_before_redaction_are_redacted_when_read(scene):
    from apps.audit.models import AuditEvent

    old = AuditEvent.objects.create(
        actor_name="someone",
        action="request.create",
        object_type="request",
        object_id=str(scene["elsewhere"].pk),
        after={"workload": {"image": "x", "env": [{"name": "A", "value": SECRET}]}},
    )
    body = _client(scene["admin"]).get(f"/api/audit-events/{old.pk}/").json()
    assert body["after"]["workload"]["env"] == [{"name": "A", "value": REDACTED}]


def test_the_pod_still_gets_the_real_values(scene):
    from apps.scheduling.pods import pod_manifest

    request = scene["elsewhere"]
    request.refresh_from_db()
    pod = pod_manifest(
        name="p",
        namespace="default",
        request_id=request.pk,
        attempt=1,
        queue="other",
        priority_class="batch-low",
        common_word="Ascend310P",
        chip_uuid="uuid",
        node_hostname="n",
        resources={},
        workload=request.workload,
        pod_template=None,
    )
    # The portal's "secret" mark is not a field of a container's env.
    assert pod["spec"]["containers"][0]["env"] == [
        {"name": "PASSWORD", "value": SECRET},
        {"name": "EPOCHS", "value": PLAIN},
    ]


def test_a_secret_mark_that_is_not_a_boolean_is_a_400_naming_the_field(scene, operator):
    client = APIClient()
    client.force_login(operator)
    response = client.post(
        "/api/requests/",
        {
            "cluster": "guide",
            "namespace": "default",
            "chip_type": "Ascend310P",
            "memory": 3072,
            "workload": {
                "image": "busybox",
                "env": [{"name": "A", "value": "b", "secret": "no"}],
            },
        },
        format="json",
    )
    assert response.status_code == 400
    assert "workload.env" in response.json()["errors"]


def test_redaction_functions_never_change_their_argument():
    env = [{"name": "A", "value": "s"}, {"name": "B", "value": "p", "secret": False}]
    template = {
        "spec": {
            "initContainers": [{"name": "i", "env": [{"name": "A", "value": "s"}]}]
        }
    }
    before = json.dumps([env, template])
    assert env_redacted(env) == [
        {"name": "A", "value": REDACTED},
        {"name": "B", "value": "p", "secret": False},
    ]
    assert env_redacted({"A": "s"}) == {"A": REDACTED}
    assert pod_template_redacted(template)["spec"]["initContainers"][0]["env"] == [
        {"name": "A", "value": REDACTED}
    ]
    nested = payload_redacted({"items": [{"workload": {"env": env}}]})
    assert nested["items"][0]["workload"]["env"][0]["value"] == REDACTED
    assert json.dumps([env, template]) == before
