"""No secret in an API response, a log line or an error page.

The secrets: API token plaintexts (``vnp_...``), cluster bearer tokens, the
Authorization header, SECRET_KEY and METRICS_TOKEN.
"""

from __future__ import annotations

import io
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client

from apps.accounts.services import token_create, user_ensure
from apps.common.logging import ScrubSecretsFilter, scrub
from tests.test_anonymous_access import api_paths

ROOT = Path(__file__).resolve().parents[2]
CLUSTER_TOKEN = "cluster-bearer-0123456789abcdefXYZ"
API_TOKEN = "vnp_0123abcd_" + "S" * 43


# --- the scrubber ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "secret"),
    [
        (f"auth with {API_TOKEN}", "S" * 43),
        ("Authorization: Bearer abcdefghijklmnop", "abcdefghijklmnop"),
        ("{'HTTP_AUTHORIZATION': 'Token zzzzzzzzzzzz'}", "zzzzzzzzzzzz"),
        ("[(b'authorization', b'Bearer qqqqqqqqqqqq')]", "qqqqqqqqqqqq"),
        (f"kube call failed: Bearer {CLUSTER_TOKEN}", CLUSTER_TOKEN),
        ('{"password": "hunter2hunter2"}', "hunter2hunter2"),
    ],
)
def test_scrub_removes_every_spelling(line, secret):
    cleaned = scrub(line, literals=[])
    assert secret not in cleaned
    assert "[redacted]" in cleaned


def test_scrub_keeps_the_public_prefix_and_harmless_words():
    assert scrub(f"token {API_TOKEN} used", literals=[]) == (
        "token vnp_0123abcd_[redacted] used"
    )
    assert scrub('{"has_token": true}', literals=[]) == '{"has_token": true}'


def test_scrub_removes_the_settings_secrets(settings):
    settings.METRICS_TOKEN = "metrics-token-value-42"
    assert "metrics-token-value-42" not in scrub("scrape with metrics-token-value-42")
    assert settings.SECRET_KEY not in scrub(f"key is {settings.SECRET_KEY}")


def test_every_record_is_scrubbed_at_birth(caplog):
    # the record factory is installed by LOGGING_CONFIG in every process
    logging.getLogger("apps.test").warning("token %s for %s", API_TOKEN, "ci")
    assert "S" * 43 not in caplog.text
    assert "vnp_0123abcd_[redacted] for ci" in caplog.text


def test_the_filter_cleans_tracebacks_too():
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(ScrubSecretsFilter())
    logger = logging.getLogger("apps.test.filter")
    logger.addHandler(handler)
    try:
        raise RuntimeError(f"kube said no to Bearer {CLUSTER_TOKEN}")
    except RuntimeError:
        logger.exception("sync failed")
    finally:
        logger.removeHandler(handler)
    assert "Traceback" in stream.getvalue()
    assert CLUSTER_TOKEN not in stream.getvalue()


def test_settings_wire_the_filter_into_every_handler():
    from vnpuportal.settings import base

    assert base.LOGGING_CONFIG == "apps.common.logging.configure"
    assert all("scrub" in h["filters"] for h in base.LOGGING["handlers"].values())


# --- a real process: its stderr and its error pages ------------------------------------

PROCESS = """
import logging, sys
import django
django.setup()
from django.test import Client
from django.test.utils import override_settings, setup_test_environment
setup_test_environment()
secret = sys.argv[1]
with override_settings(ROOT_URLCONF="tests.security.boom_urls", SECURE_SSL_REDIRECT=False):
    client = Client(raise_request_exception=False)
    for path in ("/api/boom/", "/boom/"):
        answer = client.get(path, HTTP_AUTHORIZATION="Bearer " + secret)
        print("ANSWER", answer.status_code, answer["Content-Type"], answer.content.decode())
log = logging.getLogger("apps.inventory.sync")
log.warning("Authorization: Bearer %s", secret)
log.info("issued %s", secret)
try:
    raise RuntimeError("cannot use " + secret)
except RuntimeError:
    log.exception("failed")
"""


@pytest.mark.processes
def test_a_production_process_leaks_no_secret_in_pages_or_logs():
    env = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")}
    env.update(
        DJANGO_SETTINGS_MODULE="vnpuportal.settings.base",
        DJANGO_SECRET_KEY="s" * 60,
        DJANGO_DEBUG="false",
        DATABASE_URL="sqlite://:memory:",
        LOG_LEVEL="INFO",
    )
    done = subprocess.run(
        [sys.executable, "-c", PROCESS, API_TOKEN],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    answers = [line for line in done.stdout.splitlines() if line.startswith("ANSWER")]
    # the API's 500 is the portal's error body; the page's is plain text
    api_status, api_type, api_body = answers[0].split(" ", 3)[1:]
    assert api_status == "500"
    assert api_type == "application/json"
    assert json.loads(api_body) == {
        "code": "server_error",
        "message": "The server failed to answer this request; the error has been logged.",
    }
    assert answers[1].startswith("ANSWER 500 text/plain")
    for text in (done.stdout, done.stderr):
        assert "S" * 43 not in text
        assert "Traceback" not in done.stdout
        assert "s" * 60 not in text
    # the log did say what happened (scrubbed), with the traceback
    assert "Internal Server Error: /api/boom/" in done.stderr
    assert "RuntimeError: failed with Bearer vnp_0123abcd_[redacted]\n" in done.stderr
    assert "issued vnp_0123abcd_[redacted]" in done.stderr


# --- API responses -----------------------------------------------------------------------


@pytest.mark.django_db
def test_no_api_response_contains_a_secret(admin_client_api, guide_cluster):
    # given a cluster with a stored bearer token and a live API token
    answer = admin_client_api.patch(
        f"/api/clusters/{guide_cluster.pk}/",
        {
            "connection": "token",
            "api_url": "https://k8s.example:6443",
            "token": CLUSTER_TOKEN,
        },
        format="json",
    )
    assert answer.status_code == 200, answer.json()
    assert answer.json()["has_token"] is True
    from apps.scheduling.models import Queue

    Queue.objects.get_or_create(cluster=guide_cluster, name="ci")
    user = user_ensure(username="ci", role="operator", is_service_account=True)
    issued = token_create(user=user, queues=["ci"])
    # vnp_<prefix>_<secret>: the secret itself may contain "_"
    secret_part = issued.plaintext.split("_", 2)[2]
    secrets = [CLUSTER_TOKEN, secret_part, settings.SECRET_KEY]
    # when an admin reads every endpoint (lists, details, actions that read)
    checked = 0
    for path in api_paths():
        for concrete in {path, path.replace("/1/", f"/{guide_cluster.pk}/")}:
            response = admin_client_api.get(concrete)
            checked += 1
            body = response.content.decode(errors="replace")
            # then none of the secrets is anywhere in the answer
            for secret in secrets:
                assert secret not in body, f"GET {concrete} leaks a secret"
    assert checked > 30
    # and the token the admin just issued appears only as its public prefix
    tokens = Client().get(
        "/api/tokens/", HTTP_AUTHORIZATION=f"Bearer {issued.plaintext}"
    )
    assert tokens.status_code == 403  # an operator token may not even list them
