"""/metrics: off without METRICS_TOKEN, 401 without the bearer, and the families from the database."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.db import DatabaseError
from django.test import Client
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from apps.inventory.choices import ConnectionKind
from apps.inventory.models import Cluster, SyncCursor
from apps.inventory.sync.writer import ClusterWriter

pytestmark = pytest.mark.django_db
TOKEN = "metrics-scrape-token-0123456789"


@pytest.fixture
def metrics_on(settings):
    settings.METRICS_TOKEN = TOKEN


def _scrape(client: Client | None = None) -> dict[str, dict[tuple, float]]:
    response = (client or Client()).get(
        "/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}"
    )
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain; version=")
    samples: dict[str, dict[tuple, float]] = {}
    for family in text_string_to_metric_families(response.content.decode()):
        for sample in family.samples:
            key = tuple(sorted(sample.labels.items()))
            samples.setdefault(sample.name, {})[key] = sample.value
    return samples


def test_metrics_are_off_without_a_token(settings):
    settings.METRICS_TOKEN = ""
    assert Client().get("/metrics").status_code == 404
    assert Client().get("/metrics", HTTP_AUTHORIZATION="Bearer x").status_code == 404


@pytest.mark.parametrize("header", [None, "Bearer wrong", f"Token {TOKEN}", TOKEN])
def test_metrics_need_the_bearer_token(metrics_on, header):
    extra = {"HTTP_AUTHORIZATION": header} if header else {}
    response = Client().get("/metrics", **extra)
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == 'Bearer realm="metrics"'
    assert b"vnpu_" not in response.content


def test_a_portal_session_is_not_enough(metrics_on, admin_user):
    client = Client()
    client.force_login(admin_user)
    assert client.get("/metrics").status_code == 401


def test_families_read_from_the_database(
    metrics_on, guide_cluster, fixtures_dir, viewer_client
):
    # given the guide's two nodes synced, two streams with history, and some traffic
    nodes = [
        json.loads((fixtures_dir / n).read_text())
        for n in ("node-310p3.json", "node-910b4.json")
    ]
    ClusterWriter(guide_cluster).replace_nodes(nodes)
    now = timezone.now()
    SyncCursor.objects.create(
        cluster=guide_cluster,
        resource="pods",
        last_success_at=now - timedelta(seconds=42),
        restarts=3,
        relists=1,
        events=120,
    )
    SyncCursor.objects.create(
        cluster=guide_cluster,
        resource="nodes",
        last_success_at=now - timedelta(seconds=2),
        last_error="API server answered 500",
        last_error_at=now,
    )
    SyncCursor.objects.create(
        cluster=guide_cluster,
        resource="queues",  # Volcano's CRDs absent: not served, never stale
        last_success_at=now - timedelta(days=3),
        served=False,
    )
    # (the streams count while the cluster is connected)
    Cluster.objects.filter(pk=guide_cluster.pk).update(
        connection=ConnectionKind.IN_CLUSTER
    )
    viewer_client.get(f"/api/clusters/{guide_cluster.pk}/summary/")
    # when Prometheus scrapes
    samples = _scrape()
    guide = (("cluster", "guide"),)
    # then sync lag is the oldest stream's age, restarts and relists are counters
    assert 42 <= samples["vnpu_cluster_sync_lag_seconds"][guide] < 60
    pods = (("cluster", "guide"), ("resource", "pods"))
    nodes_key = (("cluster", "guide"), ("resource", "nodes"))
    assert samples["vnpu_sync_watch_restarts_total"][pods] == 3
    assert samples["vnpu_sync_relists_total"][pods] == 1
    assert samples["vnpu_sync_events_total"][pods] == 120
    assert samples["vnpu_sync_stream_failing"][nodes_key] == 1
    assert samples["vnpu_sync_stream_failing"][pods] == 0
    queues = (("cluster", "guide"), ("resource", "queues"))
    assert queues not in samples["vnpu_sync_stream_last_success_age_seconds"]
    assert 42 <= samples["vnpu_sync_stream_last_success_age_seconds"][pods] < 60
    # usage per cluster and chip type, as the summary counts it
    summary = viewer_client.get(f"/api/clusters/{guide_cluster.pk}/summary/").json()
    for chip_type in summary["chip_types"]:
        if not chip_type["chips"]:
            continue
        key = (("chip_type", chip_type["common_word"]), ("cluster", "guide"))
        assert samples["vnpu_chips"][key] == chip_type["chips"]
        assert samples["vnpu_memory_megabytes"][key] == chip_type["memory_total"]
        assert samples["vnpu_slots"][key] == chip_type["slots_total"]
        assert samples["vnpu_slots_used"][key] == chip_type["slots_used"]
    assert sum(samples["vnpu_chips"].values()) == 12
    assert samples["vnpu_database_up"][()] == 1
    # and the HTTP histogram saw the API call under its route, not its path
    routes = {
        dict(k)["route"] for k in samples["vnpu_http_request_duration_seconds_count"]
    }
    summary_routes = [r for r in routes if "summary" in r]
    assert summary_routes
    assert all(str(guide_cluster.pk) not in r for r in summary_routes), summary_routes


def test_a_database_outage_is_a_value_not_a_failed_scrape(metrics_on, monkeypatch):
    from apps.common import metrics_sources

    def down():
        raise DatabaseError("connection refused")

    monkeypatch.setattr(metrics_sources, "_cluster_names", down)
    samples = _scrape()
    assert samples["vnpu_database_up"][()] == 0
    assert "vnpu_chips" not in samples


def test_probes(settings):
    assert Client().get("/healthz").content == b"ok\n"
    assert Client().get("/readyz").status_code == 200


def test_task_runs_and_allocator_pass_time_from_the_shared_records(
    metrics_on, guide_cluster
):
    from apps.common import task_metrics
    from apps.inventory.tasks import record_usage_samples_task

    # given a task run through Celery (eager here: the same signals fire in workers)
    record_usage_samples_task.delay()
    # and a scheduling pass a worker timed for the guide cluster
    task_metrics.record(
        "apps.scheduling.tasks.allocate_cluster_task",
        0.25,
        ok=True,
        cluster=str(guide_cluster.pk),
    )
    samples = _scrape()
    usage = (
        ("cluster", ""),
        ("task", "apps.inventory.tasks.record_usage_samples_task"),
    )
    assert samples["vnpu_task_runs_total"][usage] == 1
    assert samples["vnpu_task_failures_total"][usage] == 0
    assert samples["vnpu_allocator_pass_seconds"][(("cluster", "guide"),)] == 0.25


def test_a_cluster_no_longer_connected_has_no_stream_that_lags(
    metrics_on, guide_cluster
):
    # given a stream last in step a week ago, of a cluster an admin disconnected
    SyncCursor.objects.create(
        cluster=guide_cluster,
        resource="pods",
        last_success_at=timezone.now() - timedelta(days=7),
    )
    assert guide_cluster.connection == ConnectionKind.NONE
    # when Prometheus scrapes, then nothing says it lags (VnpuWatchLagging resolves)
    samples = _scrape()
    assert not samples.get("vnpu_cluster_sync_lag_seconds")
    assert not samples.get("vnpu_sync_stream_last_success_age_seconds")
