"""Settings for the test suite.

Tests must not depend on a developer's shell, so everything is pinned here,
with one deliberate exception: DATABASE_URL and REDIS_URL are honoured, because
CI runs the same suite against real PostgreSQL and Redis (pinning SQLite alone
would leave PostgreSQL's locks and COPY untested; we need both, so the default
stays SQLite and CI opts in).
"""

import os

os.environ.setdefault("DJANGO_SECRET_KEY", "test-secret-key-not-for-production")

from .base import *  # noqa: F403
from .base import BASE_DIR, env

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
