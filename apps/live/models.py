"""The outbox of live deltas."""

from __future__ import annotations

from django.db import models


class LiveEvent(models.Model):
    """Outbox of live deltas, used when there is no Redis channel layer.

    In the embedded default the worker is another process, so an in-memory
    channel layer cannot carry its deltas; the worker writes them here and the
    web process relays them to its WebSocket clients (see apps.live.realtime).
    """

    group = models.CharField(max_length=100)
    event = models.CharField(max_length=64)
    payload = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        # The table it had in apps.inventory: moving the model kept its rows
        # (and a worker of the previous release writes to it during an upgrade).
        db_table = "inventory_liveevent"

    def __str__(self) -> str:
        return f"{self.id} {self.group} {self.event}"
