"""Routes of the node config's checks: /api/clusters/<id>/node-config/{health,what-if}/."""

from rest_framework.routers import SimpleRouter

from apps.inventory.nodeconfig.api.views import NodeConfigChecksViewSet

router = SimpleRouter()
router.register("clusters", NodeConfigChecksViewSet, basename="cluster-node-config")

urlpatterns = router.urls
