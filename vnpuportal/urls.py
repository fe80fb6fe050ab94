"""Top-level URLs: the API, the admin, probes and metrics, and the single-page app."""

from django.contrib import admin
from django.urls import include, path, re_path

from apps.accounts.admin_login import admin_login
from apps.common import probes
from apps.common.metrics import metrics_view
from vnpuportal import spa

urlpatterns = [
    path("api/", include("vnpuportal.api")),
    # Before admin.site.urls: the admin's login shares the API login's throttle.
    path("admin/login/", admin_login, name="admin-login"),
    path("admin/", admin.site.urls),
    # For Kubernetes and Prometheus: plain http to the pod, no trailing slash
    # (exempt from the HTTPS redirect; /metrics needs METRICS_TOKEN).
    path("healthz", probes.healthz, name="healthz"),
    path("readyz", probes.readyz, name="readyz"),
    path("metrics", metrics_view, name="metrics"),
    # Unknown /api/... paths: the API's JSON 404 for every method.
    re_path(r"^(?P<path>api(?:/.*)?)$", spa.api_not_found, name="api-not-found"),
    # The web UI (frontend/dist) on every other path; unknown /api/... paths
    # never get the app's HTML (see above).
    re_path(r"^(?P<path>.*)$", spa.app, name="spa"),
]

# Errors outside DRF's views get the portal's error body, never a debug page.
handler400 = "apps.common.http_errors.bad_request"
handler403 = "apps.common.http_errors.permission_denied"
handler404 = "apps.common.http_errors.page_not_found"
handler500 = "apps.common.http_errors.server_error"
