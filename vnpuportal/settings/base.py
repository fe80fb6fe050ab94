"""All settings, read from the environment with embedded defaults.

With no environment at all the portal runs on SQLite, with Celery tasks run
in-process and an in-memory channel layer: the "embedded default" the README's
run command uses. Production sets DATABASE_URL and REDIS_URL.

Each setting is assigned once, in this order: the process (debug, hosts),
Django's apps and middleware, the database, Redis and Celery, the API, logging,
security, then the portal's own: clusters and sync, the UI, scheduling.
"""

from __future__ import annotations

from typing import Any

import environ

from vnpuportal.channel_layers import channel_layers
from vnpuportal.env import BASE_DIR, env

DEBUG = env.bool("DJANGO_DEBUG", default=False)
SECRET_KEY = env(
    "DJANGO_SECRET_KEY",
    default="dev-insecure-key-change-me" if DEBUG else environ.Env.NOTSET,
)
if not DEBUG and not str(SECRET_KEY).strip():
    # environ already refuses a missing DJANGO_SECRET_KEY; an empty one would
    # otherwise only fail at the first request that signs something.
    raise environ.ImproperlyConfigured(
        "DJANGO_SECRET_KEY is empty: production refuses to start without a secret "
        "key (set DJANGO_DEBUG=true for a local demo)"
    )
# Kubelet probes and Prometheus address the pod by its IP (the Deployment passes
# it through the downward API as POD_IP).
ALLOWED_HOSTS = env.list(
    "ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]"]
) + ([env("POD_IP")] if env("POD_IP", default="") else [])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

# =====================================================================================
# Django: apps, middleware, templates, database
# =====================================================================================
INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "channels",
    # apps.common has no models; as an app it connects the Celery signals that
    # time tasks (apps.common.task_metrics) in every process.
    "apps.common",
    "apps.live",
    "apps.accounts",
    "apps.inventory",
    "apps.audit",
    "apps.scheduling",
    "apps.metering",
    "apps.alerts",
]

MIDDLEWARE = [
    # First, so that it times every answer, the refused ones included.
    "apps.common.metrics.RequestMetricsMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # The answer's language (Accept-Language, or the django_language cookie):
    # after the session, before CommonMiddleware (Django's order); sets
    # Content-Language on every answer. Error codes and field names never change.
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # PostgreSQL unreachable: 503 database_unavailable with Retry-After, not 500.
    "apps.common.db_unavailable.DatabaseUnavailableMiddleware",
]

ROOT_URLCONF = "vnpuportal.urls"
WSGI_APPLICATION = "vnpuportal.wsgi.application"
ASGI_APPLICATION = "vnpuportal.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "vnpuportal" / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]


def _database(url: str, pool_max_size: int = 0) -> dict[str, object]:
    """DATABASE_URL with the options each engine needs here (``pool_max_size``
    > 0: a connection pool of that size, PostgreSQL only)."""
    database = env.db_url_config(url)
    database["ATOMIC_REQUESTS"] = True
    options = database.setdefault("OPTIONS", {})
    if database["ENGINE"].endswith("postgresql"):
        # An unreachable server (a partition, not a refusal) fails a request with
        # 503 after this long instead of hanging it; ?connect_timeout=N overrides.
        options.setdefault("connect_timeout", 5)
        if pool_max_size > 0:
            # Connections kept open between requests (psycopg's pool): a web
            # process pays no connect (about 5 ms) per request, and never holds
            # more than this many. Django runs sync views one at a time per
            # process, so a few suffice; a request waits up to the timeout for
            # one, then fails with 503 as a database outage does.
            options["pool"] = {
                "min_size": 1,
                "max_size": pool_max_size,
                "timeout": 10,
            }
    if database["ENGINE"].endswith("sqlite3"):
        # Workers, the web process and the sync loop share one file: wait for the
        # writer lock instead of failing with "database is locked".
        # WAL lets the web process read while the worker writes.
        options.update(
            {
                "timeout": 30,
                "transaction_mode": "IMMEDIATE",
                "init_command": "PRAGMA journal_mode=WAL;PRAGMA synchronous=NORMAL;",
            }
        )
    return database


