"""Top-level URLs: the API, the admin, and the single-page app."""

from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("api/", include("vnpuportal.api")),
    path("admin/", admin.site.urls),
]
