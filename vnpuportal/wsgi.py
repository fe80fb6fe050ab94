"""WSGI entry point (the admin and API work over WSGI; WebSockets need ASGI)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "vnpuportal.settings.base")
application = get_wsgi_application()
