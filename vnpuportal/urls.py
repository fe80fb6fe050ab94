"""Top-level URLs: the API, the admin, and the single-page app."""

from django.contrib import admin
from django.urls import include, path, re_path

from vnpuportal import spa

urlpatterns = [
    path("api/", include("vnpuportal.api")),
    path("admin/", admin.site.urls),
    # The web UI (frontend/dist) on every other path; unknown /api/... paths
    # get the API's JSON 404 from it, never the app's HTML.
    re_path(r"^(?P<path>.*)$", spa.app, name="spa"),
]
