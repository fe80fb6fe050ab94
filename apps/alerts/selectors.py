"""The portal's alerts as the Alerts page and the Overview's panel show them.

With ``ALERTMANAGER_URL`` they are read from Alertmanager (only alerts named
by a definition of ``apps.common.alerting.definitions``), with their
silences. Without it the portal evaluates each definition against its own
metric samples, collected in-process as ``/metrics`` would serve them: a
condition true now (``for`` needs a history the portal does not keep), and
nothing for the counter alerts, which need Prometheus (``not_evaluated``).

An unreachable Alertmanager never fails the answer: it carries the error and
no alerts, and the page says why it is empty.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from django.utils.dateparse import parse_datetime
from django.utils.translation import get_language

from apps.alerts.alertmanager import Alertmanager, alertmanager, configured
from apps.alerts.choices import AlertSource, AlertState
from apps.alerts.errors import AlertmanagerRefused, AlertmanagerUnavailable
from apps.common.alerting.definitions import ALERTS, Alert
from apps.common.alerting.evaluate import Sample, evaluate, needs_history, render
from apps.common.alerting.rules import RUNBOOK

#: The labels that name an alert's object (those of the metrics behind the
#: definitions). With ``alertname`` and ``severity`` they are what the page
#: shows and what a silence may match; the scrape's own labels (``instance``,
#: ``job``, ``pod``...) are left out, so one silence covers every replica.
OBJECT_LABELS = (
    "cluster",
    "queue",
    "node",
    "chip",
    "chip_type",
    "resource",
    "reason",
    "state",
)
SHOWN_LABELS = ("alertname", "severity", *OBJECT_LABELS)
DEFINITIONS: Mapping[str, Alert] = {alert.name: alert for alert in ALERTS}
_SEVERITY_ORDER = {"critical": 0, "warning": 1, "info": 2}


@dataclass(frozen=True)
class SilenceRef:
    """A silence that silences an alert."""

    id: str
    created_by: str = ""
    comment: str = ""
    ends_at: datetime | None = None


@dataclass(frozen=True)
class PortalAlert:
    """One alert, for one object."""

    name: str
    severity: str
    state: AlertState
    labels: dict[str, str]
    summary: str
    portal_path: str
    runbook: str
    runbook_url: str = ""
    starts_at: datetime | None = None
    silenced_by: tuple[SilenceRef, ...] = ()


@dataclass(frozen=True)
class AlertsError:
    """Why an answer holds no alerts."""

    code: str
    message: str


@dataclass(frozen=True)
class AlertList:
    """The answer of ``GET /api/alerts/``."""

    source: AlertSource
    notifications_configured: bool
    alerts: list[PortalAlert]
    error: AlertsError | None = None
    not_evaluated: list[str] = field(default_factory=list)


def alert_list() -> AlertList:
    """The portal's alerts now: from Alertmanager when one is configured (its
    error, and no alerts, when it fails), else evaluated by the portal."""
    if not configured():
        return _evaluated()
    try:
        alerts = _from_alertmanager(alertmanager())
    except (AlertmanagerUnavailable, AlertmanagerRefused) as error:
        return AlertList(
            source=AlertSource.ALERTMANAGER,
            notifications_configured=True,
            alerts=[],
            error=AlertsError(str(error.code), error.message),
        )
    return AlertList(
        source=AlertSource.ALERTMANAGER, notifications_configured=True, alerts=alerts
    )


def shown_labels(labels: Mapping[str, str], alert: Alert) -> dict[str, str]:
    """The labels naming the alert's object, with its name and severity."""
    shown = {k: v for k, v in labels.items() if k in OBJECT_LABELS and v}
    return {"alertname": alert.name, "severity": alert.severity, **shown}


def _portal_alert(alert: Alert, labels: dict[str, str], **rest: Any) -> PortalAlert:
    return PortalAlert(
        name=alert.name,
        severity=alert.severity,
        labels=labels,
        portal_path=render(alert.page, labels),
        runbook=f"{RUNBOOK}#{alert.anchor}",
        **rest,
    )


def _sorted(alerts: list[PortalAlert]) -> list[PortalAlert]:
    return sorted(
        alerts,
        key=lambda a: (
            _SEVERITY_ORDER.get(a.severity, 9),
            a.starts_at.timestamp() if a.starts_at else 0.0,
            a.name,
            sorted(a.labels.items()),
        ),
    )