DATABASES = {
    "default": _database(
        env("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}"),
        # 0: a connection per request (per thread); the web image sets 4
        pool_max_size=env.int("DATABASE_POOL_MAX_SIZE", default=0),
    )
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# =====================================================================================
# Redis, channels and Celery
# =====================================================================================
REDIS_URL = env("REDIS_URL", default="")  # empty: embedded mode, no Redis


def _default_cache() -> dict[str, Any]:
    """``CACHE_URL``'s cache; Redis with one connection pool per process, not
    one connection per request as Django's own under ASGI (apps/common/cache.py)."""
    cache = env.cache("CACHE_URL", default="locmemcache://")
    if cache["BACKEND"] == "django.core.cache.backends.redis.RedisCache":
        cache = {**cache, "BACKEND": "apps.common.cache.ProcessPooledRedisCache"}
    return cache


CACHES = {"default": _default_cache()}
CHANNEL_LAYERS = channel_layers(REDIS_URL)  # see vnpuportal/channel_layers.py
# Without Redis the worker cannot reach the web process's in-memory channel
# layer; deltas then go through a database outbox (apps.live.realtime).
REALTIME_OUTBOX = env.bool("REALTIME_OUTBOX", default=not REDIS_URL)

# The embedded run command uses "filesystem://" so that its worker is a real,
# separate process without Redis; with no broker at all tasks run inline.
CELERY_BROKER_URL = env("CELERY_BROKER_URL", default=REDIS_URL or "memory://")
CELERY_RESULT_BACKEND = None
CELERY_TASK_ALWAYS_EAGER = CELERY_BROKER_URL == "memory://"
# How long a sync task keeps its watches before handing over (beat restarts it).
SYNC_TASK_SECONDS = env.int("SYNC_TASK_SECONDS", default=600)


def _broker_transport_options(broker_url: str) -> dict[str, object]:
    if broker_url.startswith("filesystem://"):
        queue_dir = BASE_DIR / "var" / "celery"
        for sub in ("queue", "processed", "control"):
            (queue_dir / sub).mkdir(parents=True, exist_ok=True)
        return {
            "data_folder_in": str(queue_dir / "queue"),
            "data_folder_out": str(queue_dir / "queue"),
            "processed_folder": str(queue_dir / "processed"),
            "control_folder": str(queue_dir / "control"),
            "store_processed": False,
        }
    if broker_url.startswith(("redis://", "rediss://")):
        # Redis hands a task taken but never acknowledged (its worker died:
        # acks_late) to another worker after this many seconds: longer than the
        # longest task (a sync task keeps its watches for SYNC_TASK_SECONDS), or
        # it would run twice.
        return {
            "visibility_timeout": env.int(
                "CELERY_VISIBILITY_TIMEOUT", default=SYNC_TASK_SECONDS + 300
            )
        }
    return {}


CELERY_BROKER_TRANSPORT_OPTIONS = _broker_transport_options(CELERY_BROKER_URL)
CELERY_TASK_ACKS_LATE = True  # a killed worker's task is delivered again
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TIMEZONE = "UTC"
# Celery keeps the handlers of LOGGING (and their filter) instead of installing its own.
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
# Workers wait for the broker at start (and after it restarts) instead of dying,
# however long it is away (Celery's default gives up after 100 tries, ~50 min).
# A restart under a running worker: apps/common/broker.py.
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_CONNECTION_RETRY = True
CELERY_BROKER_CONNECTION_MAX_RETRIES = None
# How often the start of each cluster's scheduler is read (apps.inventory.deviceconfig.refresh).
CONFIG_LOADED_REFRESH_SECONDS = env.float("CONFIG_LOADED_REFRESH_SECONDS", default=10.0)
# A scheduling pass (reconcile, reserve, admit) for every cluster with active
# requests, and the evictions due, this often; passes also run at once when a
# request is submitted or cancelled, a proposal approved, or sync sees a change.
SCHEDULING_PASS_SECONDS = env.float("SCHEDULING_PASS_SECONDS", default=5.0)
# Bookings and the usage gauges are refreshed this often (apps.metering).
METERING_REFRESH_SECONDS = env.float("METERING_REFRESH_SECONDS", default=30.0)
# The isolation policy looks at the chip suggestions this often (it acts only
# when ISOLATION_AUTO_ISOLATE or ISOLATION_AUTO_RESTORE is on).
ISOLATION_POLICY_SECONDS = env.float("ISOLATION_POLICY_SECONDS", default=60.0)
# Every periodic job, in one place.
CELERY_BEAT_SCHEDULE: dict[str, dict[str, object]] = {
    # Restart any cluster's watchers that stopped (their task ended or a worker
    # died); tasks that find the locks taken exit at once, so this is cheap.
    "sync-all-clusters": {
        "task": "apps.inventory.tasks.sync_all_clusters_task",
        "schedule": 30.0,
    },
    # Which device-config version each cluster's scheduler loaded (its pods'
    # start): requests are placed by it until a restart (apps.inventory.deviceconfig.refresh).
    "config-loaded": {
        "task": "apps.inventory.tasks.config_loaded_refresh_task",
        "schedule": CONFIG_LOADED_REFRESH_SECONDS,
    },
    # One usage sample per cluster and chip type a minute, for the charts.
    "record-usage-samples": {
        "task": "apps.inventory.tasks.record_usage_samples_task",
        "schedule": 60.0,
    },
    "scheduling-passes": {
        "task": "apps.scheduling.tasks.schedule_clusters_task",
        "schedule": SCHEDULING_PASS_SECONDS,
    },
    # Bookings opened and closed from the synced slices, and the derived gauges
    # (idle slices, cost per queue) refreshed from Prometheus (apps.metering).
    "metering-refresh": {
        "task": "apps.metering.tasks.metering_refresh_task",
        "schedule": METERING_REFRESH_SECONDS,
    },
    # Isolate and restore chips by the health rules, when a site turned the
    # policy on (apps.inventory.nodeconfig.policy; off by default).
    "isolation-policy": {
        "task": "apps.inventory.tasks.isolation_policy_task",
        "schedule": ISOLATION_POLICY_SECONDS,
    },
}

AUTH_PASSWORD_VALIDATORS = [
    {
        "NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"
    },
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# The languages the API and the commands answer in (docs/languages.md): English,
# and Simplified Chinese for zh-CN, zh-Hans, zh-SG and zh (Django's fallbacks;
# zh-TW and zh-HK too, Simplified being nearer than English). The catalog is
# locale/zh_Hans/LC_MESSAGES/django.po, compiled to .mo by
# `manage.py compile_locale` (scripts/run.sh, scripts/test.sh, the image).
LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("zh-hans", "简体中文")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
# The image runs collectstatic; a checkout that has not (the demo, the tests,
# a plain `runserver`) serves the apps' static files (admin, Swagger UI) from
# their packages instead.
WHITENOISE_USE_FINDERS = DEBUG or not STATIC_ROOT.is_dir()

LOGIN_URL = "/admin/login/"

# =====================================================================================
# The REST API
# =====================================================================================
# Rate limits (DRF throttles on the Django cache: locmem embedded, CACHE_URL=redis://
# in deployment so that every replica counts together). Values are "N/period".
THROTTLE_RATES = {
    # per client IP and username: guessing passwords
    "login": env("THROTTLE_LOGIN", default="10/min"),
    # per client IP, whatever the username: checked before the body is read, so
    # a flood of sign-in bodies stops costing a parse
    "login_ip": env("THROTTLE_LOGIN_IP", default="100/min"),
    # per API token: a runaway CI job
    "token": env("THROTTLE_TOKEN", default="1200/min"),
    # per user: submissions of scheduling requests
    "request_create": env("THROTTLE_REQUEST_CREATE", default="60/min"),
}
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "apps.accounts.authentication.ApiTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["apps.accounts.permissions.RolePermission"],
    # The API takes JSON only, through one parser with a depth limit and no NUL
    # or lone surrogates (apps/common/parsers.py). Form bodies went around it:
    # a JSONField's form value is parsed by json.loads with no limit at all.
    "DEFAULT_PARSER_CLASSES": ["apps.common.parsers.PortalJSONParser"],
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "DEFAULT_PAGINATION_CLASS": "apps.common.pagination.PortalPagination",
    "PAGE_SIZE": 100,
    "DEFAULT_SCHEMA_CLASS": "apps.common.schema.AutoSchema",
    "EXCEPTION_HANDLER": "apps.common.api.exception_handler",
    "TEST_REQUEST_DEFAULT_FORMAT": "json",
    "DEFAULT_THROTTLE_CLASSES": ["apps.accounts.throttling.TokenRateThrottle"],
    "DEFAULT_THROTTLE_RATES": THROTTLE_RATES,
    # How many proxies sit in front of the portal (X-Forwarded-For hops to trust
    # for the client IP of the login throttle); 0 uses REMOTE_ADDR.
    "NUM_PROXIES": env.int("NUM_PROXIES", default=0),
}

SPECTACULAR_SETTINGS = {
    "TITLE": "vNPU Portal API",
    "DESCRIPTION": (
        "Inventory, vNPU templates and device-config versions of Kubernetes "
        "clusters that slice Huawei Ascend NPUs with HAMi and Volcano."
    ),
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    "SCHEMA_PATH_PREFIX": r"/api/",
    # Swagger UI's files come from the portal itself (drf-spectacular-sidecar):
    # sites without internet access still get a working /api/docs/.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Every operation documents the error answers (400/401/403/404, 413, 415, 429).
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "apps.common.schema.document_error_responses",
    ],
    "ENUM_NAME_OVERRIDES": {
        "RoleEnum": "apps.accounts.choices.Role",
        "DeviceConfigShapeEnum": "apps.inventory.choices.DeviceConfigShape",
        "DeviceConfigSourceEnum": "apps.inventory.choices.DeviceConfigSource",
        "ConnectionKindEnum": "apps.inventory.choices.ConnectionKind",
        "SyncStateEnum": "apps.inventory.choices.SyncState",
        "RequestStateEnum": "apps.scheduling.choices.RequestState",
        "ProposalStateEnum": "apps.scheduling.choices.ProposalState",
        "DrainStateEnum": "apps.scheduling.choices.DrainState",
        "DrainScopeEnum": "apps.scheduling.choices.DrainScope",
        "ChipStateEnum": "apps.inventory.choices.ChipState",
    },
}

