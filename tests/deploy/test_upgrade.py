"""Upgrading a portal in use: the previous release's database, with real data, is
migrated to the latest migrations on disk while a real Celery worker runs, and
nothing is lost.

The previous release is main at 8121c52; its migration state is recorded in
PREVIOUS_RELEASE below. When a release ships, move PREVIOUS_RELEASE to that
release's names (and its commit). Later migrations need no change here: the
test migrates to whatever is latest on disk, and compares the previous
release's columns only (a new column is allowed; a dropped or renamed one
fails, naming it: say in RENAMED where its data went).

Order, as in a rolling upgrade: the database holds the previous release's
schema and data, the worker is up and busy with the ``live`` cluster's
scheduling, then ``docker/prestart.py migrate`` (what each web pod runs on
start) migrates under it. Afterwards every row is still there with the same
contents, except what the worker's scheduling legitimately changed (the
``live`` cluster's pending requests and the rows their placement adds), and
those requests progress: each gets one pod on the cluster and never two.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness import processes
from harness.services import PrivateRedis
from simcluster.server import SimCluster

ROOT = Path(__file__).resolve().parents[2]

# The previous release (main 8121c52): each of our apps' last migration.
PREVIOUS_RELEASE = {
    "accounts": "0001_initial",
    "audit": "0001_initial",
    "inventory": "0003_chip_history",
    "scheduling": "0001_initial",
}
PREVIOUS_RELEASE_COMMIT = "8121c52"
# (table, old column) -> where a later migration moved it.
RENAMED: dict[tuple[str, str], str] = {
    # accounts 0003: a token's queue names became the ids of the queues of
    # those names (a name alone matched it in every cluster; issue 39)
    ("accounts_apitoken", "queues"): "queue_ids",
}
#: Columns whose data a migration moves into another column of the same row
#: (the old one is then empty, the new one must not be): inventory 0005 copies
#: kubeconfig files from outside KUBECONFIG_DIR into the database, encrypted.
MOVED: dict[tuple[str, str], str] = {
    ("inventory_cluster", "kubeconfig_path"): "kubeconfig_encrypted",
}

# What a scheduling pass may change on a pending request as it places it.
PLACEMENT_COLUMNS = {
    "state",
    "reason",
    "reason_message",
    "attempts",
    "chip_id",
    "chip_uuid",
    "node",
    "template_booked",
    "memory_booked",
    "pod_name",
    "updated_at",
    "reserved_at",
    "admitted_at",
    "running_at",
    "expires_at",
}
# Tables a pass appends to (a reservation, an audit line, a live event).
APPEND_ONLY_BY_PASS = {
    "scheduling_reservation",
    "audit_auditevent",
    "inventory_liveevent",
    "scheduling_preemptionproposal",
}
# Tables `migrate` itself appends to (post_migrate: a later migration's new models).
APPEND_ONLY_BY_MIGRATE = {"django_content_type", "auth_permission"}


def _run(env: dict[str, str], *args: str, timeout: float = 300) -> str:
    done = subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, f"{args}: {done.stderr[-4000:]}"
    return done.stdout


def _data(env: dict[str, str], *args: str) -> Any:
    out = _run(env, "-m", "tests.deploy.upgrade_data", *args)
    return json.loads(out.strip().splitlines()[-1])


@pytest.fixture
def fresh_database(tmp_path: Path) -> Iterator[str]:
    """A new, empty database on the server the suite uses (PostgreSQL), or a SQLite file."""
    configured = os.environ.get("DATABASE_URL", "")
    if not configured.startswith(("postgres://", "postgresql://")):
        yield f"sqlite:///{tmp_path / 'upgrade.sqlite3'}"
        return
    import psycopg

    base, _, _ = configured.rpartition("/")
    name = f"vnpu_upgrade_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(f"{base}/postgres", autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    yield f"{base}/{name}"
    with psycopg.connect(f"{base}/postgres", autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def redis_server() -> Iterator[PrivateRedis]:
    server = PrivateRedis(appendonly=False)
    yield server
    server.stop()


@pytest.fixture
def portal_env(
    fresh_database: str, redis_server: PrivateRedis, tmp_path: Path
) -> dict[str, str]:
    """The environment of the portal's processes (production settings, private Redis)."""
    return {
        **{
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("DJANGO_", "CELERY_"))
        },
        "DJANGO_SETTINGS_MODULE": "vnpuportal.settings.base",
        "DJANGO_SECRET_KEY": "upgrade-" + "k" * 60,
        "DJANGO_DEBUG": "false",
        "DJANGO_SECURE": "false",
        "DATABASE_URL": fresh_database,
        "REDIS_URL": redis_server.url(0),
        "CACHE_URL": redis_server.url(1),
        "LOCK_DIR": str(tmp_path / "locks"),
        "LOG_LEVEL": "INFO",
        "VOLCANO_SCHEDULER_CONFIGMAP": "volcano-system/volcano-scheduler-configmap",
        "DEVICE_PLUGIN_DAEMONSET": "kube-system/hami-ascend-device-plugin",
        "WATCHED_DEPLOYMENTS": "volcano-system/volcano-scheduler,kube-system/hami-scheduler",
    }


