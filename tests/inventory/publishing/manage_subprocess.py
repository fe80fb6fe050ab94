"""Run ``manage.py`` in a real child process on the test database."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from django.conf import settings
from django.db import connection

ROOT = Path(__file__).resolve().parents[3]


def database_url() -> str:
    """DATABASE_URL of the database this test runs on (committed data only)."""
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{db['NAME']}"
    host = db.get("HOST") or "127.0.0.1"
    auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    return f"postgres://{auth}@{host}:{db.get('PORT') or 5432}/{db['NAME']}"


def child_env(**extra: str) -> dict[str, str]:
    """The environment of a child ``manage.py`` on the test database."""
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "vnpuportal.settings.test",
        "DATABASE_URL": database_url(),
        "LOCK_DIR": str(settings.LOCK_DIR),
        "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}",
        **extra,
    }


def run_shell(script: str, cwd: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    """Run a bash script verbatim in ``cwd``, stopping at the first failing command.

    ``cwd`` gets a ``manage.py`` link to this checkout's, so that a documented
    block saying ``python manage.py ...`` runs unchanged.
    """
    link = cwd / "manage.py"
    if not link.exists():
        link.symlink_to(ROOT / "manage.py")
    env = child_env(**extra)
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