# Prometheus metrics at /metrics, for a scraper that sends
# "Authorization: Bearer <METRICS_TOKEN>"; empty means /metrics answers 404.
METRICS_TOKEN = env("METRICS_TOKEN", default="")
# The portal's address as people reach it (https://vnpu.example.com): alerts
# link to its pages (manage.py alert_rules). Empty: no link can be built.
PORTAL_URL = env("PORTAL_URL", default="").rstrip("/")

# Local passwords and OpenID Connect sign-in (LOCAL_LOGIN_ENABLED, OIDC_*).
from vnpuportal.settings.sign_in import *  # noqa: E402, F403

# =====================================================================================
# Logging
# =====================================================================================
# No secret in a log line: every handler scrubs tokens and Authorization headers.
# The record factory that configure() installs covers handlers configured by
# others (uvicorn's); the filter also cleans formatted tracebacks.
LOGGING_CONFIG = "apps.common.logging.configure"
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"scrub": {"()": "apps.common.logging.ScrubSecretsFilter"}},
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": "plain",
            "filters": ["scrub"],
        }
    },
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", default="INFO")},
    "loggers": {"kubernetes": {"level": "WARNING"}, "urllib3": {"level": "WARNING"}},
}

# =====================================================================================
# Security and production (docker/, deploy/; docs/security.md).
#
# Production is DJANGO_DEBUG=false. There every HTTPS-only switch is on, so
# `manage.py check --deploy --fail-level WARNING` is clean; the local demo
# (DJANGO_DEBUG=true, plain http on 127.0.0.1) has them off. DJANGO_SECURE turns
# them all off (or on) at once, e.g. to try production settings over plain http;
# each one can still be set on its own.
# =====================================================================================
DJANGO_SECURE = env.bool("DJANGO_SECURE", default=not DEBUG)
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=DJANGO_SECURE)
# Kubelet probes and Prometheus talk plain http to the pod: never redirect them.
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$", r"^metrics$"]
SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=DJANGO_SECURE)
CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=DJANGO_SECURE)
SESSION_COOKIE_HTTPONLY = True
# The SPA reads the csrftoken cookie to send X-CSRFToken, so it cannot be HttpOnly;
# SameSite=Lax keeps both cookies off cross-site POSTs.
CSRF_COOKIE_HTTPONLY = False
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
# A refused CSRF check answers in the portal's error shape (JSON under /api/).
CSRF_FAILURE_VIEW = "apps.common.http_errors.csrf_failure"
SECURE_HSTS_SECONDS = env.int(
    "SECURE_HSTS_SECONDS", default=31_536_000 if DJANGO_SECURE else 0
)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool(
    "SECURE_HSTS_INCLUDE_SUBDOMAINS", default=DJANGO_SECURE
)
# "preload" only allows submitting the domain to the browsers' list; nothing is
# preloaded until someone does.
SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=DJANGO_SECURE)
# Behind a TLS-terminating proxy (an Ingress): the header it sets, e.g.
# "X-Forwarded-Proto". Only set it when the proxy overwrites that header, or
# clients could claim https themselves.
_PROXY_SSL_HEADER = env("SECURE_PROXY_SSL_HEADER", default="")
SECURE_PROXY_SSL_HEADER = (
    ("HTTP_" + _PROXY_SSL_HEADER.upper().replace("-", "_"), "https")
    if _PROXY_SSL_HEADER
    else None
)
USE_X_FORWARDED_HOST = env.bool("USE_X_FORWARDED_HOST", default=False)
# WebSockets (apps.accounts.ws): origins allowed besides the portal's own
# (scheme://host[:port], e.g. "https://ops.example.com"), and how often an open
# socket re-checks that its token or session is still valid (closed with 4401).
WS_ALLOWED_ORIGINS = env.list("WS_ALLOWED_ORIGINS", default=[])
WS_AUTH_RECHECK_SECONDS = env.float("WS_AUTH_RECHECK_SECONDS", default=30.0)
# Request bodies (apps.common.body_limit, the ASGI app's first layer): a body
# over this many bytes gets 413 before more of it is read, chunked or not.
# Django's own DATA_UPLOAD_MAX_MEMORY_SIZE (2.5 MB, a 413 too) still applies
# below it. Set the proxy's limit (nginx client_max_body_size) to match.
REQUEST_BODY_MAX_BYTES = env.int("REQUEST_BODY_MAX_BYTES", default=3 * 1024 * 1024)
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"

