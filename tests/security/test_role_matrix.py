"""Every endpoint and WebSocket, as anonymous, viewer, ci, operator, admin and a CI
token limited to the queue ``ci``, compared with the intended table below.

The table is written by hand from the product's rules (viewers read
everything; the ci role also submits and cancels its own requests and nothing
else; operators also edit chip types and templates, publish and restart,
drain and uncordon; admins also manage clusters, tokens and queues and decide
preemptions and drains; a CI token acts only on its queues), not from
``apps.accounts.policy``. The
URLconf is walked, so an endpoint missing from the table fails the test.

A cell names the least role that may use the method; a method the endpoint
does not offer must never do anything (401, 403 or 405 for everyone). An
allowed call may still be refused on its merits (400, 404, 409...), never by
a 401 or 403.
"""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from rest_framework.test import APIClient

from apps.accounts.services import token_create, user_ensure
from tests.test_anonymous_access import api_paths

pytestmark = pytest.mark.django_db

PUBLIC, V, CI, OP, A = "public", "viewer", "ci", "operator", "admin"
RANK = {PUBLIC: -1, V: 0, CI: 1, OP: 2, A: 3}
CALLERS = {
    "anonymous": -1,
    "viewer": 0,
    "ci": 1,
    "operator": 2,
    "admin": 3,
    "ci-token": 1,
}
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
R = {"GET": V}  # read-only for every signed-in user

