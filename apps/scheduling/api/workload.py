"""A request's workload: as a submission gives it, and as answers show it."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from apps.scheduling.pods import MAX_GRACE_SECONDS


class WorkloadSerializer(serializers.Serializer):
    image = serializers.CharField(max_length=1024)
    command = serializers.ListField(
        child=serializers.CharField(allow_blank=True, max_length=4096),
        required=False,
        max_length=256,
    )
    args = serializers.ListField(
        child=serializers.CharField(allow_blank=True, max_length=4096),
        required=False,
        max_length=256,
    )
    env = serializers.JSONField(
        required=False,
        allow_null=True,
        help_text=(
            'a map {"NAME": "value"} or a list [{"name": ..., "value": ..., '
            '"secret"?: false}]; values are shown as "***" unless "secret": false'
        ),
    )
    grace_seconds = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=0,
        max_value=MAX_GRACE_SECONDS,
        help_text=(
            "seconds the container has to stop after SIGTERM when the request "
            "is released, preempted or drained (the pod's "
            "terminationGracePeriodSeconds); default: Kubernetes' 30"
        ),
    )


_ENV_ENTRY_SHOWN: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "value": {"type": "string", "description": '"***" unless secret is false'},
        "secret": {"type": "boolean", "enum": [False]},
    },
    "required": ["name", "value"],
}


@extend_schema_field(
    {
        "anyOf": [
            {
                "type": "object",
                "description": "the workload as normalised at submission",
                "properties": {
                    "image": {"type": "string"},
                    "command": {"type": "array", "items": {"type": "string"}},
                    "args": {"type": "array", "items": {"type": "string"}},
                    "env": {"type": "array", "items": _ENV_ENTRY_SHOWN},
                    "grace_seconds": {
                        "type": "integer",
                        "description": "only when the submission gave it",
                    },
                },
                "required": ["image", "command", "args", "env"],
            },
            {
                "type": "object",
                "maxProperties": 0,
                "description": "none: the request gave a pod template",
            },
        ]
    }
)
class WorkloadShownField(serializers.JSONField):
    """A request's workload as answers show it (secret env values are redacted)."""
