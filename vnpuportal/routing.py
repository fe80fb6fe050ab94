"""All WebSocket routes, gathered from the apps' routing modules."""

from apps.inventory.routing import websocket_urlpatterns as inventory_ws

websocket_urlpatterns = [*inventory_ws]