INTENDED: dict[str, dict[str, str]] = {
    "/api/me/": R,
    "/api/auth/login/": {"GET": PUBLIC, "POST": PUBLIC},  # GET: the CSRF token
    "/api/auth/logout/": {"POST": V},
    "/api/auth/config/": {"GET": PUBLIC},
    "/api/auth/oidc/login/": {"GET": PUBLIC},
    "/api/auth/oidc/callback/": {"GET": PUBLIC},
    "/api/schema/": R,
    "/api/docs/": R,
    "/api/tokens/": {"GET": A, "POST": A},
    "/api/tokens/{token}/": {"GET": A},
    "/api/tokens/{token}/revoke/": {"POST": A},
    "/api/tokens/{token}/rotate/": {"POST": A},
    "/api/audit-events/": R,
    "/api/audit-events/{audit}/": R,
    "/api/clusters/": {"GET": V, "POST": A},
    "/api/clusters/{cluster}/": {"GET": V, "PUT": A, "PATCH": A, "DELETE": A},
    "/api/clusters/{cluster}/summary/": R,
    "/api/clusters/{cluster}/chip-usage/": R,
    "/api/clusters/{cluster}/chip-suggestions/": R,
    "/api/clusters/{cluster}/sync-status/": R,
    "/api/clusters/{cluster}/usage-history/": R,
    "/api/clusters/{cluster}/fragmentation/": R,
    "/api/clusters/{cluster}/fit/": R,
    "/api/clusters/{cluster}/device-config/": R,
    "/api/clusters/{cluster}/device-config/export/": R,
    "/api/clusters/{cluster}/drift/": R,
    "/api/clusters/{cluster}/health/": R,
    "/api/clusters/{cluster}/what-if/": R,
    "/api/clusters/{cluster}/node-config/health/": R,
    # a POST only because it carries a draft: it writes nothing
    "/api/clusters/{cluster}/node-config/what-if/": {"POST": V},
    "/api/clusters/{cluster}/restarts/": R,
    "/api/clusters/{cluster}/restarts/{component}/": {"POST": OP},
    "/api/clusters/{cluster}/publish/": {"POST": OP},
    "/api/clusters/{cluster}/rollback/": {"POST": OP},
    "/api/clusters/{cluster}/adopt/": {"POST": A},
    "/api/clusters/{cluster}/node-config/": R,
    "/api/clusters/{cluster}/node-config/validate/": {"POST": OP},
    "/api/clusters/{cluster}/node-config/publish/": {"POST": OP},
    "/api/clusters/{cluster}/node-config/rollback/": {"POST": OP},
    "/api/clusters/{cluster}/node-config/adopt/": {"POST": A},
    "/api/clusters/{cluster}/node-config/restart/": {"POST": OP},
    "/api/clusters/{cluster}/node-config/versions/": R,
    "/api/clusters/{cluster}/node-config/diff/": {"GET": V, "POST": OP},
    "/api/chip-types/": {"GET": V, "POST": OP},
    "/api/chip-types/{chiptype}/": {"GET": V, "PUT": OP, "PATCH": OP, "DELETE": OP},
    "/api/templates/": {"GET": V, "POST": OP},
    "/api/templates/{template}/": {"GET": V, "PUT": OP, "PATCH": OP, "DELETE": OP},
    "/api/nodes/": R,
    "/api/nodes/{node}/": R,
    "/api/chips/": R,
    "/api/chips/{chip}/": R,
    "/api/chips/{chip}/history/": R,
    "/api/chips/{chip}/drain/": {"GET": V, "POST": OP},
    "/api/chips/{chip}/isolate/": {"POST": OP},
    "/api/chips/{chip}/restore/": {"POST": OP},
    "/api/chips/{chip}/uncordon/": {"POST": OP},
    "/api/nodes/{node}/drain/": {"GET": V, "POST": OP},
    "/api/nodes/{node}/uncordon/": {"POST": OP},
    "/api/drains/": R,
    "/api/drains/{drain}/": R,
    "/api/drains/{drain}/approve/": {"POST": A},
    "/api/drains/{drain}/reject/": {"POST": A},
    "/api/slices/": R,
    "/api/slices/{slice}/": R,
    "/api/pending-pods/": R,
    "/api/pending-pods/{pending}/": R,
    "/api/priority-classes/": R,
    "/api/priority-classes/{priorityclass}/": R,
    "/api/device-config-versions/": R,
    "/api/device-config-versions/{version}/": R,
    "/api/device-config-versions/{version}/diff/": R,
    "/api/device-config-versions/{version}/export/": R,
    "/api/queues/": {"GET": V, "POST": A},
    "/api/queues/{queue}/": {"GET": V, "PUT": A, "PATCH": A, "DELETE": A},
    "/api/requests/": {"GET": V, "POST": CI},
    "/api/requests/{request}/": {"GET": V, "DELETE": CI},
    "/api/requests/{request}/logs/": R,
    "/api/preemptions/": R,
    "/api/preemptions/{proposal}/": R,
    "/api/preemptions/{proposal}/approve/": {"POST": A},
    "/api/preemptions/{proposal}/reject/": {"POST": A},
    "/api/usage/chips/": R,
    "/api/usage/chips/{chip}/history/": R,
    "/api/usage/slices/": R,
    "/api/usage/slices/{slice}/history/": R,
    "/api/usage/report/": R,
    "/api/chip-prices/": R,
    "/api/chip-prices/{price}/": {"PUT": A, "DELETE": A},
    "/api/alerts/": R,
    "/api/alerts/silences/": {"POST": A},
}
# Where the URLconf's walk puts "1", the table names the object.
_PLACEHOLDER = {
    "tokens": "{token}",
    "audit-events": "{audit}",
    "clusters": "{cluster}",
    "restarts": "{component}",
    "chip-types": "{chiptype}",
    "templates": "{template}",
    "nodes": "{node}",
    "chips": "{chip}",
    "slices": "{slice}",
    "pending-pods": "{pending}",
    "priority-classes": "{priorityclass}",
    "device-config-versions": "{version}",
    "queues": "{queue}",
    "requests": "{request}",
    "preemptions": "{proposal}",
    "drains": "{drain}",
    "chip-prices": "{price}",
}
WEBSOCKETS = {"/ws/clusters/{cluster}/": V}


def _template(path: str) -> str:
    parts = path.strip("/").split("/")
    return (
        "/"
        + "/".join(
            _PLACEHOLDER[parts[i - 1]] if part == "1" else part
            for i, part in enumerate(parts)
        )
        + "/"
    )


def test_the_table_covers_every_endpoint_and_nothing_else():
    walked = {_template(p) for p in api_paths()}
    assert walked == set(INTENDED)