# =====================================================================================
# Clusters and sync (apps/inventory)
# =====================================================================================
# Key for credentials stored in the database (cluster tokens). Defaults to one
# derived from SECRET_KEY, so rotating SECRET_KEY needs this set to the old one.
FIELD_ENCRYPTION_KEY = env("FIELD_ENCRYPTION_KEY", default="")

# Kubeconfigs (apps.inventory.kubeconfig): a cluster's kubeconfig_path, and any
# file a kubeconfig names, must be inside KUBECONFIG_DIR (unset: no paths, only
# content stored encrypted). Exec plugins and auth providers run a command in
# the portal's processes: refused unless KUBECONFIG_ALLOW_EXEC is true.
KUBECONFIG_DIR = env("KUBECONFIG_DIR", default="")
KUBECONFIG_ALLOW_EXEC = env.bool("KUBECONFIG_ALLOW_EXEC", default=False)

# Where `manage.py deviceconfig` and the demo look for the device-config.
DEFAULT_DEVICE_CONFIG_NAMESPACE = "kube-system"
DEFAULT_DEVICE_CONFIG_NAME = "hami-scheduler-device"

# Sync: a cluster is shown stale when no watch has succeeded for this long.
SYNC_STALE_AFTER_SECONDS = env.int("SYNC_STALE_AFTER_SECONDS", default=90)
USAGE_SAMPLE_RETENTION_DAYS = env.int("USAGE_SAMPLE_RETENTION_DAYS", default=14)
LOCK_DIR = env("LOCK_DIR", default=str(BASE_DIR / "var" / "locks"))
# Control-plane objects sync watches whole (namespace/name), for health and restarts.
VOLCANO_SCHEDULER_CONFIGMAP = env(
    "VOLCANO_SCHEDULER_CONFIGMAP", default="volcano-system/volcano-scheduler-configmap"
)
DEVICE_PLUGIN_DAEMONSET = env(
    "DEVICE_PLUGIN_DAEMONSET", default="kube-system/hami-ascend-device-plugin"
)
# The device plugin's per-node config (key node-config.yaml), in its namespace;
# sync mirrors it and the portal publishes it (docs/node-config.md).
DEVICE_NODE_CONFIGMAP = env(
    "DEVICE_NODE_CONFIGMAP", default="kube-system/hami-device-node-config"
)
# HAMi's scheduler's name, for clusters that submit to it (apps.inventory.scheduler).
HAMI_SCHEDULER_NAME = env("HAMI_SCHEDULER_NAME", default="hami-scheduler")
WATCHED_DEPLOYMENTS = env.list(
    "WATCHED_DEPLOYMENTS",
    default=["volcano-system/volcano-scheduler", "kube-system/hami-scheduler"],
)