def _migrations_on_disk() -> set[tuple[str, str]]:
    return {
        (app, path.stem)
        for app in PREVIOUS_RELEASE
        for path in (ROOT / "apps" / app / "migrations").glob(
            "[0-9][0-9][0-9][0-9]_*.py"
        )
    }


def test_the_previous_release_is_on_disk():
    """Its migrations are still there under their names (never squashed away or renamed)."""
    on_disk = _migrations_on_disk()
    for app, name in PREVIOUS_RELEASE.items():
        assert (app, name) in on_disk, f"{app}.{name} of {PREVIOUS_RELEASE_COMMIT}"


def _start_worker(env: dict[str, str], logs: Path) -> processes.Process:
    """The worker, logging to ``logs/worker.log``."""
    return processes.start(
        "worker",
        processes.celery_command("worker", name=f"upgrade-{os.getpid()}@%h"),
        logs,
        env=env,
    )


class Passes:
    """Sends scheduling passes for a cluster to the portal's broker, as beat would.

    A bare Celery client (no Django): the worker resolves the task by name.
    """

    def __init__(self, broker: str, cluster_id: int) -> None:
        from celery import Celery

        self.app = Celery(
            broker=broker, set_as_current=False
        )  # see test_worker_reconnects
        self.cluster_id = cluster_id
        self.sent = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def send(self) -> None:
        self.app.send_task(
            "apps.scheduling.tasks.allocate_cluster_task", args=[self.cluster_id]
        )
        self.sent += 1

    def __enter__(self) -> Passes:
        """Keep sending one every 0.3 s until the block ends (the worker stays busy)."""

        def loop() -> None:
            while not self._stop.wait(0.3):
                self.send()

        self.send()
        self._thread = threading.Thread(target=loop, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._stop.clear()


def _pods(kubeconfig: Path) -> list[str]:
    """The names of the portal's pods on the cluster."""
    from kubernetes import client, config

    api = client.CoreV1Api(config.new_client_from_config(str(kubeconfig)))
    return [
        pod.metadata.name
        for pod in api.list_namespaced_pod("default").items
        if pod.metadata.name.startswith("vnpu-")
    ]


@pytest.mark.slow
def test_upgrade_with_workers_running_loses_nothing(
    sim: SimCluster, portal_env: dict[str, str], tmp_path: Path, record_property: Any
):
    kubeconfig = sim.write_kubeconfig(tmp_path / "kubeconfig")
    previous = json.dumps(PREVIOUS_RELEASE)

    ids = _data(portal_env, "previous", previous, str(kubeconfig))
    applied = {tuple(pair) for pair in _data(portal_env, "applied")}
    ours = {pair for pair in applied if pair[0] in PREVIOUS_RELEASE}
    # exactly the previous release: nothing later slipped in
    assert {app: max(n for a, n in ours if a == app) for app in PREVIOUS_RELEASE} == (
        PREVIOUS_RELEASE
    )
    before = _data(portal_env, "snapshot", previous)
    assert all(before[table] for table in ("scheduling_request", "accounts_apitoken"))

    live = ids["clusters"]["live"]
    worker = _start_worker(portal_env, tmp_path)
    try:
        # The worker is busy with the live cluster's passes while the migration runs.
        passes = Passes(portal_env["REDIS_URL"], live)
        with passes:
            started = time.monotonic()
            _run(portal_env, "docker/prestart.py", "migrate", timeout=600)
            migrate_seconds = time.monotonic() - started
            sent_during_migrate = passes.sent
        assert worker.poll() is None, (tmp_path / "worker.log").read_text()[-3000:]

        applied = {tuple(pair) for pair in _data(portal_env, "applied")}
        assert _migrations_on_disk() <= applied, "not migrated to the latest on disk"

        # Requests progress on the upgraded database (passes until they are placed).
        migrated_at = time.monotonic()
        progressed: dict[str, Any] = {}

        def all_progressed() -> bool:
            passes.send()
            now = _data(portal_env, "snapshot", previous)["scheduling_request"]
            progressed.clear()
            progressed.update(
                (str(pk), now[str(pk)])
                for pk in ids["pending"]
                if now[str(pk)]["state"] != "pending"
            )
            return len(progressed) == len(ids["pending"])

        # all of them fit on the live cluster's free chips (a pass a second)
        processes.wait_until(
            all_progressed,
            "every pending request to be placed after the upgrade",
            90,
            1,
            watched=[worker],
        )
        placed_seconds = time.monotonic() - migrated_at
    finally:
        processes.stop(worker, grace=30)

    after = _data(portal_env, "snapshot", previous)
    placed = {str(pk) for pk in progressed}
    for table, rows in before.items():
        now = after[table]
        for pk, row in rows.items():
            assert pk in now, f"{table} row {pk} lost in the upgrade"
            for column, value in row.items():
                if (table, column) in RENAMED:
                    target = RENAMED[(table, column)]
                    if value:
                        assert now[pk].get(target), (
                            f"{table}.{column} lost, {target} empty"
                        )
                    continue
                assert column in now[pk], (
                    f"{table}.{column} dropped: say in RENAMED where it went"
                )
                if (
                    table == "scheduling_request"
                    and pk in placed
                    and column in PLACEMENT_COLUMNS
                ):
                    continue
                if (
                    column == "updated_at"
                    and table in ("scheduling_request",)
                    and pk in placed
                ):
                    continue
                if (table, column) in MOVED and value and not now[pk][column]:
                    target = MOVED[(table, column)]
                    assert now[pk][target], f"{table}.{column} emptied, {target} too"
                    continue
                assert now[pk][column] == value, (
                    table,
                    pk,
                    column,
                    value,
                    now[pk][column],
                )
        added = set(now) - set(rows)
        assert not added or table in APPEND_ONLY_BY_PASS | APPEND_ONLY_BY_MIGRATE, (
            table,
            sorted(added),
        )

    # Each placed request has one pod on the cluster, never two, and the pod it names.
    pods = _pods(kubeconfig)
    for pk, row in progressed.items():
        assert row["pod_name"], (pk, row)
        assert pods.count(row["pod_name"]) == 1, (row["pod_name"], pods)
    # one reservation per placed request
    reservations = after["scheduling_reservation"].values()
    booked = [r["request_id"] for r in reservations]
    assert len(booked) == len(set(booked))
    assert {str(pk) for pk in booked} >= placed
    # The figures, in the JUnit report (and -rA): how long the upgrade held things up.
    record_property("migrate_seconds", round(migrate_seconds, 1))
    record_property("placed_after_migrate_seconds", round(placed_seconds, 1))
    record_property("passes_sent_during_migrate", sent_during_migrate)
