"""The whole API fuzzed from its OpenAPI schema (schemathesis), as every role.

For anonymous callers, a user of each role of ``Role`` (a new role is fuzzed
the day it is added) and a CI token limited to the queue ``ci``, every
operation of the schema gets ``FUZZ_EXAMPLES`` generated requests (valid and
invalid, hypothesis derandomized, so CI sees the same ones every run), and the
bad-input corpus of ``tests/security/test_bad_input.py`` is sent too. Checked:

- the count of 5xx answers is zero (a 503 ``cluster_unavailable``, the portal
  telling the truth about a cluster it cannot reach, is counted apart);
- every status is documented for its operation (schemathesis'
  ``status_code_conformance``: the schema declares 400/401/403/404/429 on every
  operation, ``apps.common.schema``), and every 4xx body is the portal's error
  shape, validated against the schema's ``Error`` (``response_schema_conformance``).

The figures (operations, requests, statuses, seconds) are written to
``var/fuzz-<role>.json`` for the report.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from django.core.wsgi import get_wsgi_application
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis.checks import response_schema_conformance, status_code_conformance
from schemathesis.core.failures import FailureGroup

from apps.accounts.choices import Role
from apps.accounts.services import token_create, user_ensure
from tests.security.test_bad_input import CORPUS, send

pytestmark = [pytest.mark.django_db, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "6"))
# Every role of the product, so that a new one is fuzzed without editing this.
ROLES = ["anonymous", *Role.values, "ci-token"]
UNAVAILABLE = "cluster_unavailable"


def explains(body: Any) -> bool:
    """The portal's error body: a code and a message, and field errors if any."""
    if not isinstance(body, dict):
        return False
    if not (isinstance(body.get("code"), str) and body["code"]):
        return False
    if not (isinstance(body.get("message"), str) and body["message"]):
        return False
    errors = body.get("errors")
    return errors is None or (
        isinstance(errors, dict)
        and all(
            isinstance(v, list) and all(isinstance(m, str) for m in v)
            for v in errors.values()
        )
    )


def _known_ids() -> list[int]:
    """Ids that exist (plus one that does not), so that paths reach real objects."""
    from django.apps import apps

    ids: set[int] = {999_999}
    for model in apps.get_models():
        if model._meta.app_label in ("accounts", "inventory", "scheduling", "audit"):
            ids.update(model.objects.order_by("pk").values_list("pk", flat=True)[:3])
    return sorted(i for i in ids if isinstance(i, int))


def _schema(ids: list[int]) -> Any:
    document = SchemaGenerator().get_schema(request=None, public=True)
    for item in document["paths"].values():
        for parameter in item.get("parameters", []):
            if parameter.get("in") == "path" and parameter["name"] == "id":
                parameter["schema"] = {"type": "integer", "enum": ids}
        for operation in item.values():
            if not isinstance(operation, dict):
                continue
            for parameter in operation.get("parameters", []):
                if parameter.get("in") == "path" and parameter["name"] == "id":
                    parameter["schema"] = {"type": "integer", "enum": ids}
    schema = schemathesis.openapi.from_dict(document)
    schema.app = get_wsgi_application()
    return schema


@pytest.fixture
def keep_test_connection():
    # Django's WSGI handler closes the connection after each request; the test
    # client disconnects that, and so must a WSGI transport inside a test.
    from django.core import signals
    from django.db import close_old_connections

    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


