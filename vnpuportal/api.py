"""Everything under /api/: the apps' routes, the OpenAPI schema and its docs page."""

from typing import Any

from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from apps.accounts.permissions import RolePermission


class DocsView(SpectacularSwaggerView):
    """The Swagger UI page; OPTIONS answers its metadata as JSON.

    The page's only renderer is a template: DRF's OPTIONS metadata, which has
    no template, made it a 500.
    """

    def options(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        request.accepted_renderer = JSONRenderer()
        request.accepted_media_type = JSONRenderer.media_type
        return super().options(request, *args, **kwargs)


# The schema describes every endpoint; it is for signed-in users like the rest.
schema_view = SpectacularAPIView.as_view(permission_classes=[RolePermission])
docs_view = DocsView.as_view(url_name="api:schema", permission_classes=[RolePermission])

app_name = "api"
urlpatterns = [
    path("", include("apps.accounts.api.urls")),
    path("", include("apps.inventory.api.urls")),
    path("", include("apps.inventory.deviceconfig.api.urls")),
    path("", include("apps.inventory.nodeconfig.api.urls")),
    path("", include("apps.inventory.nodeconfig.api.chip_actions")),
    path("", include("apps.inventory.nodeconfig.api.suggestion_views")),
    path("", include("apps.audit.api.urls")),
    path("", include("apps.scheduling.api.urls")),
    path("", include("apps.metering.api.urls")),
    path("", include("apps.alerts.api.urls")),
    path("schema/", schema_view, name="schema"),
    path("docs/", docs_view, name="docs"),
]
