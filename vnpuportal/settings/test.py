"""Settings for the test suite.

Tests must not depend on a developer's shell, so everything is pinned here,
with one deliberate exception: DATABASE_URL and REDIS_URL are honoured, because
CI runs the same suite against real PostgreSQL and Redis (pinning SQLite alone
would leave PostgreSQL's locks and COPY untested; we need both, so the default
stays SQLite and CI opts in).
"""

import os
from pathlib import Path

os.environ.setdefault("DJANGO_SECRET_KEY", "test-secret-key-not-for-production")


def _redis_db_of_worker(url: str, worker: str) -> str:
    """REDIS_URL on a database of this pytest-xdist worker's own (gw0 -> 1,
    gw1 -> 2, ...): the workers' Celery queues and channel groups would
    otherwise take each other's messages. The server has 16 databases."""
    base, _, tail = url.rpartition("/")
    index = int(worker.removeprefix("gw") or 0) % 15 + 1
    return f"{base}/{index}" if tail.isdigit() or tail == "" else f"{url}/{index}"


_worker = os.environ.get("PYTEST_XDIST_WORKER", "")
if _worker:
    # Set in the environment, not only in settings: tests and the processes
    # they start read REDIS_URL, LOCK_DIR and the cache folders from it.
    if os.environ.get("REDIS_URL"):
        os.environ["REDIS_URL"] = _redis_db_of_worker(os.environ["REDIS_URL"], _worker)
    _var = Path(__file__).resolve().parents[2] / "var"
    # File locks (the SQLite default) are named after cluster ids, which
    # every worker's database starts at 1.
    os.environ.setdefault("LOCK_DIR", str(_var / f"locks-{_worker}"))

# After the environment above: base reads it.
from .base import *  # noqa: E402, F403
from .base import BASE_DIR, env  # noqa: E402

DEBUG = False
# Pinned, whatever a developer's .env says: the test client speaks plain http.
# (tests/security checks the production values through the base settings.)
DJANGO_SECURE = False
SECURE_SSL_REDIRECT = False
SESSION_COOKIE_SECURE = False
CSRF_COOKIE_SECURE = False
SECURE_HSTS_SECONDS = 0
SECURE_HSTS_INCLUDE_SUBDOMAINS = False
SECURE_HSTS_PRELOAD = False
DATABASES = {
    "default": env.db("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'test.sqlite3'}")
}
DATABASES["default"]["ATOMIC_REQUESTS"] = True
if not str(DATABASES["default"]["ENGINE"]).endswith("sqlite3"):
    # A database per test run, so that concurrent runs on one server do not collide.
    DATABASES["default"]["TEST"] = {"NAME": f"test_vnpu_{os.getpid()}"}
else:
    # A file, not memory: sync tests run watcher threads and worker processes
    # that must see (and wait for) each other's writes.
    # One file per test run, so that concurrent runs do not share it.
    DATABASES["default"]["TEST"] = {
        "NAME": str(BASE_DIR / "var" / f"test-db-{os.getpid()}.sqlite3")
    }
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 30,
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL;",
    }
    (BASE_DIR / "var").mkdir(exist_ok=True)
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
# Unit tests run tasks inline; the worker tests start real Celery workers on
# REDIS_URL themselves.
CELERY_TASK_ALWAYS_EAGER = True
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_BROKER_URL = "memory://"
CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
LOGGING = {"version": 1, "disable_existing_loggers": False}
REALTIME_OUTBOX = False
WHITENOISE_AUTOREFRESH = True  # no collectstatic in tests
# Kubeconfigs: tests store content (as the API does); a test that needs a
# folder or exec plugins sets these itself.
KUBECONFIG_DIR = ""
KUBECONFIG_ALLOW_EXEC = False
WS_ALLOWED_ORIGINS = []
WS_AUTH_RECHECK_SECONDS = 30.0
# Tests read what they just made Prometheus see.
USAGE_CACHE_SECONDS = 0
# Sign-in: local passwords on and OpenID Connect off, whatever a developer's
# .env says; the OIDC tests point these at their own provider (tests/oidc_flow.py).
LOCAL_LOGIN_ENABLED = True
OIDC_ISSUER = ""
OIDC_CLIENT_ID = ""
OIDC_CLIENT_SECRET = ""
