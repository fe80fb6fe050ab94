"""The third probe's cost findings (issue 39): bodies, parses and pod templates.

Each test failed before its fix: anonymous bodies of any size were read (and
spooled to disk) before any check, on every path; a 1.2-million-item JSON
array cost seconds of CPU before the login throttle could act; pod templates
up to the body limit were stored and served on every list page.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest
from django.test import Client
from rest_framework.exceptions import ValidationError
from rest_framework.test import APIClient

from apps.accounts.services import token_create

CHUNK = 64 * 1024


# --- 3. the ASGI body limit -----------------------------------------------------------


def _scope(path: str, headers: list[tuple[bytes, bytes]]) -> dict[str, Any]:
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": [(b"host", b"testserver"), *headers],
        "client": ("10.0.0.7", 40000),
        "server": ("testserver", 80),
    }


class _Stream:
    """A client sending ``total`` bytes (or forever) in chunks; counts what was read."""

    def __init__(self, total: int | None) -> None:
        self.total = total
        self.read = 0
        self.pulls = 0

    async def receive(self) -> dict[str, Any]:
        self.pulls += 1
        if self.total is not None and self.read >= self.total:
            await asyncio.sleep(3600)  # a client that waits for the answer
        size = CHUNK if self.total is None else min(CHUNK, self.total - self.read)
        self.read += size
        more = self.total is None or self.read < self.total
        return {"type": "http.request", "body": b"x" * size, "more_body": more}


def _call(path: str, stream: _Stream, headers=()) -> tuple[int, dict, bytes]:
    from vnpuportal.asgi import application

    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    async def run() -> None:
        await asyncio.wait_for(
            application(_scope(path, list(headers)), stream.receive, send), 30
        )

    asyncio.run(run())
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(
        m.get("body", b"") for m in sent if m["type"] == "http.response.body"
    )
    return start["status"], dict(start["headers"]), body


@pytest.fixture
def body_limit(settings) -> int:
    settings.REQUEST_BODY_MAX_BYTES = 1024 * 1024
    return settings.REQUEST_BODY_MAX_BYTES


@pytest.mark.parametrize("path", ["/healthz", "/api/auth/login/", "/admin/login/"])
def test_an_endless_chunked_body_gets_413_without_being_read_past_the_limit(
    path, body_limit
):
    stream = _Stream(total=None)  # chunked: no Content-Length, never ends
    status, headers, body = _call(
        path, stream, [(b"content-type", b"application/json")]
    )
    assert status == 413
    assert headers[b"content-type"] == b"application/json"
    answer = json.loads(body)
    assert answer["code"] == "too_large"
    assert answer["detail"] == {"limit_bytes": body_limit}
    assert answer["message"]
    # the chunk that crossed the limit was the last one read
    assert stream.read <= body_limit + CHUNK


@pytest.mark.parametrize("path", ["/healthz", "/api/requests/"])
def test_a_declared_length_over_the_limit_gets_413_before_any_read(path, body_limit):
    stream = _Stream(total=body_limit * 512)
    status, _, body = _call(
        path, stream, [(b"content-length", str(body_limit * 512).encode())]
    )
    assert status == 413
    assert json.loads(body)["code"] == "too_large"
    assert stream.pulls == 0


def test_the_limits_answer_comes_in_the_asked_language(body_limit):
    """Answered before Django's LocaleMiddleware, in its language all the same."""
    declared = [(b"content-length", str(body_limit * 2).encode())]
    status, headers, body = _call(
        "/api/requests/",
        _Stream(total=body_limit * 2),
        [*declared, (b"accept-language", b"zh-CN,zh;q=0.9")],
    )
    assert status == 413
    assert headers[b"content-language"] == b"zh-hans"
    answer = json.loads(body)
    assert answer["code"] == "too_large"
    assert answer["message"] == f"请求体超过了 {body_limit} 字节的上限"
    status, headers, body = _call("/api/requests/", _Stream(total=0), declared)
    assert headers[b"content-language"] == b"en"
    assert json.loads(body)["message"].startswith("the request body is larger")


def test_an_unreadable_content_length_is_a_400_in_the_error_shape(body_limit):
    status, _, body = _call("/healthz", _Stream(total=0), [(b"content-length", b"1e9")])
    assert status == 400
    assert json.loads(body)["code"] == "bad_request"


@pytest.mark.django_db(transaction=True)
def test_a_body_under_the_limit_goes_through(body_limit):
    # a login body of normal size reaches the view (400: no CSRF token)
    stream = _Stream(total=200)
    status, _, _ = _call(
        "/healthz",
        stream,
        [(b"content-length", b"200"), (b"content-type", b"text/plain")],
    )
    assert status != 413
    assert stream.read == 200


