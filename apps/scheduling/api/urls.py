from django.urls import path
from rest_framework.routers import SimpleRouter

from apps.scheduling.api import drain_views, streaming, views

router = SimpleRouter()
router.register("requests", views.RequestViewSet, basename="request")
router.register("queues", views.QueueViewSet, basename="queue")
router.register(
    "preemptions", views.PreemptionProposalViewSet, basename="preemptionproposal"
)
router.register("drains", drain_views.DrainViewSet, basename="drain")

urlpatterns = [
    # Before the router's routes for the same paths: a followed log and a long
    # poll are served by async views, which call the viewset for the rest.
    path("requests/<int:pk>/", streaming.request_detail, name="request-detail"),
    path("requests/<int:pk>/logs/", streaming.request_logs, name="request-logs"),
    path(
        "chips/<int:pk>/drain/", drain_views.ChipDrainView.as_view(), name="chip-drain"
    ),
    path(
        "nodes/<int:pk>/drain/", drain_views.NodeDrainView.as_view(), name="node-drain"
    ),
    path(
        "chips/<int:pk>/uncordon/",
        drain_views.ChipUncordonView.as_view(),
        name="chip-uncordon",
    ),
    path(
        "nodes/<int:pk>/uncordon/",
        drain_views.NodeUncordonView.as_view(),
        name="node-uncordon",
    ),
    *router.urls,
]
