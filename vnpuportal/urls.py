"""Top-level URLs: the API, the admin, and the single-page app."""

from django.contrib import admin
from django.urls import include, path
from django.views.generic import RedirectView

urlpatterns = [
    path("api/", include("vnpuportal.api")),
    path("admin/", admin.site.urls),
    # Until the web UI lands, the front page is the API's documentation.
    path("", RedirectView.as_view(url="/api/docs/", permanent=False)),
]