def test_the_table_covers_every_websocket_route():
    from vnpuportal.routing import websocket_urlpatterns

    routes = {
        "/" + str(p.pattern).replace("<int:cluster_id>", "{cluster}")
        for p in websocket_urlpatterns
    }
    assert routes == set(WEBSOCKETS)


@pytest.fixture
def world(guide_cluster, viewer, operator, admin_user, settings, fixtures_dir):
    """Objects behind every placeholder, and one API token (or none) per caller."""
    import json

    from apps.audit.models import AuditEvent
    from apps.inventory.models import (
        Chip,
        ChipType,
        DeviceConfigVersion,
        Node,
        PriorityClass,
        Slice,
        Template,
    )
    from apps.inventory.sync.writer import ClusterWriter
    from apps.scheduling.services.queues import queue_create
    from apps.scheduling.services.requests import request_create

    settings.THROTTLE_RATES = {
        "login": "1000/min",
        "token": "100000/min",
        "request_create": "1000/min",
    }
    nodes = [
        json.loads((fixtures_dir / n).read_text())
        for n in ("node-310p3.json", "node-910b4.json")
    ]
    ClusterWriter(guide_cluster).replace_nodes(nodes)
    PriorityClass.objects.create(
        cluster=guide_cluster, name="batch-low", value=100, global_default=True
    )
    for name in ("ci", "other"):
        queue_create(
            actor=admin_user,
            cluster=guide_cluster,
            name=name,
            access={"open_to_all": True},
        )
    ci_user = user_ensure(username="ci-bot", role="ci", is_service_account=True)
    ci_token = token_create(user=ci_user, queues=["ci"])
    ci_any_queue = user_ensure(username="ci-any", role="ci", is_service_account=True)
    spare = token_create(user=admin_user, name="spare")

    def submit(user, queue, token=None):
        request, _ = request_create(
            actor=user,
            token=token,
            cluster=guide_cluster.pk,
            namespace="default",
            chip_type="Ascend310P",
            memory=3072,
            queue=queue,
            workload={"image": "busybox"},
        )
        return request

    mine = submit(operator, "ci")
    ci_own = submit(ci_user, "ci", ci_token.token)
    ci_any_own = submit(ci_any_queue, "other")
    elsewhere = submit(operator, "other")
    ids = {
        "{token}": spare.token.pk,
        "{audit}": AuditEvent.objects.order_by("pk").first().pk,
        "{cluster}": guide_cluster.pk,
        "{component}": "hami-scheduler",
        "{chiptype}": ChipType.objects.filter(cluster=guide_cluster).first().pk,
        "{template}": Template.objects.filter(chip_type__cluster=guide_cluster)
        .first()
        .pk,
        "{node}": Node.objects.first().pk,
        "{chip}": Chip.objects.first().pk,
        "{slice}": (Slice.objects.first().pk if Slice.objects.exists() else 999999),
        "{pending}": 999999,
        "{priorityclass}": PriorityClass.objects.get(name="batch-low").pk,
        "{version}": DeviceConfigVersion.objects.first().pk,
        "{queue}": guide_cluster.queues.get(name="ci").pk,
        "{request}": mine.pk,
        "{proposal}": 999999,
        "{drain}": 999999,
    }
    # Roles act through sessions (every non-admin token is limited to queues,
    # and such a token acts on its queues only: the ci-token caller).
    users = {
        "viewer": viewer,
        "operator": operator,
        "admin": admin_user,
        "ci": ci_any_queue,
    }
    tokens = {"ci-token": ci_token.plaintext}
    return {
        "ids": ids,
        "users": users,
        "tokens": tokens,
        "ci_own": ci_own,
        "ci_any_own": ci_any_own,
        "elsewhere": elsewhere,
        "cluster": guide_cluster,
    }


def _client(world, caller: str) -> APIClient:
    client = APIClient()
    if caller in world["tokens"]:
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {world['tokens'][caller]}")
    elif caller != "anonymous":
        client.force_authenticate(user=world["users"][caller])
    return client


def _concrete(template: str, ids: dict) -> str:
    for placeholder, value in ids.items():
        template = template.replace(placeholder, str(value))
    return template


