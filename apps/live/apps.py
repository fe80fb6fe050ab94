from django.apps import AppConfig


class LiveConfig(AppConfig):
    """Live deltas: broadcast, the database outbox and its relay, the consumer base."""

    name = "apps.live"
    label = "live"
    verbose_name = "Live updates"
