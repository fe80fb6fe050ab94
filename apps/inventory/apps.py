from django.apps import AppConfig
from django.utils.translation import gettext, ngettext


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
        from apps.inventory.hami.i18n import use_translations

        # The tasks register how a refresh of the config in effect starts
        # (apps.inventory.deviceconfig.refresh). The metric families are read
        # at each scrape of /metrics.
        register_cluster_names(metrics.cluster_names)
        register_database_families("sync", metrics.sync_families, required=True)
        register_database_families("usage", metrics.usage_families, required=True)
        register_database_families("chip-health", metrics.chip_health_families)
        register_database_families("deviceconfig", deviceconfig_families)
        # The pure code's warnings (HAMi formats, node-config what-if) in the
        # request's language: it imports no Django, so Django's gettext is
        # handed to it (apps.inventory.hami.i18n).
        use_translations(gettext, ngettext)
