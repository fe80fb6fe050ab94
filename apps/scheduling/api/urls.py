from rest_framework.routers import SimpleRouter

from apps.scheduling.api import views

router = SimpleRouter()
router.register("requests", views.RequestViewSet, basename="request")
router.register("queues", views.QueueViewSet, basename="queue")
router.register(
    "preemptions", views.PreemptionProposalViewSet, basename="preemptionproposal"
)

urlpatterns = router.urls
