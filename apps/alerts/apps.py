from django.apps import AppConfig


class AlertsConfig(AppConfig):
    """The portal's alerts as people see them: read from Alertmanager (or
    evaluated from the portal's own metrics), and silenced by admins."""

    name = "apps.alerts"
    label = "alerts"
    verbose_name = "Alerts"
