"""A worker killed mid-pass: no duplicate pod, no stuck reservation; the next pass converges.

The worker is a real process (``manage.py schedule``) on the test database,
talking to a simulated cluster, killed with SIGKILL at a hook point
(``VNPU_PORTAL_CRASH_AT``): right after the reservation committed, or right
after the pod was created and before that was recorded.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from apps.scheduling.choices import RequestState
from apps.scheduling.models import Request, Reservation
from tests.scheduling.helpers import run_pass

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("no_auto_pass"),
    pytest.mark.slow,
]


def _database_url() -> str:
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{db['NAME']}"
    host = db.get("HOST") or "127.0.0.1"
    auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    return f"postgres://{auth}@{host}:{db.get('PORT') or 5432}/{db['NAME']}"


def _worker_killed_at(point: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "vnpuportal.settings.test",
        "DATABASE_URL": _database_url(),
        "LOCK_DIR": settings.LOCK_DIR,
        "VNPU_PORTAL_CRASH_AT": point,
    }
    return subprocess.run(
        [sys.executable, "manage.py", "schedule", "--cluster", "sim"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _pods_of(sim_core, request: Request) -> list[str]:
    pods = sim_core.list_namespaced_pod(
        "default", label_selector=f"vnpu-portal/request={request.pk}"
    ).items
    return [p.metadata.name for p in pods]


def _no_orphans() -> None:
    booked = Request.objects.filter(
        state__in=[RequestState.RESERVED, RequestState.ADMITTED]
    ).count()
    assert Reservation.objects.count() == booked
    assert not Reservation.objects.exclude(
        request__state__in=[RequestState.RESERVED, RequestState.ADMITTED]
    ).exists()


def test_killed_after_reserving_the_next_pass_creates_exactly_one_pod(
    live, operator, sim_core
):
    request = live.request(operator, namespace="default")

    # when the worker dies right after its reservation committed
    done = _worker_killed_at("after_reserve")

    # then the room is booked, the pod name fixed, and no pod exists
    assert done.returncode == -signal.SIGKILL, done.stderr
    request.refresh_from_db()
    assert request.state == RequestState.RESERVED
    assert request.pod_name == f"vnpu-req-{request.pk}"
    assert Reservation.objects.filter(request=request).count() == 1
    assert _pods_of(sim_core, request) == []

    # when the next pass runs (the dead worker's lock died with it)
    run_pass(live.cluster)

    # then exactly one pod exists and the booking is consistent
    request.refresh_from_db()
    assert request.state == RequestState.ADMITTED
    assert _pods_of(sim_core, request) == [request.pod_name]
    _no_orphans()
    run_pass(live.cluster)  # and again: nothing changes
    assert _pods_of(sim_core, request) == [request.pod_name]


def test_killed_after_creating_the_pod_the_next_pass_adopts_it(
    live, operator, sim_core
):
    request = live.request(operator, namespace="default")

    # when the worker dies after the pod was created but before it recorded that
    done = _worker_killed_at("after_pod_create")

    assert done.returncode == -signal.SIGKILL, done.stderr
    request.refresh_from_db()
    assert request.state == RequestState.RESERVED
    assert _pods_of(sim_core, request) == [request.pod_name]

    # then the next pass finds the pod (409 AlreadyExists, our label) and adopts it
    run_pass(live.cluster)
    request.refresh_from_db()
    assert request.state == RequestState.ADMITTED
    assert _pods_of(sim_core, request) == [request.pod_name]
    _no_orphans()


def test_a_worker_that_is_not_killed_reports_what_it_did(live, operator):
    live.request(operator, namespace="default")
    done = _worker_killed_at("nowhere")
    assert done.returncode == 0, done.stderr
    assert "sim: reserved 1" in done.stdout
    assert "admitted 1" in done.stdout