def test_the_default_limit_is_above_djangos_own():
    from django.conf import settings

    assert settings.REQUEST_BODY_MAX_BYTES > settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    assert settings.REQUEST_BODY_MAX_BYTES <= 4 * 1024 * 1024


def test_the_chart_and_the_docs_state_the_limit():
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    chart = root / "deploy" / "helm" / "vnpu-portal"
    values = (chart / "values.yaml").read_text()
    assert "REQUEST_BODY_MAX_BYTES" in values or "maxBodyBytes" in values
    ingress = (chart / "templates" / "ingress.yaml").read_text()
    assert "proxy-body-size" in ingress
    security = (root / "docs" / "security.md").read_text()
    assert "REQUEST_BODY_MAX_BYTES" in security
    assert "client_max_body_size" in security


# --- 6. parse cost, and the login throttle before the parse -----------------------


@pytest.mark.django_db
def test_a_login_body_of_a_million_values_is_refused_cheaply():
    body = json.dumps(
        {"username": [1] * 1_200_000, "password": "x"}, separators=(",", ":")
    )
    assert len(body) < 2_621_440  # under Django's body limit
    client = Client(raise_request_exception=False)
    started = time.process_time()
    response = client.post("/api/auth/login/", body, content_type="application/json")
    spent = time.process_time() - started
    assert response.status_code == 400
    assert "username" in response.json()["errors"]
    assert spent < 0.6, f"{spent:.2f} s of CPU for one anonymous body"


@pytest.mark.django_db
def test_a_sane_body_is_not_counted_out(admin_user):
    from apps.common.parsers import MAX_JSON_ELEMENTS, check_size

    check_size({"a": list(range(MAX_JSON_ELEMENTS - 1))})
    with pytest.raises(ValidationError) as refused:
        check_size({"ok": 1, "big": [[0] * 100] * (MAX_JSON_ELEMENTS // 100)})
    assert "big" in refused.value.detail


@pytest.mark.django_db
def test_an_address_over_its_login_budget_is_refused_before_its_body_is_read(
    settings, monkeypatch
):
    from apps.common import parsers

    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "login_ip": "3/min"}
    client = APIClient()
    # three sign-in attempts, each for another name, from one address
    for name in ("a", "b", "c"):
        answer = client.post(
            "/api/auth/login/",
            {"username": name, "password": "x"},
            format="json",
            REMOTE_ADDR="10.0.0.5",
        )
        assert answer.status_code == 401
    parsed: list[int] = []
    real = parsers.PortalJSONParser.parse

    def counted(self, *args, **kwargs):
        parsed.append(1)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(parsers.PortalJSONParser, "parse", counted)
    # the fourth, for a fourth name, is refused without a parse
    answer = client.post(
        "/api/auth/login/",
        {"username": "d", "password": "x"},
        format="json",
        REMOTE_ADDR="10.0.0.5",
    )
    assert answer.status_code == 429
    assert int(answer["Retry-After"]) > 0
    assert parsed == []
    # another address is not affected
    answer = client.post(
        "/api/auth/login/",
        {"username": "d", "password": "x"},
        format="json",
        REMOTE_ADDR="10.0.0.6",
    )
    assert answer.status_code == 401


# --- 6. the pod_template size cap --------------------------------------------------


@pytest.mark.django_db
def test_a_pod_template_over_its_cap_is_refused_naming_it(guide_cluster, admin_user):
    from apps.scheduling.models import Request

    template = {
        "metadata": {"annotations": {"note": "x" * (70 * 1024)}},
        "spec": {"containers": [{"name": "main", "image": "busybox"}]},
    }
    body = json.dumps(
        {
            "cluster": "guide",
            "namespace": "ci",
            "chip_type": "Ascend310P",
            "memory": 1000,
            "pod_template": template,
        }
    )
    response = Client(raise_request_exception=False).post(
        "/api/requests/",
        body,
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token_create(user=admin_user).plaintext}",
    )
    assert response.status_code == 400, response.content[:300]
    assert "pod_template" in response.json()["errors"]
    assert "65536 bytes" in response.json()["errors"]["pod_template"][0]
    assert not Request.objects.exists()


def test_the_pod_template_cap_is_a_setting(settings):
    from apps.scheduling.validation import pod_template_errors

    template = {"spec": {"containers": [{"name": "m", "image": "b" * 200}]}}
    assert "pod_template" not in pod_template_errors(template)
    settings.POD_TEMPLATE_MAX_BYTES = 100
    assert "pod_template" in pod_template_errors(template)
