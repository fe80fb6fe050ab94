"""Alerts and silences: the answers, and the body of a silence."""

from __future__ import annotations

import re
from datetime import timedelta

from django.utils.translation import gettext as _
from rest_framework import serializers

from apps.alerts.choices import AlertSource, AlertState
from apps.alerts.selectors import DEFINITIONS, SHOWN_LABELS

#: How long a silence may last: long enough to outlast a weekend's repair,
#: short enough that a forgotten silence ends on its own.
SILENCE_MIN = timedelta(minutes=5)
SILENCE_MAX = timedelta(days=30)
_DURATION = re.compile(r"^([0-9]{1,6})(m|h|d)$")
_UNIT = {"m": "minutes", "h": "hours", "d": "days"}


class AlertsErrorSerializer(serializers.Serializer):
    code = serializers.CharField(
        help_text="an error code (`alertmanager_unavailable`...)"
    )
    message = serializers.CharField()


class SilenceRefSerializer(serializers.Serializer):
    id = serializers.CharField()
    created_by = serializers.CharField()
    comment = serializers.CharField()
    ends_at = serializers.DateTimeField(allow_null=True)


class PortalAlertSerializer(serializers.Serializer):
    name = serializers.CharField(help_text="the alert's name, e.g. VnpuChipUnhealthy")
    severity = serializers.CharField(help_text="critical, warning or info")
    state = serializers.ChoiceField(choices=AlertState.choices)
    labels = serializers.DictField(
        child=serializers.CharField(),
        help_text="alertname, severity and the labels naming the object",
    )
    summary = serializers.CharField()
    portal_path = serializers.CharField(
        help_text="the portal page showing the object (path and query)"
    )
    runbook = serializers.CharField(help_text="its runbook: docs/alerts.md#<anchor>")
    runbook_url = serializers.CharField(
        help_text="the runbook's address when the rules carry one; else empty"
    )
    starts_at = serializers.DateTimeField(
        allow_null=True, help_text="null: evaluated by the portal, true now"
    )
    silenced_by = SilenceRefSerializer(many=True)


class AlertListSerializer(serializers.Serializer):
    source = serializers.ChoiceField(choices=AlertSource.choices)
    notifications_configured = serializers.BooleanField(
        help_text="ALERTMANAGER_URL is set: alerts are sent and can be silenced"
    )
    error = AlertsErrorSerializer(
        allow_null=True, help_text="why the alerts are missing; null when they are here"
    )
    alerts = PortalAlertSerializer(many=True)
    not_evaluated = serializers.ListField(
        child=serializers.CharField(),
        help_text="alerts the portal cannot evaluate itself (a counter's increase "
        "needs Prometheus); empty with Alertmanager",
    )


class SilenceCreateSerializer(serializers.Serializer):
    labels = serializers.DictField(
        child=serializers.CharField(max_length=200),
        help_text="label -> value, each matched exactly: an alert's `labels` "
        "(alertname required)",
    )
    duration = serializers.CharField(
        help_text="how long: <n>m, <n>h or <n>d, from 5m to 30d"
    )
    comment = serializers.CharField(max_length=1000, help_text="why (required)")

    def validate_labels(self, labels: dict[str, str]) -> dict[str, str]:
        errors: dict[str, list[str]] = {
            name: [f"not a label of the portal's alerts ({', '.join(SHOWN_LABELS)})"]
            for name in labels
            if name not in SHOWN_LABELS
        }
        alertname = labels.get("alertname")
        if not alertname:
            errors["alertname"] = ["required: the alert to silence"]
        elif alertname not in DEFINITIONS:
            errors["alertname"] = [f"no alert of the portal is named {alertname!r}"]
        if errors:
            raise serializers.ValidationError(errors)
        return labels

    def validate_duration(self, text: str) -> timedelta:
        match = _DURATION.match(text.strip())
        if match is None:
            raise serializers.ValidationError(_("write <n>m, <n>h or <n>d, e.g. 2h"))
        duration = timedelta(**{_UNIT[match[2]]: int(match[1])})
        if not SILENCE_MIN <= duration <= SILENCE_MAX:
            raise serializers.ValidationError(_("from 5m to 30d"))
        return duration


class SilenceSerializer(serializers.Serializer):
    id = serializers.CharField(help_text="Alertmanager's silence id")
    labels = serializers.DictField(child=serializers.CharField())
    starts_at = serializers.DateTimeField()
    ends_at = serializers.DateTimeField()
    created_by = serializers.CharField()
    comment = serializers.CharField()
