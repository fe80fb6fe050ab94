from django.urls import path
from rest_framework.routers import SimpleRouter

from apps.scheduling.api import streaming, views

router = SimpleRouter()
router.register("requests", views.RequestViewSet, basename="request")
router.register("queues", views.QueueViewSet, basename="queue")
router.register(
    "preemptions", views.PreemptionProposalViewSet, basename="preemptionproposal"
)

urlpatterns = [
    # Before the router's routes for the same paths: a followed log and a long
    # poll are served by async views, which call the viewset for the rest.
    path("requests/<int:pk>/", streaming.request_detail, name="request-detail"),
    path("requests/<int:pk>/logs/", streaming.request_logs, name="request-logs"),
    *router.urls,
]
