"""Every alert the portal ships: the one source of truth.

An alert is a comparison of one metric of ``/metrics`` (optionally its
increase over a window, for a counter) against a threshold, held for a
duration. Keeping it that simple means the same condition can be checked by
Prometheus (``apps.common.alerting.rules`` renders it) and, from the same
samples, by anything else that reads the metric.

Each alert names the object it is about from the metric's labels (cluster,
queue, node, chip UUID, chip type: all bounded), links to the portal page
that shows it (``page``, appended to ``PORTAL_URL``) and to its runbook
section in ``docs/alerts.md`` (the heading is the alert's name, so the anchor
is the name in lower case).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Severity = Literal["critical", "warning", "info"]
Op = Literal[">", ">=", "<", "<=", "==", "!="]

#: Prometheus durations as the chart's schema accepts them.
DURATION = re.compile(r"^[0-9]+(ms|s|m|h|d|w|y)$")


@dataclass(frozen=True)
class Alert:
    """One alert rule.

    Attributes:
        name: CamelCase, prefixed ``Vnpu``; also the runbook heading.
        severity: ``critical`` (act now), ``warning`` (act today) or ``info``.
        metric: The series compared (with ``matchers``).
        op: The comparison with the threshold.
        threshold: The default threshold (chart value ``alerts.<key>.threshold``).
        for_: How long the condition must hold (chart value ``alerts.<key>.for``).
        summary: One line naming the object, a Prometheus template over
            ``$labels`` and ``$value``.
        summary_zh: The same line in Chinese, with the same template
            variables (a test checks it): the ``summary_zh`` annotation, and
            what the portal shows a reader of Chinese.
        page: The portal page, a path (and query) appended to ``PORTAL_URL``;
            it may use ``$labels``.
        unit: What the threshold counts, for people (``seconds``, ``ratio``...).
        matchers: Label matchers on the metric, e.g. ``state=~"stale|error"``.
        increase_over: For a counter: compare its increase over this window.
    """

    name: str
    severity: Severity
    metric: str
    op: Op
    threshold: float
    for_: str
    summary: str
    summary_zh: str
    page: str
    unit: str
    matchers: str = ""
    increase_over: str = ""

    def summary_in(self, language: str | None) -> str:
        """The summary in ``language`` (a Django language code): Chinese for
        any ``zh`` code, English otherwise."""
        return self.summary_zh if (language or "").startswith("zh") else self.summary

    @property
    def key(self) -> str:
        """The chart's value name: ``VnpuChipUnhealthy`` -> ``chipUnhealthy``."""
        rest = self.name.removeprefix("Vnpu")
        return rest[0].lower() + rest[1:]

    @property
    def anchor(self) -> str:
        """The runbook heading's anchor in ``docs/alerts.md``."""
        return self.name.lower()

    @property
    def selector(self) -> str:
        """The metric with its matchers (and window), without the comparison."""
        series = f"{self.metric}{{{self.matchers}}}" if self.matchers else self.metric
        if self.increase_over:
            series = f"increase({series}[{self.increase_over}])"
        # Every web replica serves the same figures (read from the shared
        # database and cache), so Prometheus scrapes each object once per
        # replica: one alert per object, not one per replica.
        return f"max without ({', '.join(REPLICA_LABELS)}) ({series})"

    def expr(self, threshold: str | None = None) -> str:
        """The PromQL condition, with ``threshold`` (text) or the default."""
        return f"{self.selector} {self.op} {threshold or number(self.threshold)}"


#: The scrape's labels that tell the web replicas apart.
REPLICA_LABELS = ("instance", "pod")


def number(value: float) -> str:
    """A threshold as PromQL writes it: ``600``, not ``600.0``."""
    return f"{value:g}"


CLUSTER = "cluster={{ $labels.cluster }}"

