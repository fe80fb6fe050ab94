"""Serializers of the node config's health and what-if (read-only answers)."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _
from rest_framework import serializers

from apps.inventory.deviceconfig.api.serializers import (
    HealthCheckSerializer,
    ValidationIssueSerializer,
)

STATUS = ["ok", "warn", "fail"]


class NodeConfigNodeHealthSerializer(serializers.Serializer):
    name = serializers.CharField()
    plugin_image = serializers.CharField(allow_blank=True)
    plugin_version = serializers.CharField(allow_null=True)
    version_source = serializers.CharField(
        allow_blank=True,
        help_text="daemonset: the DaemonSet's image (sync does not record each "
        "node's plugin pod)",
    )
    applies = serializers.ListField(
        child=serializers.CharField(), help_text="the entry keys the plugin applies"
    )
    has_entry = serializers.BooleanField(
        allow_null=True, help_text="null: sync has not seen the ConfigMap"
    )
    entry = serializers.CharField(allow_blank=True)
    check_status = serializers.ChoiceField(choices=STATUS)
    message = serializers.CharField()
    fix = serializers.CharField(allow_blank=True)


class NodeConfigHealthSerializer(serializers.Serializer):
    cluster = serializers.CharField()
    check_status = serializers.ChoiceField(
        choices=STATUS, help_text="the worst of the checks"
    )
    readable = serializers.BooleanField(
        help_text="the device plugin reads the node config (publish needs "
        "confirm_unread otherwise)"
    )
    checks = HealthCheckSerializer(many=True)
    patch = serializers.JSONField(
        allow_null=True,
        help_text="strategic-merge patch of the device-plugin DaemonSet that wires "
        "the file in; null when it is wired",
    )
    kubectl = serializers.CharField(
        allow_blank=True, help_text="the kubectl command applying the patch"
    )
    nodes = NodeConfigNodeHealthSerializer(many=True)


class NodeConfigWhatIfInputSerializer(serializers.Serializer):
    """Exactly one of ``text`` (a whole node-config.yaml, or a ConfigMap) and
    ``nodes`` (its entries, as JSON)."""

    text = serializers.CharField(
        required=False, allow_blank=True, trim_whitespace=False, max_length=1_000_000
    )
    nodes = serializers.ListField(
        child=serializers.JSONField(), required=False, max_length=10_000
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if ("text" in attrs) == ("nodes" in attrs):
            raise serializers.ValidationError(
                {
                    "text": [
                        _("send exactly one of text (the file) and nodes (its entries)")
                    ]
                }
            )
        return attrs


class WhatIfStrandedSerializer(serializers.Serializer):
    namespace = serializers.CharField()
    pod = serializers.CharField()
    chip_uuid = serializers.CharField()
    chip_index = serializers.IntegerField()
    template = serializers.CharField(allow_blank=True)
    memory = serializers.IntegerField()
    reasons = serializers.ListField(child=serializers.CharField())


class WhatIfRoomFiguresSerializer(serializers.Serializer):
    chips = serializers.IntegerField()
    eligible_chips = serializers.IntegerField()
    slots = serializers.IntegerField()
    slots_free = serializers.IntegerField()
    memory = serializers.IntegerField()
    memory_free = serializers.IntegerField()
    aicore = serializers.IntegerField()
    aicore_free = serializers.IntegerField()
    largest_template = serializers.CharField(allow_null=True)


class WhatIfRoomSerializer(serializers.Serializer):
    common_word = serializers.CharField()
    before = WhatIfRoomFiguresSerializer()
    after = WhatIfRoomFiguresSerializer()


class NodeConfigWhatIfNodeSerializer(serializers.Serializer):
    name = serializers.CharField()
    changed = serializers.BooleanField()
    changes = serializers.ListField(child=serializers.CharField())
    ignored = serializers.ListField(
        child=serializers.CharField(),
        help_text="what the node's plugin version does not apply",
    )
    mode_before = serializers.CharField()
    mode_after = serializers.CharField()
    drain_first = serializers.BooleanField(
        help_text="running slices block the mode switch: drain the node first"
    )
    stranded_slices = WhatIfStrandedSerializer(many=True)
    room = WhatIfRoomSerializer(many=True)


class WhatIfRequestSerializer(serializers.Serializer):
    id = serializers.CharField()
    label = serializers.CharField()
    common_word = serializers.CharField()
    template = serializers.CharField(allow_null=True)
    memory = serializers.IntegerField()
    nodes_before = serializers.ListField(child=serializers.CharField())
    nodes_after = serializers.ListField(child=serializers.CharField())


class NodeConfigWhatIfSerializer(serializers.Serializer):
    cluster = serializers.CharField()
    errors = ValidationIssueSerializer(many=True)
    warnings = ValidationIssueSerializer(many=True)
    readable = serializers.BooleanField()
    not_read_because = serializers.ListField(child=serializers.CharField())
    nodes = NodeConfigWhatIfNodeSerializer(many=True)
    unblocked = WhatIfRequestSerializer(many=True)
    blocked = WhatIfRequestSerializer(many=True)
    drain_first = serializers.ListField(child=serializers.CharField())
    unknown_nodes = serializers.ListField(child=serializers.CharField())
