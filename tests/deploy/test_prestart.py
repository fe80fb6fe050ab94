"""docker/prestart.py for real: it waits for services, and replicas migrate one at a time."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.processes import free_port
from harness.services import PrivatePostgres, PrivateRedis

pytestmark = pytest.mark.processes

ROOT = Path(__file__).resolve().parents[2]
PRESTART = str(ROOT / "docker" / "prestart.py")


def _run(*args: str, wait: bool = True, **env: str):
    environment = {
        **{k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")},
        "DJANGO_SETTINGS_MODULE": "vnpuportal.settings.base",
        "DJANGO_SECRET_KEY": "p" * 60,
        "DJANGO_DEBUG": "false",
        "REDIS_URL": "",
        **env,
    }
    command = [sys.executable, PRESTART, *args]
    if not wait:
        return subprocess.Popen(
            command,
            cwd="/",
            env=environment,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
    return subprocess.run(
        command,
        cwd="/",
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_wait_returns_at_once_when_the_services_answer(tmp_path):
    redis = PrivateRedis(appendonly=False)
    try:
        done = _run(
            "wait",
            DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
            REDIS_URL=redis.url(),
        )
    finally:
        redis.stop()
    assert done.returncode == 0, done.stderr


def test_wait_gives_up_with_69_and_says_on_what():
    port = free_port()  # nothing listens there
    done = _run(
        "wait",
        DATABASE_URL=f"postgres://postgres@127.0.0.1:{port}/x",
        WAIT_FOR_SERVICES_SECONDS="2",
    )
    assert done.returncode == 69
    assert "gave up after 2s: database: OperationalError" in done.stderr


def test_unknown_command_is_a_usage_error(tmp_path):
    done = _run("frobnicate", DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}")
    assert done.returncode == 64
    assert "usage" in done.stderr


@pytest.mark.slow
def test_three_replicas_migrate_a_fresh_database_together():
    pg = PrivatePostgres()
    try:
        url = pg.create_database("fresh")
        replicas = [_run("migrate", wait=False, DATABASE_URL=url) for _ in range(3)]
        results = [(p.wait(timeout=180), p.stderr.read()) for p in replicas]
        # every replica started cleanly: the lock made them take turns
        assert [code for code, _ in results] == [0, 0, 0], results
        plan = _run("wait", DATABASE_URL=url)
        assert plan.returncode == 0
        check = subprocess.run(
            [sys.executable, str(ROOT / "manage.py"), "migrate", "--check"],
            cwd=ROOT,
            env={
                **os.environ,
                "DJANGO_SETTINGS_MODULE": "vnpuportal.settings.base",
                "DJANGO_SECRET_KEY": "p" * 60,
                "DJANGO_DEBUG": "false",
                "DATABASE_URL": url,
                "REDIS_URL": "",
            },
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert check.returncode == 0, check.stdout + check.stderr
    finally:
        pg.stop()
