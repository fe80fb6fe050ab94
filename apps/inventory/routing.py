from django.urls import path

from apps.inventory.consumers import ClusterConsumer

websocket_urlpatterns = [
    path("ws/clusters/<int:cluster_id>/", ClusterConsumer.as_asgi()),
]
