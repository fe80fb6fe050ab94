"""/metrics: the portal's own processes, as the alerts read them (docs/alerts.md):
workers heard from lately (their heartbeats) and the last run of a task beat
schedules; both only with a Redis broker (workers and beat of their own)."""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest
from django.core.cache import cache

from apps.common import task_metrics, worker_health
from tests.security.test_metrics import TOKEN, _scrape

pytestmark = pytest.mark.django_db
SYNC_ALL = "apps.inventory.tasks.sync_all_clusters_task"


@pytest.fixture
def redis_broker(settings):
    """A Redis broker URL nobody answers: the broker is down, the cache is not."""
    settings.METRICS_TOKEN = TOKEN
    settings.CELERY_BROKER_URL = "redis://127.0.0.1:1/0"
    cache.clear()
    yield
    cache.clear()


def test_workers_heard_from_in_the_last_minute(redis_broker):
    # given two workers' heartbeats (one through Celery's signal) and one that
    # expired
    worker_health._touch(
        sender=SimpleNamespace(eventer=SimpleNamespace(hostname="w@a"))
    )
    worker_health.heartbeat_record("w@b", time.time())
    worker_health.heartbeat_record("w@gone", time.time())
    cache.delete(worker_health.KEY_PREFIX + "w@gone")
    # when Prometheus scrapes
    samples = _scrape()
    # then the two alive ones count, and a dead broker is a value
    assert samples["vnpu_workers_alive"][()] == 2
    assert samples["vnpu_broker_up"][()] == 0


def test_no_worker_is_zero_not_absent(redis_broker):
    assert _scrape()["vnpu_workers_alive"][()] == 0


def test_the_last_periodic_task(redis_broker):
    # given no periodic task has run yet: nothing to say
    assert "vnpu_beat_last_task_age_seconds" not in _scrape()
    # when beat's sync_all_clusters_task ran five minutes ago
    task_metrics.record(SYNC_ALL, 0.1, ok=True)
    key = task_metrics.KEY_PREFIX + SYNC_ALL + "|"
    record = cache.get(key)
    cache.set(key, {**record, "at": time.time() - 300}, task_metrics.TTL_SECONDS)
    # then its age is reported (tasks beat does not schedule do not count)
    task_metrics.record("apps.scheduling.tasks.allocate_cluster_task", 0.1, ok=True)
    age = _scrape()["vnpu_beat_last_task_age_seconds"][()]
    assert 300 <= age < 330


def test_nothing_without_a_redis_broker(settings):
    settings.METRICS_TOKEN = TOKEN
    worker_health.heartbeat_record("w@a", time.time())
    samples = _scrape()
    assert "vnpu_workers_alive" not in samples
    assert "vnpu_beat_last_task_age_seconds" not in samples
