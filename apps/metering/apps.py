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
        from apps.inventory.nodeconfig.health_sources import register_hardware_health
        from apps.metering.gauges import metering_families
        from apps.metering.hardware import hardware_health_read

        register_database_families("metering", metering_families)
        # The restore suggestions read an isolated chip's hardware health
        # from the exporter (inventory never imports metering).
        register_hardware_health(hardware_health_read)
