from django.db import models


class AlertState(models.TextChoices):
    """An alert's state as the Alerts page shows it."""

    FIRING = "firing", "Firing"
    # Inhibited by another alert (the Alertmanager example's inhibit rules).
    SUPPRESSED = "suppressed", "Suppressed"
    SILENCED = "silenced", "Silenced"


class AlertSource(models.TextChoices):
    """Where the alerts of an answer come from."""

    ALERTMANAGER = "alertmanager", "Alertmanager"
    # Evaluated by the portal from its own metrics: no Alertmanager configured.
    PORTAL = "portal", "The portal"
