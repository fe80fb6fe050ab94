"""Bad input is a 4xx naming the field, never a 500 (issue 20's "Low" list).

``CORPUS`` is the bad-input corpus: each entry is one request the probe of
the production setup answered with a 500, an HTML page or a bare 400, with
the status and the field the answer must name. The fuzz test
(``tests/faults/test_fuzz.py``) sends the same corpus as every role.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest
from django.test import Client

from apps.accounts.services import token_create

pytestmark = pytest.mark.django_db

OVER_LIMIT = 3 * 1024 * 1024  # Django's default DATA_UPLOAD_MAX_MEMORY_SIZE is 2.5 MB


def _nested(levels: int, leaf: Any = 1) -> Any:
    """``{"a": {"a": ... leaf}}``, ``levels`` objects deep."""
    value = leaf
    for _ in range(levels):
        value = {"a": value}
    return value


def _request(**overrides: Any) -> str:
    """A CI request body for the guide cluster with ``overrides`` applied."""
    body: dict[str, Any] = {
        "cluster": "guide",
        "namespace": "ci",
        "chip_type": "Ascend310P",
        "memory": 1000,
        "workload": {"image": "busybox"},
    }
    body.update(overrides)
    return json.dumps(body)


def _pod(**spec: Any) -> dict[str, Any]:
    """A pod template of one busybox container: ``spec`` merged into the spec, or
    into the container for its fields (env, envFrom, securityContext)."""
    container: dict[str, Any] = {"name": "main", "image": "busybox"}
    for key in ("env", "envFrom", "securityContext"):
        if key in spec:
            container[key] = spec.pop(key)
    return {"spec": {"containers": [container], **spec}}


@dataclass(frozen=True)
class BadInput:
    """One bad request and the answer it must get."""

    name: str
    method: str
    path: str  # "{cluster}", "{chip_type}", "{template}" are filled in
    body: str | None = None  # raw JSON text (lone surrogates survive json.dumps)
    status: int = 400
    field: str | None = None  # the field (path) ``errors`` must name
    code: str | None = None
    anonymous: bool = False
    query: tuple[tuple[str, str], ...] = ()  # (name, value) pairs
    content_type: str = "application/json"


CORPUS: list[BadInput] = [
    # JSON nested 990+ levels: RecursionError in json, even before login.
    BadInput(
        "login-nested-990-in-a-field",
        "POST",
        "/api/auth/login/",
        '{"username": ' + "[" * 990 + "]" * 990 + ', "password": "x"}',
        field="username",
        anonymous=True,
    ),
    BadInput(
        "login-nested-5000",
        "POST",
        "/api/auth/login/",
        "[" * 5000 + "]" * 5000,
        field="body",
        anonymous=True,
    ),
    BadInput(
        "request-pod-template-nested-100",
        "POST",
        "/api/requests/",
        _request(workload=None, pod_template=_nested(100)),
        field="pod_template",
    ),
    # Non-ASCII digits are not ids.
    BadInput(
        "request-cluster-superscript-two",
        "POST",
        "/api/requests/",
        _request(cluster="²"),
        field="cluster",
    ),
    BadInput(
        "request-cluster-arabic-indic-one",
        "POST",
        "/api/requests/",
        _request(cluster="\u0661"),
        field="cluster",
    ),
    BadInput("cluster-path-superscript", "GET", "/api/clusters/²/summary/", status=404),
    # NUL and lone surrogates: PostgreSQL refuses NUL, UTF-8 refuses surrogates.
    BadInput(
        "env-map-nul",
        "POST",
        "/api/requests/",
        _request(workload={"image": "busybox", "env": {"A": "a\x00b"}}),
        field="workload.env.A",
    ),
    BadInput(
        "env-map-lone-surrogate",
        "POST",
        "/api/requests/",
        _request(workload={"image": "busybox", "env": {"A": "\ud800"}}),
        field="workload.env.A",
    ),
    BadInput(
        "env-list-nul",
        "POST",
        "/api/requests/",
        _request(
            workload={"image": "busybox", "env": [{"name": "A", "value": "\x00"}]}
        ),
        field="workload.env[0].value",
    ),
    BadInput(
        "pod-template-nul",
        "POST",
        "/api/requests/",
        _request(
            workload=None,
            pod_template={"spec": {"containers": [{"name": "a\x00", "image": "x"}]}},
        ),
        field="pod_template.spec.containers[0].name",
    ),
    BadInput(
        "pod-template-lone-surrogate-key",
        "POST",
        "/api/requests/",
        _request(workload=None, pod_template={"metadata": {"labels": {"\udfff": "x"}}}),
        field="pod_template.metadata.labels",
    ),
    BadInput(
        "choice-nul",
        "POST",
        "/api/clusters/",
        json.dumps({"name": "c-nul", "connection": "none\x00"}),
        field="connection",
    ),
    BadInput(
        "choice-lone-surrogate",
        "POST",
        "/api/clusters/",
        json.dumps({"name": "c-sur", "connection": "\ud800"}),
        field="connection",
    ),
    BadInput(
        "login-username-nul",
        "POST",
        "/api/auth/login/",
        json.dumps({"username": "a\x00", "password": "x"}),
        field="username",
        anonymous=True,
    ),
    BadInput(
        "filter-nul",
        "GET",
        "/api/audit-events/",
        query=(("actor", "a\x00"),),
        field="actor",
    ),
    # `extra` is an object.
    BadInput(
        "chip-type-extra-list",
        "PATCH",
        "/api/chip-types/{chip_type}/",
        json.dumps({"extra": [1]}),
        field="extra",
    ),
    BadInput(
        "template-extra-string",
        "PATCH",
        "/api/templates/{template}/",
        json.dumps({"extra": "s"}),
        field="extra",
    ),
    # A '+' sent unencoded arrives as a space.
    BadInput(
        "since-plus-as-space",
        "GET",
        "/api/audit-events/",
        query=(("since", "2026-01-01T10:00:00+16:00"),),
        field="since",
    ),
    # All-digit cluster names would hide behind the id of the same number.
    BadInput(
        "cluster-name-digits",
        "POST",
        "/api/clusters/",
        json.dumps({"name": "123"}),
        field="name",
    ),
    BadInput(
        "cluster-rename-digits",
        "PATCH",
        "/api/clusters/{cluster}/",
        json.dumps({"name": "42"}),
        field="name",
    ),
    # Bodies over the limit: 413 saying so, with the limit.
    BadInput(
        "request-body-over-limit",
        "POST",
        "/api/requests/",
        _request(idempotency_key="x" * OVER_LIMIT),
        status=413,
        code="too_large",
    ),
    BadInput(
        "login-body-over-limit",
        "POST",
        "/api/auth/login/",
        json.dumps({"username": "x" * OVER_LIMIT}),
        status=413,
        code="too_large",
        anonymous=True,
    ),
    # Form bodies went around the JSON checks (a JSONField parses its form value
    # with no limit): the API takes JSON only.
    BadInput(
        "form-encoded-pod-template-nested-3000",
        "POST",
        "/api/requests/",
        "cluster=guide&namespace=ci&chip_type=Ascend310P&pod_template="
        + "%5B" * 3000
        + "%5D" * 3000,
        status=415,
        content_type="application/x-www-form-urlencoded",
    ),
    # The third probe (issue 39).
    # A date-time that parses but is out of range in UTC: OverflowError.
    BadInput(
        "since-year-10000-in-utc",
        "GET",
        "/api/audit-events/",
        query=(("since", "9999-12-31T23:59:59-23:59"),),
        field="since",
    ),
    # 1.2 million values under the body limit: seconds of CPU, anonymously.
    BadInput(
        "login-1.2M-element-array",
        "POST",
        "/api/auth/login/",
        '{"username":[' + ",".join(["1"] * 1_200_000) + '],"password":"x"}',
        field="username",
        anonymous=True,
    ),
    # A pod_template far below the body limit, but above its own.
    BadInput(
        "pod-template-over-64KiB",
        "POST",
        "/api/requests/",
        json.dumps(
            {
                "cluster": "guide",
                "namespace": "ci",
                "chip_type": "Ascend310P",
                "memory": 1000,
                "pod_template": {
                    "metadata": {"annotations": {"a": "x" * 70_000}},
                    "spec": {"containers": [{"name": "m", "image": "busybox"}]},
                },
            }
        ),
        field="pod_template",
    ),
    # Usernames that cannot be told apart from another: a new service account.
    BadInput(
        "token-username-rtl-override",
        "POST",
        "/api/tokens/",
        json.dumps({"username": "ci\u202egpj", "role": "admin"}),
        field="username",
    ),
    BadInput(
        "token-username-zero-width",
        "POST",
        "/api/tokens/",
        json.dumps({"username": "a\u200bda", "role": "admin"}),
        field="username",
    ),
    BadInput(
        "token-username-emoji",
        "POST",
        "/api/tokens/",
        json.dumps({"username": "ci\U0001f680", "role": "admin"}),
        field="username",
    ),
    BadInput(
        "token-username-fullwidth-admin",
        "POST",
        "/api/tokens/",
        json.dumps({"username": "\uff41\uff44\uff41", "role": "admin"}),
        field="username",
    ),
    # A kubeconfig naming a file relatively: read from the working directory.
    BadInput(
        "kubeconfig-relative-token-file",
        "POST",
        "/api/clusters/",
        json.dumps(
            {
                "name": "rel",
                "connection": "kubeconfig",
                "kubeconfig": "apiVersion: v1\nkind: Config\nclusters: []\n"
                "contexts: []\nusers:\n- name: u\n  user:\n    tokenFile: token\n",
            }
        ),
        field="kubeconfig",
    ),
    # Issue 39: references around the pod policy, and fields of the wrong type
    # or case that its checks read as unset (each a 400 naming the field).
    *[
        BadInput(
            f"pod-template-{name}",
            "POST",
            "/api/requests/",
            _request(workload=None, pod_template=_pod(**spec)),
            field=f"pod_template.spec.{field}",
        )
        for name, spec, field in (
            (
                "env-from-without-prefix",
                {"envFrom": [{"configMapRef": {"name": "chips"}}]},
                "containers[0].envFrom[0].prefix",
            ),
            (
                "env-from-ascend-prefix",
                {"envFrom": [{"prefix": "ASCEND_", "secretRef": {"name": "s"}}]},
                "containers[0].envFrom[0].prefix",
            ),
            (
                "service-account-token-secret-key-ref",
                {
                    "env": [
                        {
                            "name": "T",
                            "valueFrom": {
                                "secretKeyRef": {"name": "hami-token", "key": "token"}
                            },
                        }
                    ]
                },
                "containers[0].env[0].valueFrom.secretKeyRef.name",
            ),
            (
                "secret-volume",
                {"volumes": [{"name": "t", "secret": {"secretName": "hami-token"}}]},
                "volumes[0].secret.secretName",
            ),
            (
                "projected-secret",
                {
                    "volumes": [
                        {
                            "name": "p",
                            "projected": {"sources": [{"secret": {"name": "x"}}]},
                        }
                    ]
                },
                "volumes[0].projected.sources[0].secret.name",
            ),
            ("host-network-string", {"hostNetwork": "true"}, "hostNetwork"),
            ("host-network-wrong-case", {"HostNetwork": True}, "HostNetwork"),
            (
                "volumes-as-a-map",
                {"volumes": {"root": {"hostPath": {"path": "/"}}}},
                "volumes",
            ),
            (
                "ephemeral-containers",
                {"ephemeralContainers": [{"name": "d", "image": "busybox"}]},
                "ephemeralContainers",
            ),
            (
                "scheduling-gates",
                {"schedulingGates": [{"name": "example.com/g"}]},
                "schedulingGates",
            ),
            (
                "privileged-string",
                {"securityContext": {"privileged": "true"}},
                "containers[0].securityContext.privileged",
            ),
        )
    ],
    BadInput(
        "queue-allowed-secrets-bad-name",
        "POST",
        "/api/queues/",
        json.dumps(
            {"cluster": "guide", "name": "q-bad", "allowed_secrets": ["Not A Name"]}
        ),
        field="allowed_secrets[0]",
    ),
    BadInput(
        "queue-allowed-config-maps-not-a-list",
        "POST",
        "/api/queues/",
        json.dumps({"cluster": "guide", "name": "q-bad", "allowed_config_maps": "x"}),
        field="allowed_config_maps",
    ),
    # Unknown /api/ paths: the API's JSON 404 for every method.
    BadInput("unknown-path-post", "POST", "/api/no-such-thing/", "{}", status=404),
    BadInput("unknown-path-delete", "DELETE", "/api/no-such-thing/1/", status=404),
]


@pytest.fixture
def corpus_objects(guide_cluster) -> dict[str, int]:
    """Ids for the corpus's paths: the guide cluster, a chip type and a template."""
    chip_type = guide_cluster.chip_types.order_by("pk").first()
    return {
        "cluster": guide_cluster.pk,
        "chip_type": chip_type.pk,
        "template": chip_type.templates.order_by("pk").first().pk,
    }