# --- from Alertmanager -----------------------------------------------------------


def _from_alertmanager(client: Alertmanager) -> list[PortalAlert]:
    raw = client.alerts(list(DEFINITIONS))
    wanted = {sid for a in raw for sid in a.get("status", {}).get("silencedBy") or []}
    silences = {str(s.get("id")): s for s in client.silences()} if wanted else {}
    # Every web replica is scraped, so Alertmanager holds one alert per
    # replica (their ``instance`` differs): the page shows one per object.
    kept: dict[tuple[tuple[str, str], ...], PortalAlert] = {}
    for entry in raw:
        found = _alert_of(entry, silences)
        if found is None:
            continue
        key = tuple(sorted(found.labels.items()))
        if key not in kept or _earlier(found, kept[key]):
            kept[key] = found
    return _sorted(list(kept.values()))


def _earlier(a: PortalAlert, b: PortalAlert) -> bool:
    return a.starts_at is not None and (
        b.starts_at is None or a.starts_at < b.starts_at
    )


def _alert_of(
    entry: Mapping[str, Any], silences: Mapping[str, Mapping[str, Any]]
) -> PortalAlert | None:
    labels = entry.get("labels") or {}
    alert = DEFINITIONS.get(labels.get("alertname", ""))
    if alert is None:
        return None
    status = entry.get("status") or {}
    silenced = [str(s) for s in status.get("silencedBy") or []]
    state = (
        AlertState.SILENCED
        if silenced
        else AlertState.SUPPRESSED
        if status.get("inhibitedBy")
        else AlertState.FIRING
    )
    annotations = entry.get("annotations") or {}
    shown = shown_labels(labels, alert)
    return _portal_alert(
        alert,
        shown,
        state=state,
        summary=_summary(alert, annotations, shown),
        runbook_url=annotations.get("runbook_url", ""),
        starts_at=_when(entry.get("startsAt")),
        silenced_by=tuple(_silence_ref(sid, silences.get(sid, {})) for sid in silenced),
    )


def _summary(
    alert: Alert, annotations: Mapping[str, Any], shown: dict[str, str]
) -> str:
    """The summary in the reader's language: Alertmanager's rendered annotation
    (``summary`` or, for Chinese, ``summary_zh``), else the portal's own
    rendering of the definition (rules written before ``summary_zh`` existed)."""
    language = get_language()
    key = "summary_zh" if (language or "").startswith("zh") else "summary"
    return str(annotations.get(key) or render(alert.summary_in(language), shown))


def _silence_ref(silence_id: str, silence: Mapping[str, Any]) -> SilenceRef:
    return SilenceRef(
        id=silence_id,
        created_by=str(silence.get("createdBy", "")),
        comment=str(silence.get("comment", "")),
        ends_at=_when(silence.get("endsAt")),
    )


def _when(text: str | None) -> datetime | None:
    """An RFC 3339 time of Alertmanager's, aware (UTC when it says no zone);
    None when absent or unreadable: a bad date hides the date, not the alert."""
    try:
        found = parse_datetime(text or "")
    except ValueError:  # well formed but impossible, e.g. month 13
        return None
    if found is not None and found.tzinfo is None:
        found = found.replace(tzinfo=UTC)
    return found


# --- evaluated by the portal -----------------------------------------------------


def portal_samples() -> Iterator[Sample]:
    """The samples ``/metrics`` would serve now, collected in-process."""
    from apps.common.metrics import PORTAL_COLLECTOR  # registers on import

    for family in PORTAL_COLLECTOR.collect():
        for sample in family.samples:
            yield Sample(sample.name, sample.labels, sample.value)


def _evaluated() -> AlertList:
    alerts = []
    for firing in evaluate(ALERTS, portal_samples()):
        shown = shown_labels(firing.labels, firing.alert)
        summary = render(firing.alert.summary_in(get_language()), shown, firing.value)
        alerts.append(
            _portal_alert(firing.alert, shown, state=AlertState.FIRING, summary=summary)
        )
    return AlertList(
        source=AlertSource.PORTAL,
        notifications_configured=False,
        alerts=_sorted(alerts),
        not_evaluated=[alert.name for alert in ALERTS if needs_history(alert)],
    )
