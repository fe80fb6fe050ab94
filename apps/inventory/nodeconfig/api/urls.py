"""Routes of the node config under /api/clusters/<id>/node-config/: the editor's
(``{,validate,publish,versions,diff,rollback,adopt}/``) and its checks
(``{health,what-if}/``)."""

from rest_framework.routers import SimpleRouter

from apps.inventory.nodeconfig.api.check_views import NodeConfigChecksViewSet
from apps.inventory.nodeconfig.api.views import ClusterNodeConfigViewSet

router = SimpleRouter()
router.register("clusters", ClusterNodeConfigViewSet, basename="cluster-node-config")
router.register(
    "clusters", NodeConfigChecksViewSet, basename="cluster-node-config-checks"
)

urlpatterns = router.urls
