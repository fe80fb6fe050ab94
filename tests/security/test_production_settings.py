"""Production settings: `check --deploy` is clean, a secret key is required, the demo stays http.

Each case runs Django in a subprocess with the environment a deployment (or
the local demo) would have, because settings are read once per process.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.processes

ROOT = Path(__file__).resolve().parents[2]
# A process that ignores the developer's .env, like a container (which has none).
NO_DOTENV = (
    "import environ; environ.Env.read_env = classmethod(lambda cls, *a, **k: None)\n"
)
SHOW = """
import django, json
django.setup()
from django.conf import settings as s
print(json.dumps({k: getattr(s, k) for k in (
    "DEBUG", "SECURE_SSL_REDIRECT", "SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE",
    "SECURE_HSTS_SECONDS", "SECURE_HSTS_INCLUDE_SUBDOMAINS", "SECURE_HSTS_PRELOAD",
    "SECURE_PROXY_SSL_HEADER", "SESSION_COOKIE_HTTPONLY", "X_FRAME_OPTIONS",
    "SECURE_REFERRER_POLICY", "ALLOWED_HOSTS", "METRICS_TOKEN")}))
"""


def _env(**values: str | None) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("DJANGO_", "SECURE_", "SESSION_", "CSRF_", "POD_IP"))
    }
    env["DJANGO_SETTINGS_MODULE"] = "vnpuportal.settings.base"
    # SQLite in a temp place: these processes never touch CI's PostgreSQL.
    env["DATABASE_URL"] = "sqlite:////tmp/vnpu-settings-check.sqlite3"
    for key, value in values.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def _python(code: str, **values: str | None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", NO_DOTENV + code],
        cwd=ROOT,
        env=_env(**values),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _settings(**values: str | None) -> dict:
    done = _python(SHOW, **values)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


STRONG_KEY = secrets.token_urlsafe(50)


def _manage(*args: str, **values: str | None) -> subprocess.CompletedProcess[str]:
    """``manage.py ARGS`` as a container would run it (no .env)."""
    code = (
        "import runpy, sys\n"
        f"sys.argv = ['manage.py', *{list(args)!r}]\n"
        "runpy.run_path('manage.py', run_name='__main__')\n"
    )
    return _python(code, **values)


def test_check_deploy_is_clean_with_production_settings():
    # given the environment of a deployment, when Django checks it, then no warning
    done = _manage(
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        DJANGO_SECRET_KEY=STRONG_KEY,
        DJANGO_DEBUG="false",
        ALLOWED_HOSTS="portal.example.com",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no issues" in done.stdout


def test_check_deploy_flags_a_weak_key():
    done = _manage(
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        DJANGO_SECRET_KEY="short",
        DJANGO_DEBUG="false",
    )
    assert done.returncode != 0
    assert "security.W009" in done.stdout + done.stderr


@pytest.mark.parametrize("key", [None, "", "   "])
def test_production_refuses_to_start_without_a_secret_key(key):
    # given DEBUG off and no usable key, when Django starts, then it exits with a reason
    done = _python(
        "import django; django.setup()", DJANGO_SECRET_KEY=key, DJANGO_DEBUG="false"
    )
    assert done.returncode != 0
    assert "ImproperlyConfigured" in done.stderr
    assert "DJANGO_SECRET_KEY" in done.stderr


def test_manage_py_refuses_too():
    done = _manage("check", DJANGO_SECRET_KEY=None, DJANGO_DEBUG="false")
    assert done.returncode == 1
    assert "DJANGO_SECRET_KEY" in done.stderr


def test_production_defaults_are_secure():
    found = _settings(DJANGO_SECRET_KEY=STRONG_KEY, DJANGO_DEBUG="false")
    assert found["DEBUG"] is False
    assert found["SECURE_SSL_REDIRECT"] is True
    assert found["SESSION_COOKIE_SECURE"] is True
    assert found["CSRF_COOKIE_SECURE"] is True
    assert found["SECURE_HSTS_SECONDS"] >= 31_536_000
    assert found["SECURE_HSTS_INCLUDE_SUBDOMAINS"] is True
    assert found["SESSION_COOKIE_HTTPONLY"] is True
    assert found["X_FRAME_OPTIONS"] == "DENY"
    assert found["SECURE_REFERRER_POLICY"] == "same-origin"
    assert found["SECURE_PROXY_SSL_HEADER"] is None  # only when told about a proxy
    assert found["METRICS_TOKEN"] == ""  # /metrics is off until a token is set


def test_local_demo_stays_on_plain_http():
    # given the demo's .env (DEBUG on, no key needed), then nothing forces https
    found = _settings(DJANGO_SECRET_KEY=None, DJANGO_DEBUG="true")
    assert found["DEBUG"] is True
    assert found["SECURE_SSL_REDIRECT"] is False
    assert found["SESSION_COOKIE_SECURE"] is False
    assert found["CSRF_COOKIE_SECURE"] is False
    assert found["SECURE_HSTS_SECONDS"] == 0


def test_production_over_plain_http_with_one_switch():
    found = _settings(
        DJANGO_SECRET_KEY=STRONG_KEY, DJANGO_DEBUG="false", DJANGO_SECURE="false"
    )
    assert found["DEBUG"] is False
    assert not found["SECURE_SSL_REDIRECT"]
    assert not found["SESSION_COOKIE_SECURE"]
    assert found["SECURE_HSTS_SECONDS"] == 0


def test_behind_a_tls_proxy_and_in_a_pod():
    found = _settings(
        DJANGO_SECRET_KEY=STRONG_KEY,
        DJANGO_DEBUG="false",
        SECURE_PROXY_SSL_HEADER="X-Forwarded-Proto",
        ALLOWED_HOSTS="portal.example.com",
        POD_IP="10.1.2.3",
    )
    assert found["SECURE_PROXY_SSL_HEADER"] == ["HTTP_X_FORWARDED_PROTO", "https"]
    assert found["ALLOWED_HOSTS"] == ["portal.example.com", "10.1.2.3"]
