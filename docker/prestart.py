"""What the entrypoints do before they start the real process.

``python docker/prestart.py wait``: wait until the database (and Redis, when
REDIS_URL is set) answer, up to WAIT_FOR_SERVICES_SECONDS (default 120): in
compose and Kubernetes the portal's containers may start before PostgreSQL
and Redis are ready, and a crash loop would only delay them.

``python docker/prestart.py migrate``: ``manage.py migrate`` under a
PostgreSQL advisory lock, so that web replicas starting together migrate one
after the other (the later ones find nothing left to do).

Exit codes: 0 done, 69 (EX_UNAVAILABLE) a service never answered.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "vnpuportal.settings.base")

# Any constant works; it only has to be the same in every replica.
MIGRATE_LOCK_KEY = 0x766E7075_6D696772  # "vnpumigr"


def _log(message: str) -> None:
    sys.stderr.write(f"prestart: {message}\n")
    sys.stderr.flush()


def _database_ready() -> str | None:
    """None when the database answers, else why not."""
    from django.db import connection
    from django.db.utils import Error

    try:
        connection.ensure_connection()
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Error as exc:
        connection.close()
        return f"database: {type(exc).__name__}"
    return None


def _redis_ready() -> str | None:
    """None when REDIS_URL is unset or Redis answers PING, else why not."""
    url = os.environ.get("REDIS_URL", "")
    if not url:
        return None
    import redis

    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=2)
        client.ping()
        client.close()
    except redis.RedisError as exc:
        return f"redis: {type(exc).__name__}"
    return None


def wait(timeout: float) -> int:
    """Poll the services every second until they answer or ``timeout`` passes."""
    deadline = time.monotonic() + timeout
    while True:
        problems = [p for p in (_database_ready(), _redis_ready()) if p]
        if not problems:
            return 0
        if time.monotonic() >= deadline:
            _log(f"gave up after {timeout:.0f}s: {', '.join(problems)}")
            return 69
        _log(f"waiting for {', '.join(problems)}")
        time.sleep(1)


def migrate() -> int:
    """Apply migrations, one replica at a time on PostgreSQL."""
    from django.core.management import call_command
    from django.db import connection

    if connection.vendor != "postgresql":
        call_command("migrate", "--noinput")
        return 0
    with connection.cursor() as cursor:
        _log("waiting for the migration lock")
        cursor.execute("SELECT pg_advisory_lock(%s)", [MIGRATE_LOCK_KEY])
        try:
            call_command("migrate", "--noinput")
        finally:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [MIGRATE_LOCK_KEY])
    return 0


def main(argv: list[str]) -> int:
    import django

    django.setup()
    command = argv[1] if len(argv) > 1 else ""
    if command == "wait":
        return wait(float(os.environ.get("WAIT_FOR_SERVICES_SECONDS", "120")))
    if command == "migrate":
        return migrate()
    _log(f"usage: {argv[0]} wait|migrate")
    return 64


if __name__ == "__main__":
    sys.exit(main(sys.argv))
