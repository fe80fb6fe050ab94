"""Everything under /api/: the apps' routes, the OpenAPI schema and its docs page."""

from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from apps.accounts.permissions import RolePermission

# The schema describes every endpoint; it is for signed-in users like the rest.
schema_view = SpectacularAPIView.as_view(permission_classes=[RolePermission])
docs_view = SpectacularSwaggerView.as_view(
    url_name="api:schema", permission_classes=[RolePermission]
)

app_name = "api"
urlpatterns = [
    path("", include("apps.accounts.api.urls")),
    path("", include("apps.inventory.api.urls")),
    path("", include("apps.inventory.api.publishing_urls")),
    path("", include("apps.audit.api.urls")),
    path("", include("apps.scheduling.api.urls")),
    path("schema/", schema_view, name="schema"),
    path("docs/", docs_view, name="docs"),
]
