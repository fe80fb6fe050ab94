from django.apps import AppConfig


class SchedulingConfig(AppConfig):
    name = "apps.scheduling"
    label = "scheduling"
    verbose_name = "Scheduling"

    def ready(self) -> None:
        # Sync announces slice changes; scheduling listens (inventory never
        # imports scheduling).
        # The tasks register how follow-up work starts (apps.scheduling.triggers).
        import apps.scheduling.tasks  # noqa: F401
        from apps.common.metrics_sources import register_database_families
        from apps.inventory.sync.writer import slices_changed, volcano_queues_changed
        from apps.scheduling.metrics import scheduling_families
        from apps.scheduling.signals import on_slices_changed, on_volcano_queues_changed

        slices_changed.connect(on_slices_changed, dispatch_uid="scheduling-slices")
        volcano_queues_changed.connect(
            on_volcano_queues_changed, dispatch_uid="scheduling-volcano-queues"
        )
        register_database_families("scheduling", scheduling_families)