def send(client: Client, case: BadInput, objects: dict[str, int], **headers: str):
    """Send one corpus request; the answer, whatever it is (no exception raised)."""
    path = case.path.format(**objects)
    if case.query:
        return client.generic(
            case.method, path, data=b"", QUERY_STRING=_qs(case.query), **headers
        )
    return client.generic(
        case.method,
        path,
        data=(case.body or "").encode("utf-8", "surrogatepass"),
        content_type=case.content_type,
        **headers,
    )


def _qs(query: tuple[tuple[str, str], ...]) -> str:
    from urllib.parse import quote

    # '+' is kept as it is on purpose: that is what the bad caller sent.
    return "&".join(f"{k}={quote(v, safe='+:')}" for k, v in query)


def explains(body: Any) -> bool:
    """The portal's error body: a code and a message, field errors if any."""
    return (
        isinstance(body, dict)
        and isinstance(body.get("code"), str)
        and isinstance(body.get("message"), str)
        and bool(body["code"] and body["message"])
    )


@pytest.mark.parametrize("case", CORPUS, ids=[c.name for c in CORPUS])
def test_bad_input_is_refused_naming_the_field(case, corpus_objects, admin_user):
    # given an admin's token (or no one, for the public login)
    headers = {}
    if not case.anonymous:
        token = token_create(user=admin_user).plaintext
        headers["HTTP_AUTHORIZATION"] = f"Bearer {token}"
    client = Client(raise_request_exception=False)
    # when the bad request is sent
    response = send(client, case, corpus_objects, **headers)
    # then it is refused with the status, in the error shape, naming the field
    assert response.status_code == case.status, response.content[:300]
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert explains(body), body
    if case.field is not None:
        assert case.field in body.get("errors", {}), body
    if case.code is not None:
        assert body["code"] == case.code


