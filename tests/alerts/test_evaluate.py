"""The alert definitions checked against samples without Prometheus, and their
text rendered from an alert's labels (apps/common/alerting/evaluate.py)."""

from __future__ import annotations

import re

import pytest

from apps.common.alerting.definitions import ALERTS
from apps.common.alerting.evaluate import (
    Sample,
    evaluate,
    humanize,
    humanize_duration,
    matchers,
    needs_history,
    render,
)

BY_NAME = {alert.name: alert for alert in ALERTS}


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0s"),
        (0.5, "500ms"),
        (0.0012, "1.2ms"),
        (45, "45s"),
        (600, "10m 0s"),
        (3723, "1h 2m 3s"),
        (90061, "1d 1h 1m 1s"),
    ],
)
def test_durations_read_as_prometheus_writes_them(seconds, text):
    assert humanize_duration(seconds) == text


def test_humanize_and_percentages():
    assert humanize(3) == "3"
    assert humanize(1500) == "1.5k"
    assert humanize(0.25) == "250m"
    assert render("{{ $value | humanizePercentage }}", {}, 0.95) == "95%"


def test_a_summary_and_a_page_are_rendered_from_the_labels():
    alert = BY_NAME["VnpuChipUnhealthy"]
    labels = {"cluster": "bj-1", "node": "n1", "chip": "u-1", "chip_type": "310P"}
    assert render(alert.summary, labels, 1) == (
        "Chip u-1 (310P) on node n1 of cluster bj-1 is reported unhealthy"
    )
    assert render(alert.page, labels) == "/chips?cluster=bj-1&chip=u-1"


def test_matchers_are_read_and_anchored():
    assert matchers('state=~"stale|error", x!="y"') == [
        ("state", "=~", "stale|error"),
        ("x", "!=", "y"),
    ]
    with pytest.raises(ValueError, match="unreadable"):
        matchers("state=stale")
    sync = BY_NAME["VnpuSyncDown"]
    samples = [
        Sample("vnpu_cluster_sync_state", {"cluster": "a", "state": "stale"}, 1),
        Sample("vnpu_cluster_sync_state", {"cluster": "b", "state": "ok"}, 1),
        # "never_stale" would match an unanchored regex
        Sample("vnpu_cluster_sync_state", {"cluster": "c", "state": "never_stale"}, 1),
    ]
    assert [f.labels["cluster"] for f in evaluate([sync], samples)] == ["a"]


def test_each_comparison_with_its_threshold():
    quota, workers = BY_NAME["VnpuQueueNearQuota"], BY_NAME["VnpuWorkerMissing"]
    samples = [
        Sample("vnpu_queue_quota_used_ratio", {"queue": "full"}, 0.95),
        Sample("vnpu_queue_quota_used_ratio", {"queue": "at"}, 0.9),
        Sample("vnpu_queue_quota_used_ratio", {"queue": "nan"}, float("nan")),
        Sample("vnpu_workers_alive", {}, 0),
    ]
    firing = evaluate([quota, workers], samples)
    assert [(f.alert.name, f.labels) for f in firing] == [
        ("VnpuQueueNearQuota", {"queue": "full"}),
        ("VnpuWorkerMissing", {}),
    ]


def test_counter_alerts_are_left_to_prometheus():
    counters = [a for a in ALERTS if needs_history(a)]
    assert {a.name for a in counters} == {"VnpuBindTimeouts", "VnpuNodeLockReleased"}
    samples = [Sample("vnpu_bind_timeouts_total", {"cluster": "a"}, 50)]
    assert evaluate(counters, samples) == []


TEMPLATE_VARIABLE = re.compile(r"\$(?:labels\.\w+|value)(?: \| \w+)?")


@pytest.mark.parametrize("alert", ALERTS, ids=lambda alert: alert.name)
def test_every_summary_is_in_chinese_too_with_the_same_variables(alert):
    # Alertmanager's receivers and the portal fill in the same values in both
    assert re.search("[\u4e00-\u9fff]", alert.summary_zh), alert.summary_zh
    assert sorted(TEMPLATE_VARIABLE.findall(alert.summary_zh)) == sorted(
        TEMPLATE_VARIABLE.findall(alert.summary)
    )


def test_the_summary_follows_the_readers_language():
    alert = BY_NAME["VnpuChipUnhealthy"]
    labels = {"cluster": "bj-1", "node": "n1", "chip": "u-1", "chip_type": "310P"}
    assert render(alert.summary_in("zh-hans"), labels, 1) == (
        "集群 bj-1 节点 n1 上的芯片 u-1（310P）被报告为不健康"
    )
    assert alert.summary_in("en") == alert.summary
    assert alert.summary_in(None) == alert.summary