@pytest.mark.slow
@pytest.mark.parametrize("caller", list(CALLERS))
def test_every_endpoint_answers_each_caller_as_intended(caller, world, monkeypatch):
    # No cluster behind the guide: calls that would reach one fail fast instead.
    # (the gateway, which every live read and write goes through, calls this.)
    from apps.inventory import kube

    def unreachable(cluster):
        raise OSError("no cluster in this test")

    monkeypatch.setattr(kube, "api_client_for", unreachable)
    client = _client(world, caller)
    ids = dict(world["ids"])
    if caller == "ci-token":
        ids["{request}"] = world["ci_own"].pk  # a CI job cancels its own request
    elif caller == "ci":
        ids["{request}"] = world["ci_any_own"].pk
    wrong: list[str] = []
    checked = 0
    # Deletes last: they must not remove what the other calls need.
    cells = [(m, t) for m in METHODS for t in sorted(INTENDED)]
    cells.sort(key=lambda cell: cell[0] == "DELETE")
    for method, template in cells:
        path = _concrete(template, ids)
        response = getattr(client, method.lower())(path, {}, format="json")
        status = response.status_code
        checked += 1
        least = INTENDED[template].get(method)
        if least is None:
            ok = status in (401, 403, 405)
            expected = "401/403/405"
        elif CALLERS[caller] >= RANK[least]:
            # (a 503 cluster_unavailable got past the role check: no cluster here)
            unavailable = (
                status == 503 and response.json()["code"] == "cluster_unavailable"
            )
            ok = status not in (401, 403, 405) and (status < 500 or unavailable)
            expected = "allowed"
        else:
            ok = status in (401, 403)
            expected = "refused"
        if caller == "anonymous" and least != PUBLIC and status == 403:
            ok = (ok and method != "GET") or ok  # 401 or 403 both refuse
        if not ok:
            wrong.append(f"{caller} {method} {path}: {status}, expected {expected}")
    assert checked == len(INTENDED) * len(METHODS)
    assert wrong == [], "\n".join(wrong)


def test_a_ci_token_acts_only_on_its_queue(world):
    client = _client(world, "ci-token")
    elsewhere = world["elsewhere"]
    cluster = world["cluster"]
    # reading or cancelling a request of another queue
    assert client.get(f"/api/requests/{elsewhere.pk}/").status_code == 403
    assert client.get(f"/api/requests/{elsewhere.pk}/logs/").status_code == 403
    assert client.get(f"/api/requests/{elsewhere.pk}/?wait=finished").status_code == 403
    assert client.delete(f"/api/requests/{elsewhere.pk}/").status_code == 403
    # listing another queue, or submitting into it
    assert client.get("/api/requests/?queue=other").status_code == 403
    assert client.get("/api/preemptions/?queue=other").status_code == 403
    submitted = client.post(
        "/api/requests/",
        {
            "cluster": cluster.pk,
            "namespace": "default",
            "chip_type": "Ascend310P",
            "memory": 3072,
            "queue": "other",
            "workload": {"image": "busybox"},
        },
        format="json",
    )
    assert submitted.status_code == 403
    assert submitted.json()["code"] == "permission_denied"
    # its list shows its own queue only
    listed = client.get("/api/requests/").json()["results"]
    assert listed
    assert {row["queue"] for row in listed} == {"ci"}
    # and inside its queue it works
    assert client.get(f"/api/requests/{world['ci_own'].pk}/").status_code == 200


def test_an_operator_cannot_cancel_someone_elses_request(world):
    response = _client(world, "operator").delete(f"/api/requests/{world['ci_own'].pk}/")
    assert response.status_code == 403


