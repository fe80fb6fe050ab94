"""Routes of the publishing actions: /api/clusters/<id>/{publish,rollback,adopt,drift,restarts,what-if,health}/."""

from rest_framework.routers import SimpleRouter

from apps.inventory.deviceconfig.api.views import ClusterPublishingViewSet

router = SimpleRouter()
router.register("clusters", ClusterPublishingViewSet, basename="cluster-publishing")

urlpatterns = router.urls
