"""vNPU Portal project package: settings, URLs, ASGI and the Celery app."""
