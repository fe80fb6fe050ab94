"""The whole API fuzzed from its OpenAPI schema (schemathesis), as each role.

For anonymous callers, a viewer, an operator, an admin (API tokens) and a CI
token limited to the queue ``ci``, every operation of the schema gets
``FUZZ_EXAMPLES`` generated requests (valid and invalid, hypothesis
derandomized, so CI sees the same ones every run). Every answer must be below
500, except a 503 ``cluster_unavailable`` (the portal telling the truth about a
cluster it cannot reach), and every 4xx must explain itself in the portal's
error body ``{"code", "message", "errors"?}``.

The figures (operations, requests, statuses) are written to
``var/fuzz-<role>.json`` for the report.
"""

from __future__ import annotations

import json
import logging
import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from django.core.wsgi import get_wsgi_application
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, Phase, given, settings

from apps.accounts.services import token_create, user_ensure

pytestmark = [pytest.mark.django_db, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "6"))
ROLES = ["anonymous", "viewer", "operator", "admin", "ci-token"]


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
    keep_test_connection, sim_cluster, viewer, operator, admin_user, settings
) -> dict[str, dict[str, str]]:
    from apps.scheduling.services import queue_create

    settings.THROTTLE_RATES = {
        "login": "10000/min",
        "token": "100000/min",
        "request_create": "10000/min",
    }
    queue_create(actor=admin_user, cluster=sim_cluster, name="ci")
    # Tokens the fuzz may revoke or rotate (the first ids of the table), so that
    # the callers' own tokens stay alive for the whole run.
    for n in range(3):
        token_create(user=viewer, name=f"spare-{n}")
    ci = user_ensure(username="ci-bot", role="operator", is_service_account=True)
    headers = {"anonymous": {}}
    for role, user, queues in (
        ("viewer", viewer, []),
        ("operator", operator, []),
        ("admin", admin_user, []),
        ("ci-token", ci, ["ci"]),
    ):
        plaintext = token_create(user=user, queues=queues).plaintext
        headers[role] = {"Authorization": f"Bearer {plaintext}"}
    return headers


def _fuzz(
    operation: Any,
    headers: dict[str, str],
    statuses: Counter[int],
    failures: list[str],
    per_operation: dict[str, int],
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
        if status >= 500 and not (
            status == 503 and explains(body) and body["code"] == "cluster_unavailable"
        ):
            failures.append(f"{where} -> {status} {response.text[:300]}")
        elif 400 <= status < 500 and not explains(body):
            failures.append(f"{where} -> {status} unexplained: {response.text[:300]}")

    run()


@pytest.mark.parametrize("role", ROLES)
def test_fuzz_the_api(role, callers, server_errors):
    schema = _schema(_known_ids())
    operations = sorted(
        (result.ok() for result in schema.get_all_operations()),
        # Deletes last, so that they do not remove what the others exercise.
        key=lambda op: (op.method.upper() == "DELETE", op.label),
    )
    statuses: Counter[int] = Counter()
    failures: list[str] = []
    per_operation: dict[str, int] = {}

    for operation in operations:
        _fuzz(operation, callers[role], statuses, failures, per_operation)

    report = {
        "role": role,
        "operations": len(operations),
        "requests": sum(statuses.values()),
        "statuses": dict(sorted(statuses.items())),
        "failures": failures,
    }
    out = ROOT / "var"
    out.mkdir(exist_ok=True)
    (out / f"fuzz-{role}.json").write_text(json.dumps(report, indent=2))
    assert failures == [], "\n".join(failures[:20] + server_errors.seen[:3])
    assert len(per_operation) == len(operations)  # every operation was called
    if role == "anonymous":
        # nothing but the login endpoint answers an anonymous caller with data
        assert set(statuses) <= {200, 400, 401, 403, 404, 405, 415, 429}
