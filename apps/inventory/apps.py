from django.apps import AppConfig


class InventoryConfig(AppConfig):
    name = "apps.inventory"
    label = "inventory"
    verbose_name = "Inventory"

    def ready(self) -> None:
        # Imported here, not at the top: this module is loaded while the app
        # registry is being filled, before any model may be imported.
        import apps.inventory.tasks  # noqa: F401
        from apps.common.metrics_sources import (
            register_cluster_names,
            register_database_families,
        )
        from apps.inventory import metrics
        from apps.inventory.deviceconfig.metrics import deviceconfig_families

        # The tasks register how a refresh of the config in effect starts
        # (apps.inventory.deviceconfig.refresh). The metric families are read
        # at each scrape of /metrics.
        register_cluster_names(metrics.cluster_names)
        register_database_families("sync", metrics.sync_families, required=True)
        register_database_families("usage", metrics.usage_families, required=True)
        register_database_families("chip-health", metrics.chip_health_families)
        register_database_families("deviceconfig", deviceconfig_families)