def test_too_large_says_the_limit(settings, admin_user):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    token = token_create(user=admin_user).plaintext
    response = Client(raise_request_exception=False).post(
        "/api/requests/",
        json.dumps({"idempotency_key": "x" * 2000}),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )
    assert response.status_code == 413
    assert response.json()["detail"] == {"limit_bytes": 1000}
    assert "1000 bytes" in response.json()["message"]


def test_nothing_was_written_by_the_corpus(corpus_objects, admin_user):
    from apps.inventory.models import Cluster
    from apps.scheduling.models import Request

    token = token_create(user=admin_user).plaintext
    client = Client(raise_request_exception=False)
    for case in CORPUS:
        send(client, case, corpus_objects, HTTP_AUTHORIZATION=f"Bearer {token}")
    assert Request.objects.count() == 0
    assert sorted(Cluster.objects.values_list("name", flat=True)) == ["guide"]


def test_since_takes_any_offset_and_documents_the_format(admin_user, viewer):
    # given an audit event (the token's creation)
    token = token_create(user=admin_user).plaintext
    client = Client(raise_request_exception=False)
    auth = {"HTTP_AUTHORIZATION": f"Bearer {token}"}
    # when since has an offset PostgreSQL cannot store (+16:00), properly encoded
    response = client.get(
        "/api/audit-events/", QUERY_STRING="since=2000-01-01T10:00:00%2B16:00", **auth
    )
    # then it is read as the instant it names (converted to UTC), not a 500
    assert response.status_code == 200, response.content[:300]
    assert response.json()["count"] >= 1
    # and a bad one is a 400 that says how to write it
    response = client.get(
        "/api/audit-events/", QUERY_STRING="since=2000-01-01T10:00:00+16:00", **auth
    )
    assert response.status_code == 400
    assert "ISO 8601" in response.json()["errors"]["since"][0]


