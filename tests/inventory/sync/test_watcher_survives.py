"""No error ends a watcher for good: a database blip at any point of a round
costs a retry, and a watcher that dies anyway is restarted and counted.

A fresh-clone CI run once lost the scheduler streams for good: a blip came while
their watchers read their cursors, before the retry loop began, and nothing
restarted the dead threads.
"""

from __future__ import annotations

import threading
from pathlib import Path

import psycopg
import pytest
from django.db import connection
from django.test import Client
from prometheus_client.parser import text_string_to_metric_families

from apps.inventory.choices import ConnectionKind, SyncState
from apps.inventory.models import Cluster, SyncCursor
from apps.inventory.services import cluster_create
from apps.inventory.sync import watcher as watcher_module
from apps.inventory.sync.engine import sync_run
from apps.inventory.sync.targets import targets_for
from tests.polling import wait_for
from tests.requires import missing

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]
TOKEN = "metrics-scrape-token-0123456789"


@pytest.fixture
def cluster(sim, tmp_path):
    kubeconfig = sim.write_kubeconfig(tmp_path / "kubeconfig")
    return cluster_create(
        actor=None,
        name="sim",
        connection=ConnectionKind.KUBECONFIG,
        kubeconfig=Path(kubeconfig).read_text(),
    )


class Task:
    """One sync task (``sync_run``) in a thread, as a worker runs it."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.stop = threading.Event()
        self.stats: dict = {}
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        try:
            self.stats = sync_run(
                self.cluster.pk, seconds=120, watch_timeout=2, stop=self.stop
            )
        finally:
            connection.close()

    def watchers(self) -> dict[str, int]:
        """Live watcher threads per stream of the cluster."""
        names = {
            f"sync-{self.cluster.pk}-{t.key}": t.key for t in targets_for(self.cluster)
        }
        alive = [t.name for t in threading.enumerate() if t.is_alive()]
        return {key: alive.count(name) for name, key in names.items()}

    def __enter__(self) -> Task:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(timeout=60)
        assert not self.thread.is_alive()


def _synced(cluster: Cluster) -> bool:
    keys = {t.key for t in targets_for(cluster)}
    stored = dict(
        SyncCursor.objects.filter(cluster=cluster).values_list(
            "resource", "resource_version"
        )
    )
    return set(stored) == keys and all(stored.values())


def _cursor_waiters(cur: psycopg.Cursor) -> dict[str, int]:
    """Sessions blocked on a cursor row, by the stream their query names."""
    cur.execute(
        "SELECT pid, query FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
        " AND datname = current_database() AND query LIKE '%%inventory_synccursor%%'"
    )
    return {query: pid for pid, query in cur.fetchall()}


def _pg_session() -> psycopg.Connection:
    params = {
        k: v
        for k, v in connection.get_connection_params().items()
        if k not in ("cursor_factory", "context")
    }
    return psycopg.connect(**params)


def test_a_blip_while_the_watchers_read_their_cursors_costs_only_a_retry(cluster):
    if connection.vendor != "postgresql":
        missing(
            "needs PostgreSQL: the blip is pg_terminate_backend on the sessions "
            "blocked reading their cursors"
        )
    keys = sorted(t.key for t in targets_for(cluster))
    # given another session holding every stream's cursor row uncommitted, so
    # that each watcher's cursor read (get_or_create) blocks inside the database
    holder = _pg_session()
    admin = _pg_session()
    admin.autocommit = True
    with holder.cursor() as cur:
        for key in keys:
            cur.execute(
                "INSERT INTO inventory_synccursor (cluster_id, resource,"
                " resource_version, last_error, relists, restarts, crashes, events,"
                " skipped_objects, served) VALUES"
                " (%s, %s, '', '', 0, 0, 0, 0, '[]', true)",
                (cluster.pk, key),
            )
    try:
        with Task(cluster) as task, admin.cursor() as cur:
            # when every stream's cursor read is blocked, and then cut (the
            # device config's first list reads its cursor too: cut it as well)
            cut: set[int] = set()

            def every_stream_blocked() -> bool:
                priming = task.watchers()["configmap:device-config"] == 0
                for query, pid in _cursor_waiters(cur).items():
                    if (
                        priming
                        and pid not in cut
                        and "configmap:device-config" in query
                    ):
                        cur.execute("SELECT pg_terminate_backend(%s)", (pid,))
                        cut.add(pid)
                waiting = [
                    q for q, pid in _cursor_waiters(cur).items() if pid not in cut
                ]
                return all(any(f"'{key}'" in q for q in waiting) for key in keys)

            wait_for(every_stream_blocked, "every watcher blocked on its cursor", 60)
            for pid in _cursor_waiters(cur).values():
                cur.execute("SELECT pg_terminate_backend(%s)", (pid,))
            holder.rollback()
            # then every watcher lives on and its stream is mirrored
            wait_for(lambda: _synced(cluster), "every stream listed", 60)
            assert task.watchers() == dict.fromkeys(keys, 1)
            wait_for(
                lambda: Cluster.objects.get(pk=cluster.pk).sync_state == SyncState.OK,
                "the cluster shown in sync",
                30,
            )
        # and each stream recorded a retry, no crash
        assert set(task.stats) == set(keys)
        assert all(stats.errors >= 1 for stats in task.stats.values()), task.stats
        assert all(stats.crashes == 0 for stats in task.stats.values())
        assert set(
            SyncCursor.objects.filter(cluster=cluster).values_list("crashes", flat=True)
        ) == {0}
    finally:
        holder.close()
        admin.close()


def test_a_watcher_that_crashes_is_restarted_and_counted(
    cluster, monkeypatch, settings
):
    settings.METRICS_TOKEN = TOKEN
    # given a defect that kills the pods watcher once, outside every retry
    real = watcher_module.ClusterWriter
    crashes: list[str] = []

    def writer_with_a_bug(cluster_obj):
        if threading.current_thread().name.endswith("-pods") and not crashes:
            crashes.append(threading.current_thread().name)
            raise RuntimeError("a bug in the writer")
        return real(cluster_obj)

    monkeypatch.setattr(watcher_module, "ClusterWriter", writer_with_a_bug)
    keys = sorted(t.key for t in targets_for(cluster))
    assert "pods" in keys
    with Task(cluster) as task:
        # when the task runs
        wait_for(lambda: _synced(cluster), "every stream listed", 60)
        # then the crashed watcher was restarted: every stream has one watcher
        assert crashes == [f"sync-{cluster.pk}-pods"]
        assert task.watchers() == dict.fromkeys(keys, 1)
    # and the crash is counted on its stream and exported
    assert task.stats["pods"].crashes == 1
    counted = dict(
        SyncCursor.objects.filter(cluster=cluster).values_list("resource", "crashes")
    )
    assert counted == {key: int(key == "pods") for key in keys}
    response = Client().get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert response.status_code == 200
    exported = {
        sample.labels["resource"]: sample.value
        for family in text_string_to_metric_families(response.content.decode())
        for sample in family.samples
        if sample.name == "vnpu_sync_watcher_crashes_total"
    }
    assert exported == {key: float(key == "pods") for key in keys}
