from django.apps import AppConfig


class CommonConfig(AppConfig):
    """Cross-cutting pieces (errors, locks, metrics); no models."""

    name = "apps.common"
    label = "common"
    verbose_name = "Common"

    def ready(self) -> None:
        # Celery signal handlers: every process that runs tasks records their
        # timings, and a worker's heartbeats keep its liveness file fresh;
        # ``lookups`` registers ``field__in_array`` on every field. Imported
        # here: this module is loaded before the app registry is ready.
        from apps.common import lookups, task_metrics, worker_health  # noqa: F401