def test_unknown_api_post_with_a_session_gets_the_json_404(viewer):
    # given a signed-in browser session, and a POST without a CSRF token
    client = Client(enforce_csrf_checks=True, raise_request_exception=False)
    client.force_login(viewer)
    for method in ("POST", "PUT", "PATCH", "DELETE"):
        response = client.generic(
            method, "/api/no-such-thing/", b"{}", "application/json"
        )
        # then the API's JSON 404, not Django's HTML CSRF page
        assert response.status_code == 404, (method, response.content[:200])
        assert response.json()["code"] == "not_found"


def test_a_csrf_failure_answers_in_the_error_shape(viewer):
    # /admin/ is a Django view, CSRF-checked by the middleware
    client = Client(enforce_csrf_checks=True, raise_request_exception=False)
    response = client.post(
        "/admin/login/", {"username": "x"}, HTTP_ACCEPT="application/json"
    )
    assert response.status_code == 403
    assert response.json()["code"] == "csrf_failed"


def test_options_answers_on_every_endpoint(admin_user):
    from tests.test_anonymous_access import api_paths

    # given an admin, when every routed API path is asked OPTIONS
    token = token_create(user=admin_user).plaintext
    client = Client(raise_request_exception=False)
    failures = []
    for path in api_paths():
        response = client.options(path, HTTP_AUTHORIZATION=f"Bearer {token}")
        # then each describes itself: a 200 with DRF's metadata, never a 500
        # (the schema view renders it in its own OpenAPI media types)
        if response.status_code != 200 or b"name" not in response.content:
            failures.append(f"{path} -> {response.status_code}")
    assert failures == []
    for action in ("publish", "rollback", "adopt", "restarts/hami-scheduler"):
        body = client.options(
            f"/api/clusters/1/{action}/", HTTP_AUTHORIZATION=f"Bearer {token}"
        ).json()
        # with the fields the command takes
        assert body["actions"]["POST"], (action, body)