# =====================================================================================
# Usage and cost (apps/metering; docs/usage-and-cost.md)
# =====================================================================================
# The site's Prometheus, which scrapes Ascend's npu-exporter on every node; empty:
# the usage pages show booked figures only and say why.
PROMETHEUS_URL = env("PROMETHEUS_URL", default="")
PROMETHEUS_TOKEN = env("PROMETHEUS_TOKEN", default="")  # sent as a bearer token
# A slow Prometheus fails one answer's "used" columns after this long, never a page.
PROMETHEUS_TIMEOUT_SECONDS = env.float("PROMETHEUS_TIMEOUT_SECONDS", default=5.0)
# The resolution of slice-hours used and idle over a report's period.
PROMETHEUS_STEP_SECONDS = env.int("PROMETHEUS_STEP_SECONDS", default=60)
# Where a site's relabelling renamed the exporter's labels: "ours=theirs,..."
# (ours: node, id, namespace, pod_name, container_name, model_name).
PROMETHEUS_LABELS = env.dict("PROMETHEUS_LABELS", default={})
# Extra matchers put into every query, e.g. job="npu-exporter",cluster="bj-1".
PROMETHEUS_SELECTOR = env("PROMETHEUS_SELECTOR", default="")
# The site's Alertmanager (docs/alerts.md, "In the portal"): the Alerts page reads
# the portal's alerts from it and admins silence them there. Empty: the portal
# evaluates the same conditions itself, for display only.
ALERTMANAGER_URL = env("ALERTMANAGER_URL", default="")
ALERTMANAGER_TOKEN = env("ALERTMANAGER_TOKEN", default="")  # sent as a bearer token
# A slower Alertmanager leaves the Alerts panel empty with the reason, never fails it.
ALERTMANAGER_TIMEOUT_SECONDS = env.float("ALERTMANAGER_TIMEOUT_SECONDS", default=3.0)
# A slice is idle when its AICore use stayed at or under IDLE_SLICE_PERCENT for
# IDLE_SLICE_AFTER_SECONDS; idle slice-hours count every step at or under it.
IDLE_SLICE_PERCENT = env.float("IDLE_SLICE_PERCENT", default=1.0)
IDLE_SLICE_AFTER_SECONDS = env.int("IDLE_SLICE_AFTER_SECONDS", default=3600)
COST_CURRENCY = env("COST_CURRENCY", default="CNY")
# Finished days' usage is stored (reports then outlive Prometheus' retention);
# on a first run, days are filled back this far (within that retention).
METERING_BACKFILL_DAYS = env.int("METERING_BACKFILL_DAYS", default=14)
# Prometheus' per-chip figures are kept this long: they change once a scrape,
# and page loads within the window share one answer. 0 asks every time.
USAGE_CACHE_SECONDS = env.int("USAGE_CACHE_SECONDS", default=10)

