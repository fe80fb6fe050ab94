"""The Celery app: configured from Django settings (CELERY_*), tasks autodiscovered."""

import os

from celery import Celery

from apps.common import broker

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "vnpuportal.settings.base")

# Before any broker connection: a worker must survive a Redis restart (see the module).
broker.install()

app = Celery("vnpuportal")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
