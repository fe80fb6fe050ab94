"""Serializers of a request's job: its result, and the query strings of its log and wait."""

from __future__ import annotations

from datetime import UTC
from typing import Any

from django.conf import settings
from django.utils.translation import gettext as _
from rest_framework import serializers

from apps.inventory.podlogs import LogQuery
from apps.scheduling.choices import FINAL_STATES, RequestState

#: What a long poll may wait for, and the states that answer it.
WAIT_STATES: dict[str, frozenset[str]] = {
    # running, or past it: a request that ended can never run any more
    "running": frozenset({RequestState.RUNNING, *FINAL_STATES}),
    "finished": frozenset(FINAL_STATES),
}
#: A year: the API server takes any, a larger one is a mistake.
MAX_SINCE_SECONDS = 365 * 24 * 3600
MAX_TAIL_LINES = 100_000


class ContainerResultSerializer(serializers.Serializer):
    name = serializers.CharField()
    exit_code = serializers.IntegerField(allow_null=True)
    reason = serializers.CharField(allow_blank=True)
    finished_at = serializers.CharField(allow_null=True)


class RequestResultSerializer(serializers.Serializer):
    """How the job ended (null until the request ended and its pod was read)."""

    exit_code = serializers.IntegerField(
        allow_null=True, help_text="the first container's exit code"
    )
    reason = serializers.CharField(
        help_text="Completed, Error, OOMKilled, StartError, DeadlineExceeded "
        "(time limit), Evicted, Preempted, Cancelled, Deleted, or the container's"
    )
    finished_at = serializers.CharField(allow_null=True)
    containers = ContainerResultSerializer(many=True)


class LogQuerySerializer(serializers.Serializer):
    """``GET /api/requests/<id>/logs/``: which part of the log, streamed or not."""

    container = serializers.RegexField(
        r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$",
        max_length=63,
        required=False,
        help_text="the container (default: the pod's only or first one)",
    )
    tail_lines = serializers.IntegerField(
        min_value=0, max_value=MAX_TAIL_LINES, required=False
    )
    since_seconds = serializers.IntegerField(
        min_value=1, max_value=MAX_SINCE_SECONDS, required=False
    )
    since_time = serializers.DateTimeField(
        required=False,
        help_text="RFC 3339; lines stamped at or after it (resume a follow with "
        "the last timestamp seen, and drop the lines already printed)",
    )
    timestamps = serializers.BooleanField(required=False, default=False)
    follow = serializers.BooleanField(required=False, default=False)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if "since_seconds" in attrs and "since_time" in attrs:
            raise serializers.ValidationError(
                {"since_time": [_("give since_seconds or since_time, not both")]}
            )
        return attrs

    def query(self) -> LogQuery:
        data = self.validated_data
        since = data.get("since_time")
        return LogQuery(
            container=data.get("container", ""),
            tail_lines=data.get("tail_lines"),
            since_seconds=data.get("since_seconds"),
            since_time=since.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
            if since
            else "",
            timestamps=data["timestamps"],
            follow=data["follow"],
        )


class WaitQuerySerializer(serializers.Serializer):
    """``GET /api/requests/<id>/?wait=...``: answer once the request got there."""

    wait = serializers.ChoiceField(choices=sorted(WAIT_STATES))
    timeout = serializers.IntegerField(min_value=1, required=False, default=60)

    def validate_timeout(self, value: int) -> int:
        limit = settings.REQUEST_WAIT_MAX_SECONDS
        if value > limit:
            raise serializers.ValidationError(
                _("at most %(limit)s (REQUEST_WAIT_MAX_SECONDS)") % {"limit": limit}
            )
        return value
