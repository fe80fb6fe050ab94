from rest_framework.routers import SimpleRouter

from apps.inventory.api import views

router = SimpleRouter()
router.register("clusters", views.ClusterViewSet, basename="cluster")
router.register("chip-types", views.ChipTypeViewSet, basename="chiptype")
router.register("templates", views.TemplateViewSet, basename="template")
router.register("nodes", views.NodeViewSet, basename="node")
router.register("chips", views.ChipViewSet, basename="chip")
router.register("slices", views.SliceViewSet, basename="slice")
router.register("pending-pods", views.PendingPodViewSet, basename="pendingpod")
router.register(
    "priority-classes", views.PriorityClassViewSet, basename="priorityclass"
)
router.register(
    "device-config-versions",
    views.DeviceConfigVersionViewSet,
    basename="deviceconfigversion",
)

urlpatterns = router.urls