# =====================================================================================
# The web UI
# =====================================================================================
# The web UI: Vite builds frontend/ into frontend/dist, served by vnpuportal.spa
# (index.html on client-side routes) and WhiteNoise (the files, at the site root;
# the content-hashed ones under /assets/ are cached forever).
FRONTEND_DIST = BASE_DIR / "frontend" / "dist"
WHITENOISE_ROOT = FRONTEND_DIST if FRONTEND_DIST.is_dir() else None
WHITENOISE_IMMUTABLE_FILE_TEST = r"^/assets/|\.[0-9a-f]{12}\.\w+$"
# =====================================================================================
# Scheduling: requests for CI, admission and preemption (apps/scheduling;
# docs/pipelines.md and docs/scheduling.md).
# =====================================================================================
# An admitted pod still unbound after this long is deleted, its room released,
# and the request tried again. Its room is booked, so Volcano binds it within
# seconds, except after a Volcano restart: pods that were pending then are never
# bound by the new scheduler (its queue accounting calls the queue overused;
# tests/realstack/test_faults.py), while a new pod is. One resync period (30 s),
# not minutes, so such a request runs again within one.
REQUEST_BIND_TIMEOUT_SECONDS = env.int("REQUEST_BIND_TIMEOUT_SECONDS", default=30)
# A request whose pod fails before it runs (refused at admission, evicted or
# deleted before starting, its vNPU not created) gets a new pod; after this many
# such failures it fails with the last reason (apps.scheduling.retries).
REQUEST_MAX_POD_FAILURES = env.int("REQUEST_MAX_POD_FAILURES", default=3)
# When a request ends, the last this-many bytes of each container's log are kept
# (before its pod is deleted), so the log outlives the pod (apps.scheduling.logs).
REQUEST_LOG_KEEP_BYTES = env.int("REQUEST_LOG_KEEP_BYTES", default=1024 * 1024)
# The longest a `GET /api/requests/<id>/?wait=` long poll may wait (its `timeout`).
REQUEST_WAIT_MAX_SECONDS = env.int("REQUEST_WAIT_MAX_SECONDS", default=300)
# Volcano's node lock, seen unchanged by the portal for this long on a node where
# an admitted pod waits, is released. Volcano holds it for milliseconds, but
# leaves it behind when writing a pod's devices fails (the pod was deleted
# meanwhile, the API server went away), and then binds nothing on that node for
# five minutes. Aged by the portal's clock, not the time written in the lock;
# HAMi's own lock is never touched. 0 leaves locks to their five-minute expiry.
NODE_LOCK_STALE_SECONDS = env.int("NODE_LOCK_STALE_SECONDS", default=20)
# Pending requests older than this many seconds expire; 0 keeps them forever.
REQUEST_PENDING_TTL = env.int("REQUEST_PENDING_TTL", default=0)
# Approve a preemption without an admin when the request's priority exceeds the
# highest victim's by at least this much; empty (the default) never does.
PREEMPTION_AUTO_APPROVE_PRIORITY_GAP = env.int(
    "PREEMPTION_AUTO_APPROVE_PRIORITY_GAP", default=None
)
# A victim whose PodDisruptionBudget refuses the eviction (429) is tried again
# after this many seconds; it is never forced.
PREEMPTION_EVICTION_RETRY_SECONDS = env.int(
    "PREEMPTION_EVICTION_RETRY_SECONDS", default=10
)
# An isolation or restore whose proof (the device plugin's registration and
# the node's allocatable) has not come after this many seconds is shown as
# overdue, with what the portal saw. A plugin pod restarts and re-registers in
# well under a minute; image pulls on a busy node can take longer.
ISOLATION_PROOF_TIMEOUT_SECONDS = env.int(
    "ISOLATION_PROOF_TIMEOUT_SECONDS", default=300
)
# A chip in service that the device plugin has registered unhealthy for longer
# than this is offered for isolation (10 minutes: a flap is not a failure).
ISOLATION_SUGGEST_AFTER_SECONDS = env.int(
    "ISOLATION_SUGGEST_AFTER_SECONDS", default=600
)
# An isolated chip whose hardware (the npu-exporter, through Prometheus) has
# been healthy this long is offered for restore.
ISOLATION_RESTORE_AFTER_SECONDS = env.int(
    "ISOLATION_RESTORE_AFTER_SECONDS", default=1800
)
# Act on those suggestions without a person (as the actor "policy", audited):
# both off by default, so nothing is isolated or restored unless a site says so.
ISOLATION_AUTO_ISOLATE = env.bool("ISOLATION_AUTO_ISOLATE", default=False)
ISOLATION_AUTO_RESTORE = env.bool("ISOLATION_AUTO_RESTORE", default=False)
# How the allocator chooses among chips that fit: binpack (fullest first, as
# HAMi's default node policy) or spread (empty first).
ALLOCATOR_STRATEGY = env("ALLOCATOR_STRATEGY", default="binpack")
# Whether the portal proposes preemptions (Volcano's own `preempt` action is
# not needed for them; health warns where it would evict vNPU pods unasked).
PREEMPTION_ENABLED = env.bool("PREEMPTION_ENABLED", default=True)
# Under Volcano the portal steers the node, not the chip: a placement is
# guaranteed only where every chip Volcano could pick is healthy and keeps the
# AICPU. Where no such room exists: true places anyway with the reason saying
# what is not guaranteed; false waits (the reason names the chip Volcano might
# pick). HAMi's scheduler honours the pin, so this never applies to it.
PLACE_UNGUARANTEED = env.bool("PLACE_UNGUARANTEED", default=True)
# A request's pod_template, as compact JSON: stored with the request and served
# on every list page, so far below the body limit (a real one is a few KiB).
POD_TEMPLATE_MAX_BYTES = env.int("POD_TEMPLATE_MAX_BYTES", default=64 * 1024)