class _Errors(logging.Handler):
    """Keeps the tracebacks of the 500s, to say why in the failure."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info:
            self.seen.append(
                logging.Formatter().formatException(record.exc_info)[-1500:]
            )


@pytest.fixture
def server_errors():
    handler = _Errors()
    logger = logging.getLogger("django.request")
    logger.addHandler(handler)
    yield handler
    logger.removeHandler(handler)


@pytest.fixture
def callers(
    keep_test_connection, sim_cluster, admin_user, settings
) -> dict[str, dict[str, str]]:
    from apps.scheduling.services.queues import queue_create

    settings.THROTTLE_RATES = {
        "login": "10000/min",
        "token": "100000/min",
        "request_create": "10000/min",
    }
    queue_create(
        actor=admin_user,
        cluster=sim_cluster,
        name="ci",
        access={"open_to_all": True},
    )
    # Tokens the fuzz may revoke or rotate (the first ids of the table), so that
    # the callers' own tokens stay alive for the whole run.
    for n in range(3):
        token_create(user=admin_user, name=f"spare-{n}")
    headers: dict[str, dict[str, str]] = {"anonymous": {}}
    for role in Role.values:
        user = user_ensure(username=f"fuzz-{role}", role=role)
        # every non-admin token is limited to queues
        queues = [] if role == Role.ADMIN else ["ci"]
        plaintext = token_create(user=user, queues=queues).plaintext
        headers[role] = {"Authorization": f"Bearer {plaintext}"}
    ci = user_ensure(username="ci-bot", role=Role.OPERATOR, is_service_account=True)
    plaintext = token_create(user=ci, queues=["ci"]).plaintext
    headers["ci-token"] = {"Authorization": f"Bearer {plaintext}"}
    return headers


def _count_5xx(status: int, body: Any, fivexx: Counter[str]) -> None:
    if status >= 500:
        kind = "server_error" if _is_server_error(status, body) else UNAVAILABLE
        fivexx[kind] += 1


def _is_server_error(status: int, body: Any) -> bool:
    """A 5xx, except the explained 503 for a cluster the portal cannot reach."""
    return status >= 500 and not (
        status == 503 and explains(body) and body["code"] == UNAVAILABLE
    )


def _fuzz(
    operation: Any,
    headers: dict[str, str],
    statuses: Counter[int],
    failures: list[str],
    per_operation: dict[str, int],
    fivexx: Counter[str],
) -> None:
    """``EXAMPLES`` generated requests to one operation, each answer checked."""

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
        phases=[Phase.explicit, Phase.generate],
    )
    @given(case=operation.as_strategy())
    def run(case: Any) -> None:
        response = case.call(headers=headers)
        status = response.status_code
        statuses[status] += 1
        per_operation[operation.label] = per_operation.get(operation.label, 0) + 1
        try:
            body = response.json()
        except ValueError:
            body = None
        where = f"{case.method} {case.formatted_path} query={case.query}"
        _count_5xx(status, body, fivexx)
        if _is_server_error(status, body):
            failures.append(f"{where} -> {status} {response.text[:300]}")
            return
        if status == 302 and not case.formatted_path.startswith("/api/auth/oidc/"):
            failures.append(
                f"{where} -> 302: only the OpenID Connect sign-in redirects"
            )
            return
        if 400 <= status < 500 and not explains(body):
            failures.append(f"{where} -> {status} unexplained: {response.text[:300]}")
            return
        # The status is one the schema documents for this operation, and an
        # error body matches the schema's Error.
        checks = [status_code_conformance]
        if status >= 400:
            checks.append(response_schema_conformance)
        try:
            case.validate_response(response, checks=checks)
        except FailureGroup as exc:  # say which check and why, and go on
            failures.append(f"{where} -> {status} nonconforming: {str(exc)[:400]}")

    run()


def _send_corpus(
    headers: dict[str, str],
    statuses: Counter[int],
    failures: list[str],
    fivexx: Counter[str],
) -> int:
    """The bad-input corpus as this caller: never a 5xx, always explained."""
    from django.core import signals
    from django.db import close_old_connections
    from django.test import Client

    from apps.inventory.models import ChipType, Cluster, Template

    objects = {
        "cluster": Cluster.objects.order_by("pk").values_list("pk", flat=True).first()
        or 1,
        "chip_type": ChipType.objects.order_by("pk")
        .values_list("pk", flat=True)
        .first()
        or 1,
        "template": Template.objects.order_by("pk").values_list("pk", flat=True).first()
        or 1,
    }
    meta = {f"HTTP_{k.upper().replace('-', '_')}": v for k, v in headers.items()}
    client = Client(raise_request_exception=False)
    for case in CORPUS:
        response = send(client, case, objects, **meta)
        # Django's test client connects close_old_connections again after each
        # request; the WSGI transport of the fuzz must not close the test's
        # connection (see keep_test_connection).
        signals.request_started.disconnect(close_old_connections)
        signals.request_finished.disconnect(close_old_connections)
        statuses[response.status_code] += 1
        try:
            body = response.json()
        except ValueError:
            body = None
        _count_5xx(response.status_code, body, fivexx)
        if _is_server_error(response.status_code, body) or not explains(body):
            failures.append(
                f"corpus {case.name} -> {response.status_code} {response.content[:300]!r}"
            )
    return len(CORPUS)


@pytest.mark.parametrize("role", ROLES)
def test_fuzz_the_api(role, callers, server_errors):
    started = time.monotonic()
    schema = _schema(_known_ids())
    operations = sorted(
        (result.ok() for result in schema.get_all_operations()),
        # Deletes last, so that they do not remove what the others exercise.
        key=lambda op: (op.method.upper() == "DELETE", op.label),
    )
    statuses: Counter[int] = Counter()
    failures: list[str] = []
    per_operation: dict[str, int] = {}

    fivexx: Counter[str] = Counter()
    corpus_calls = _send_corpus(callers[role], statuses, failures, fivexx)
    for operation in operations:
        _fuzz(operation, callers[role], statuses, failures, per_operation, fivexx)

    report = {
        "role": role,
        "operations": len(operations),
        "requests": sum(statuses.values()),
        "corpus_requests": corpus_calls,
        "statuses": dict(sorted(statuses.items())),
        "server_errors": fivexx["server_error"],
        "cluster_unavailable": fivexx["cluster_unavailable"],
        "seconds": round(time.monotonic() - started, 1),
        "failures": failures,
    }
    out = ROOT / "var"
    out.mkdir(exist_ok=True)
    (out / f"fuzz-{role}.json").write_text(json.dumps(report, indent=2))
    assert failures == [], "\n".join(failures[:20] + server_errors.seen[:3])
    # The count of 5xx is zero (an explained 503 cluster_unavailable apart).
    assert fivexx["server_error"] == 0
    assert len(per_operation) == len(operations)  # every operation was called
    if role == "anonymous":
        # nothing but the login endpoint answers an anonymous caller with data;
        # the OpenID Connect sign-in's endpoints answer with redirects (302),
        # to the provider or back to the login page with a login_error
        assert set(statuses) <= {200, 302, 400, 401, 403, 404, 405, 413, 415, 429}
