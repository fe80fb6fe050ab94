from django.apps import AppConfig


class MeteringConfig(AppConfig):
    """What the slices use (from Prometheus) and what they cost (from bookings)."""

    name = "apps.metering"
    label = "metering"
    verbose_name = "Usage and cost"

    def ready(self) -> None:
        # Imported here, not at the top: this module is loaded while the app
        # registry is being filled, before any model may be imported.
        from apps.common.metrics_sources import register_database_families
        from apps.metering.gauges import metering_families

        register_database_families("metering", metering_families)
