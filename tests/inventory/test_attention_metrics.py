"""/metrics: the inventory figures the alerts read (docs/alerts.md): unhealthy
chips, device-config drift, and a publish waiting for the scheduler's restart."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from apps.inventory.choices import DeviceConfigSource as Source
from apps.inventory.deviceconfig.services import deviceconfig_version_store
from apps.inventory.models import Chip, Cluster, DeviceConfigVersion
from apps.inventory.sync.writer import ClusterWriter
from tests.security.test_metrics import TOKEN, _scrape

pytestmark = pytest.mark.django_db
GUIDE = (("cluster", "guide"),)


@pytest.fixture(autouse=True)
def _metrics_on(settings):
    settings.METRICS_TOKEN = TOKEN


@pytest.fixture
def texts(fixtures_dir) -> tuple[str, str]:
    """The guide's device config, and the same with the 910B4's first template
    2 GB bigger (other chip types and templates: a restart changes what HAMi loads)."""
    text = (fixtures_dir / "device-config-list.yaml").read_text()
    return text, text.replace("memory: 8192", "memory: 10240", 1)


def _store(cluster, text: str, source: Source, ago: timedelta) -> DeviceConfigVersion:
    version = deviceconfig_version_store(cluster=cluster, text=text, source=source)
    DeviceConfigVersion.objects.filter(pk=version.pk).update(
        created_at=timezone.now() - ago
    )
    return version


def test_one_series_per_unhealthy_chip(guide_cluster, fixtures_dir):
    # given the guide's nodes synced, and one chip its device plugin calls unhealthy
    nodes = [
        json.loads((fixtures_dir / n).read_text())
        for n in ("node-310p3.json", "node-910b4.json")
    ]
    ClusterWriter(guide_cluster).replace_nodes(nodes)
    Chip.objects.update(healthy=True)
    sick = Chip.objects.filter(common_word="Ascend310P").first()
    assert sick is not None
    Chip.objects.filter(pk=sick.pk).update(healthy=False)
    # when Prometheus scrapes
    samples = _scrape()
    # then that chip alone has a series, named by node, UUID and chip type
    assert samples["vnpu_chip_unhealthy"] == {
        (
            ("chip", sick.uuid),
            ("chip_type", "Ascend310P"),
            ("cluster", "guide"),
            ("node", sick.node.name),
        ): 1
    }
    counts = samples["vnpu_chips_unhealthy"]
    assert counts[(("chip_type", "Ascend310P"), ("cluster", "guide"))] == 1
    assert counts[(("chip_type", "Ascend910B4"), ("cluster", "guide"))] == 0


def test_a_hand_edit_is_drift_until_adopted(guide_cluster, texts):
    original, edited = texts
    # given a published version, as the ConfigMap held it
    _store(guide_cluster, original, Source.PUBLISHED, timedelta(hours=1))
    assert _scrape()["vnpu_deviceconfig_drift"][GUIDE] == 0
    # when sync observes a text someone wrote by hand
    _store(guide_cluster, edited, Source.OBSERVED, timedelta(0))
    # then the cluster drifts until the text is adopted
    assert _scrape()["vnpu_deviceconfig_drift"][GUIDE] == 1
    _store(guide_cluster, edited, Source.ADOPTED, timedelta(0))
    assert _scrape()["vnpu_deviceconfig_drift"][GUIDE] == 0


def test_a_publish_the_scheduler_has_not_loaded(guide_cluster, texts):
    original, changed = texts
    # given v2 published three hours ago and loaded by the scheduler, then v3
    # published two hours ago, while the scheduler kept running
    loaded = _store(guide_cluster, original, Source.PUBLISHED, timedelta(hours=3))
    Cluster.objects.filter(pk=guide_cluster.pk).update(
        config_loaded_at=timezone.now() - timedelta(hours=2, minutes=30),
        config_loaded_by="volcano-scheduler",
    )
    published = _store(guide_cluster, changed, Source.PUBLISHED, timedelta(hours=2))
    # when Prometheus scrapes
    samples = _scrape()
    # then the versions differ and the wait is the time since v3 was published
    assert samples["vnpu_deviceconfig_published_version"][GUIDE] == published.number
    assert samples["vnpu_deviceconfig_in_effect_version"][GUIDE] == loaded.number
    waited = samples["vnpu_deviceconfig_restart_pending_seconds"][GUIDE]
    assert 7200 <= waited < 7300
    # and a later publish does not restart the wait: it runs from v3
    newest = _store(guide_cluster, changed, Source.PUBLISHED, timedelta(minutes=1))
    samples = _scrape()
    assert samples["vnpu_deviceconfig_published_version"][GUIDE] == newest.number
    waited = samples["vnpu_deviceconfig_restart_pending_seconds"][GUIDE]
    assert 7200 <= waited < 7300
    # and once the scheduler restarted, nothing waits
    Cluster.objects.filter(pk=guide_cluster.pk).update(config_loaded_at=timezone.now())
    samples = _scrape()
    assert samples["vnpu_deviceconfig_restart_pending_seconds"][GUIDE] == 0
    assert samples["vnpu_deviceconfig_in_effect_version"][GUIDE] == newest.number