@pytest.mark.django_db(transaction=True)
def test_deleting_a_queue_whose_cluster_was_just_deleted_is_a_404(
    monkeypatch, guide_cluster, admin_user
):
    from apps.inventory.models import Cluster
    from apps.scheduling.api import views
    from apps.scheduling.services import queues

    queue = queues.queue_create(actor=admin_user, cluster=guide_cluster, name="q1")
    real_delete = queues.queue_delete

    def cluster_deleted_meanwhile(*, actor, queue):
        # the race: the cluster (and, by cascade, the queue) is deleted after
        # this request loaded the queue (here in the same transaction, which
        # the 404 then rolls back, so nothing else changes)
        Cluster.objects.filter(pk=queue.cluster_id).delete()
        return real_delete(actor=actor, queue=queue)

    monkeypatch.setattr(views, "queue_delete", cluster_deleted_meanwhile)
    token = token_create(user=admin_user).plaintext
    response = Client(raise_request_exception=False).delete(
        f"/api/queues/{queue.pk}/", HTTP_AUTHORIZATION=f"Bearer {token}"
    )
    assert response.status_code == 404, response.content[:300]
    assert response.json()["code"] == "not_found"


def test_only_ascii_digits_are_ids():
    from apps.common.ids import parse_id

    assert parse_id("12") == 12
    assert parse_id(12) == 12
    assert parse_id("²") is None
    assert parse_id("\u0661") is None
    assert parse_id("guide") is None
    assert parse_id("0") is None
    assert parse_id("9" * 30) is None  # beyond a 64-bit id


def test_the_migration_renames_all_digit_cluster_names(db):
    import importlib

    from django.apps import apps as django_apps

    from apps.inventory.models import Cluster

    migration = importlib.import_module(
        "apps.inventory.migrations.0006_cluster_name_not_numeric"
    )
    # given clusters saved before the rule (bulk_create skips validation)
    Cluster.objects.bulk_create(
        [Cluster(name="123"), Cluster(name="cluster-123"), Cluster(name="prod-1")]
    )
    migration.rename_numeric_clusters(django_apps, None)
    names = sorted(Cluster.objects.values_list("name", flat=True))
    assert names == ["cluster-123", "cluster-123-2", "prod-1"]


def test_extra_must_not_hold_managed_keys(corpus_objects, admin_user):
    # given a template, when its extra carries a key with its own field
    token = token_create(user=admin_user).plaintext
    auth = {"HTTP_AUTHORIZATION": f"Bearer {token}"}
    client = Client(raise_request_exception=False)
    response = client.patch(
        f"/api/templates/{corpus_objects['template']}/",
        json.dumps({"extra": {"aiCPU": 1}}),
        content_type="application/json",
        **auth,
    )
    # then a 400 naming extra (it was a 500 from the spec's own check)
    assert response.status_code == 400, response.content[:300]
    assert "extra" in response.json()["errors"]
    response = client.patch(
        f"/api/chip-types/{corpus_objects['chip_type']}/",
        json.dumps({"extra": {"commonWord": "x"}}),
        content_type="application/json",
        **auth,
    )
    assert response.status_code == 400, response.content[:300]
    assert "extra" in response.json()["errors"]
