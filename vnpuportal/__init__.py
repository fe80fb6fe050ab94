"""vNPU Portal project package: settings, URLs, ASGI and the Celery app."""

# Load the Celery app with Django (cookiecutter-django's rule): without this the
# web process's `task.delay()` used Celery's unconfigured default app, so a task
# enqueued by a web request never reached REDIS_URL (nor ran eagerly in tests).
from vnpuportal.celery import app as celery_app

__all__ = ("celery_app",)
