from django.apps import AppConfig


class InventoryConfig(AppConfig):
    name = "apps.inventory"
    label = "inventory"
    verbose_name = "Inventory"

    def ready(self) -> None:
        # Its metric families, read at each scrape of /metrics.
        from apps.common.metrics_sources import (
            register_cluster_names,
            register_database_families,
        )
        from apps.inventory import metrics

        register_cluster_names(metrics.cluster_names)
        register_database_families("sync", metrics.sync_families, required=True)
        register_database_families("usage", metrics.usage_families, required=True)