@pytest.mark.django_db(transaction=True)
@pytest.mark.websockets
@pytest.mark.parametrize("caller", list(CALLERS))
async def test_every_websocket_as_each_caller(
    caller, guide_cluster, viewer, operator, admin_user
):
    from apps.scheduling.models import Queue
    from vnpuportal.asgi import application

    await sync_to_async(Queue.objects.create)(cluster=guide_cluster, name="ci")
    users = {"viewer": viewer, "operator": operator, "admin": admin_user}
    headers = [(b"origin", b"http://localhost"), (b"host", b"localhost")]
    if caller in ("ci", "ci-token"):
        users[caller] = await sync_to_async(user_ensure)(username="ci-ws", role="ci")
    if caller != "anonymous":
        # Every non-admin token is limited to queues; a socket's role is its user's.
        queues = [] if caller == "admin" else ["ci"]
        issued = await sync_to_async(token_create)(user=users[caller], queues=queues)
        headers.append((b"authorization", f"Bearer {issued.plaintext}".encode()))
    for template, least in WEBSOCKETS.items():
        path = template.replace("{cluster}", str(guide_cluster.pk))
        communicator = WebsocketCommunicator(application, path, headers=headers)
        connected, code = await communicator.connect(timeout=5)
        allowed = CALLERS[caller] >= RANK[least]
        assert connected is allowed, (caller, path, code)
        if connected:
            snapshot = await communicator.receive_json_from(timeout=5)
            assert snapshot["type"] == "snapshot"
            await communicator.disconnect()
        else:
            assert code == 4401


def test_the_ci_role_cannot_restart_edit_templates_or_publish(world):
    # The CI token of docs/pipelines.md: role ci. What the operator role it replaced could do.
    client = _client(world, "ci")
    ids = world["ids"]
    cluster = ids["{cluster}"]
    calls = [
        (
            "post",
            f"/api/clusters/{cluster}/restarts/hami-scheduler/",
            {"confirm": True},
        ),
        ("post", f"/api/clusters/{cluster}/publish/", {"reason": "ci"}),
        ("post", f"/api/clusters/{cluster}/rollback/", {"version": 1, "reason": "ci"}),
        ("patch", f"/api/templates/{ids['{template}']}/", {"memory": 1}),
        ("post", "/api/templates/", {}),
        ("delete", f"/api/chip-types/{ids['{chiptype}']}/", {}),
        ("post", "/api/queues/", {"name": "mine"}),
        ("post", "/api/tokens/", {"username": "x"}),
    ]
    for method, path, body in calls:
        response = getattr(client, method)(path, body, format="json")
        assert response.status_code == 403, (method, path, response.status_code)


def test_a_queue_limited_operator_token_cannot_act_on_the_whole_cluster(world):
    """An operator's token limited to ci submits there, but restarts, publishes
    and edits templates only through a session (issue 39)."""
    from apps.scheduling.models import Request

    issued = token_create(user=world["users"]["operator"], queues=["ci"])
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {issued.plaintext}")
    ids = world["ids"]
    cluster = ids["{cluster}"]
    for method, path, body in (
        (
            "post",
            f"/api/clusters/{cluster}/restarts/hami-scheduler/",
            {"confirm": True},
        ),
        ("post", f"/api/clusters/{cluster}/publish/", {"reason": "x"}),
        ("patch", f"/api/templates/{ids['{template}']}/", {"memory": 1}),
    ):
        response = getattr(client, method)(path, body, format="json")
        assert response.status_code == 403, (path, response.status_code)
        assert "limited to queues" in response.json()["message"]
    before = Request.objects.count()
    submitted = client.post(
        "/api/requests/",
        {
            "cluster": cluster,
            "namespace": "default",
            "chip_type": "Ascend310P",
            "memory": 3072,
            "queue": "ci",
            "workload": {"image": "busybox"},
        },
        format="json",
    )
    assert submitted.status_code == 201, submitted.json()
    assert Request.objects.count() == before + 1


def test_the_policy_names_only_views_that_exist():
    # A typo in the table would silently give a view the default row.
    from django.urls import get_resolver

    from apps.accounts.policy import POLICY

    names: set[str] = set()

    def walk(patterns):
        for pattern in patterns:
            if hasattr(pattern, "url_patterns"):
                walk(pattern.url_patterns)
                continue
            view = pattern.callback
            cls = getattr(view, "cls", None) or getattr(view, "view_class", None)
            if cls is not None:
                names.add(cls.__name__)

    walk(get_resolver().url_patterns)
    assert set(POLICY) <= names