ALERTS: tuple[Alert, ...] = (
    Alert(
        name="VnpuPreemptionAwaitingApproval",
        severity="warning",
        metric="vnpu_preemption_proposal_oldest_pending_age_seconds",
        op=">",
        threshold=600,
        for_="1m",
        unit="seconds",
        summary=(
            "A preemption proposal for queue {{ $labels.queue }} of cluster "
            "{{ $labels.cluster }} has waited {{ $value | humanizeDuration }} "
            "for an admin"
        ),
        summary_zh="集群 {{ $labels.cluster }} 队列 {{ $labels.queue }} 的一个抢占提议已等待管理员批准 {{ $value | humanizeDuration }}",
        page=f"/preemptions?{CLUSTER}",
    ),
    Alert(
        name="VnpuChipUnhealthy",
        severity="critical",
        metric="vnpu_chip_unhealthy",
        op=">",
        threshold=0,
        for_="5m",
        unit="1 while unhealthy",
        summary=(
            "Chip {{ $labels.chip }} ({{ $labels.chip_type }}) on node "
            "{{ $labels.node }} of cluster {{ $labels.cluster }} is reported unhealthy"
        ),
        summary_zh="集群 {{ $labels.cluster }} 节点 {{ $labels.node }} 上的芯片 {{ $labels.chip }}（{{ $labels.chip_type }}）被报告为不健康",
        page=f"/chips?{CLUSTER}&chip={{{{ $labels.chip }}}}",
    ),
    Alert(
        name="VnpuSyncDown",
        severity="critical",
        metric="vnpu_cluster_sync_state",
        matchers='state=~"stale|error"',
        op=">",
        threshold=0,
        for_="5m",
        unit="1 while in that state",
        summary="Sync of cluster {{ $labels.cluster }} is {{ $labels.state }}",
        summary_zh="集群 {{ $labels.cluster }} 的同步处于 {{ $labels.state }} 状态",
        page=f"/health?{CLUSTER}",
    ),
    Alert(
        name="VnpuWatchLagging",
        severity="warning",
        metric="vnpu_sync_stream_last_success_age_seconds",
        op=">",
        threshold=300,
        for_="5m",
        unit="seconds",
        summary=(
            "The {{ $labels.resource }} watch of cluster {{ $labels.cluster }} "
            "last succeeded {{ $value | humanizeDuration }} ago"
        ),
        summary_zh="集群 {{ $labels.cluster }} 的 {{ $labels.resource }} 监视最近一次成功在 {{ $value | humanizeDuration }} 之前",
        page=f"/health?{CLUSTER}",
    ),
    Alert(
        name="VnpuDeviceConfigDrift",
        severity="warning",
        metric="vnpu_deviceconfig_drift",
        op=">",
        threshold=0,
        for_="10m",
        unit="1 while drifted",
        summary=(
            "The device config of cluster {{ $labels.cluster }} was edited "
            "outside the portal"
        ),
        summary_zh="集群 {{ $labels.cluster }} 的设备配置在门户之外被修改",
        page=f"/templates?tab=publish&{CLUSTER}",
    ),
    Alert(
        name="VnpuRestartPending",
        severity="warning",
        metric="vnpu_deviceconfig_restart_pending_seconds",
        op=">",
        threshold=3600,
        for_="5m",
        unit="seconds",
        summary=(
            "The scheduler of cluster {{ $labels.cluster }} has not loaded the "
            "device config published {{ $value | humanizeDuration }} ago"
        ),
        summary_zh="集群 {{ $labels.cluster }} 的调度器尚未加载 {{ $value | humanizeDuration }} 之前发布的设备配置",
        page=f"/templates?tab=publish&{CLUSTER}",
    ),
    Alert(
        name="VnpuQueueNearQuota",
        severity="warning",
        metric="vnpu_queue_quota_used_ratio",
        op=">",
        threshold=0.9,
        for_="15m",
        unit="ratio of the quota",
        summary=(
            "Queue {{ $labels.queue }} of cluster {{ $labels.cluster }} holds "
            "{{ $value | humanizePercentage }} of its {{ $labels.chip_type }} "
            "{{ $labels.resource }} quota"
        ),
        summary_zh="集群 {{ $labels.cluster }} 的队列 {{ $labels.queue }} 已占用其 {{ $labels.chip_type }} {{ $labels.resource }} 配额的 {{ $value | humanizePercentage }}",
        page=f"/queues?{CLUSTER}",
    ),
    Alert(
        name="VnpuIdleSlices",
        severity="info",
        metric="vnpu_idle_slices",
        op=">",
        threshold=0,
        for_="2h",
        unit="slices",
        summary=(
            "{{ $value }} booked slices of cluster {{ $labels.cluster }} have "
            "been idle for hours"
        ),
        summary_zh="集群 {{ $labels.cluster }} 有 {{ $value }} 个已分配的切片空闲已达数小时",
        page=f"/usage?{CLUSTER}",
    ),
    Alert(
        name="VnpuRequestsStuckPending",
        severity="warning",
        metric="vnpu_request_pending_age_seconds",
        op=">",
        threshold=1800,
        for_="5m",
        unit="seconds",
        summary=(
            "A {{ $labels.chip_type }} request in queue {{ $labels.queue }} of "
            "cluster {{ $labels.cluster }} has been pending for "
            "{{ $value | humanizeDuration }} ({{ $labels.reason }})"
        ),
        summary_zh="集群 {{ $labels.cluster }} 队列 {{ $labels.queue }} 中一个 {{ $labels.chip_type }} 申请已等待 {{ $value | humanizeDuration }}（{{ $labels.reason }}）",
        page=f"/requests?{CLUSTER}",
    ),
    Alert(
        name="VnpuBindTimeouts",
        severity="warning",
        metric="vnpu_bind_timeouts_total",
        increase_over="30m",
        op=">",
        threshold=2,
        for_="1m",
        unit="timeouts in 30 minutes",
        summary=(
            "{{ $value | humanize }} pods of cluster {{ $labels.cluster }} were "
            "not bound in time in the last 30 minutes"
        ),
        summary_zh="集群 {{ $labels.cluster }} 在过去 30 分钟内有 {{ $value | humanize }} 个 Pod 未能按时绑定",
        page=f"/requests?{CLUSTER}",
    ),
    Alert(
        name="VnpuNodeLockReleased",
        severity="info",
        metric="vnpu_node_lock_releases_total",
        increase_over="1h",
        op=">",
        threshold=0,
        for_="1m",
        unit="releases in an hour",
        summary=(
            "The portal released {{ $value | humanize }} leaked scheduler node "
            "locks in cluster {{ $labels.cluster }} in the last hour"
        ),
        summary_zh="门户在过去一小时内释放了集群 {{ $labels.cluster }} 中 {{ $value | humanize }} 个泄漏的调度器节点锁",
        page=f"/audit?{CLUSTER}",
    ),
    Alert(
        name="VnpuWorkerMissing",
        severity="critical",
        metric="vnpu_workers_alive",
        op="<",
        threshold=1,
        for_="2m",
        unit="workers",
        summary="No portal worker has sent a heartbeat in the last minute",
        summary_zh="过去一分钟内没有任何门户 worker 发送心跳",
        page="/health",
    ),
    Alert(
        name="VnpuBeatMissing",
        severity="critical",
        metric="vnpu_beat_last_task_age_seconds",
        op=">",
        threshold=300,
        for_="2m",
        unit="seconds",
        summary=(
            "No periodic task has run for {{ $value | humanizeDuration }}: "
            "is the beat of the portal running?"
        ),
        summary_zh="已有 {{ $value | humanizeDuration }} 没有运行任何周期任务：门户的 beat 是否在运行？",
        page="/health",
    ),
    Alert(
        name="VnpuTaskBacklog",
        severity="warning",
        metric="vnpu_task_queue_length",
        op=">",
        threshold=1000,
        for_="10m",
        unit="tasks",
        summary=("{{ $value }} portal tasks are waiting in queue {{ $labels.queue }}"),
        summary_zh="队列 {{ $labels.queue }} 中有 {{ $value }} 个门户任务在等待",
        page="/health",
    ),
)
