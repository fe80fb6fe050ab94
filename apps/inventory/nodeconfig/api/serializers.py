"""Serializers of the node-config endpoints (inputs validate, outputs document)."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _
from rest_framework import serializers

from apps.common.translated import TranslatedCharField
from apps.inventory.deviceconfig.api.serializers import ValidationIssueSerializer
from apps.inventory.models import NodeConfigVersion

# ConfigMap data is at most 1 MiB; a draft past that could never be written.
MAX_TEXT = 1024 * 1024
NODE_NAME = r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$"

# --- inputs ----------------------------------------------------------------------


class NodeEditSerializer(serializers.Serializer):
    name = serializers.RegexField(NODE_NAME, max_length=253, help_text="the node")
    remove = serializers.BooleanField(
        default=False, help_text="drop the node's entry (the plugin runs on defaults)"
    )
    hami_vnpu_core = serializers.BooleanField(
        required=False,
        allow_null=True,
        default=None,
        help_text="slicing mode: true hami-core (soft), false templates; "
        "null/absent keeps it (a new entry takes the node's current mode)",
    )
    v_device_count = serializers.IntegerField(
        required=False,
        allow_null=True,
        default=None,
        min_value=0,
        max_value=2**31 - 1,
        help_text="slots per chip; 0 clears it (the plugin's default); null keeps it",
    )
    filter_uuids = serializers.ListField(
        child=serializers.CharField(max_length=64),
        required=False,
        allow_null=True,
        default=None,
        max_length=1024,
        help_text="replace the chips ignored by die UUID; null keeps them",
    )
    filter_indexes = serializers.ListField(
        child=serializers.IntegerField(min_value=0, max_value=2**31 - 1),
        required=False,
        allow_null=True,
        default=None,
        max_length=1024,
        help_text="replace the card ids ignored (a card id can hold two chips); "
        "null keeps them",
    )

    def to_internal_value(self, data: Any) -> Any:
        # A key this edit does not know is refused, not dropped: a draft in
        # the file's spelling ("hami-vnpu-core", "filterDevices", as the
        # what-if takes) would otherwise publish without the change.
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                known = ", ".join(self.fields)
                raise serializers.ValidationError(
                    {
                        key: [
                            _("unknown key; an edit takes %(known)s") % {"known": known}
                        ]
                        for key in unknown
                    }
                )
        return super().to_internal_value(data)


class NodeConfigDraftSerializer(serializers.Serializer):
    text = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=MAX_TEXT,
        trim_whitespace=False,
        help_text="a whole node-config.yaml, written as given",
    )
    nodes = NodeEditSerializer(
        many=True,
        required=False,
        max_length=10_000,
        help_text="per-node edits of the live document (written in canonical form)",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if ("text" in attrs) == bool(attrs.get("nodes")):
            raise serializers.ValidationError(
                {"text": [_("give either text or nodes, not both or neither")]}
            )
        return attrs


class NodeConfigPublishSerializer(NodeConfigDraftSerializer):
    reason = serializers.CharField(
        allow_blank=False,
        max_length=2000,
        help_text="why; kept with the version and in the audit log",
    )
    expected_version = serializers.IntegerField(
        allow_null=True,
        min_value=1,
        help_text="the version the edit was based on (null: no version yet); "
        "another one is a 409 stale_version and nothing is written",
    )
    expected_resource_version = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=32,
        help_text="the ConfigMap's resourceVersion the edit was based on (optional)",
    )
    confirm_unread = serializers.BooleanField(
        default=False,
        help_text="publish even where the device plugin does not read the node "
        "config (without it such a publish is a 400 node_config_not_read "
        "saying why and how to wire the file)",
    )
    confirm_warnings = serializers.BooleanField(
        default=False,
        help_text="publish even with validation warnings (without it: 400 "
        "unconfirmed_warnings listing them)",
    )
    force = serializers.BooleanField(
        default=False,
        help_text="publish over a hand edit of the ConfigMap (admin only)",
    )


class NodeConfigRollbackSerializer(serializers.Serializer):
    version = serializers.IntegerField(min_value=1, help_text="the version to restore")
    reason = serializers.CharField(allow_blank=False, max_length=2000)
    confirm_warnings = serializers.BooleanField(default=False)
    confirm_unread = serializers.BooleanField(default=False)
    force = serializers.BooleanField(default=False, help_text="admin only")


class NodeConfigAdoptSerializer(serializers.Serializer):
    reason = serializers.CharField(
        required=False, allow_blank=True, default="", max_length=2000
    )


class NodePluginRestartSerializer(serializers.Serializer):
    node = serializers.CharField(max_length=253, help_text="the node's name")
    reason = serializers.CharField(allow_blank=False, max_length=2000)


class NodePluginRestartResultSerializer(serializers.Serializer):
    node = serializers.CharField()
    pod = serializers.CharField(
        help_text="the plugin pod deleted (its DaemonSet recreates it)"
    )


class NodeConfigDiffQuerySerializer(serializers.Serializer):
    from_ = serializers.IntegerField(
        required=False,
        allow_null=True,
        default=None,
        min_value=1,
        help_text="version number; absent: the live text sync mirrored",
    )
    to = serializers.IntegerField(
        required=False,
        allow_null=True,
        default=None,
        min_value=1,
        help_text="version number; absent: the live text",
    )

    def get_fields(self) -> dict[str, Any]:
        fields = super().get_fields()
        fields["from"] = fields.pop("from_")  # a Python keyword
        return fields


class NodeConfigDiffDraftSerializer(serializers.Serializer):
    from_version = serializers.IntegerField(
        required=False,
        allow_null=True,
        default=None,
        min_value=1,
        help_text="version number; null: the live text",
    )
    text = serializers.CharField(
        allow_blank=True, max_length=MAX_TEXT, trim_whitespace=False
    )


# --- outputs ---------------------------------------------------------------------


class NodeConfigVersionSerializer(serializers.ModelSerializer):
    author = serializers.CharField(
        source="author.username", read_only=True, default=None, allow_null=True
    )

    class Meta:
        model = NodeConfigVersion
        fields = [
            "id",
            "number",
            "source",
            "author",
            "reason",
            "sha256",
            "resource_version",
            "created_at",
            "text",
        ]


class NodeInEffectSerializer(serializers.Serializer):
    version = serializers.IntegerField(
        allow_null=True, help_text="the version the node's plugin read at its start"
    )
    published_version = serializers.IntegerField(allow_null=True)
    plugin_pod = serializers.CharField(allow_blank=True)
    started_at = serializers.DateTimeField(allow_null=True)
    restart_pending = serializers.BooleanField(
        help_text="a newer version changes this node's entry; its plugin pod must "
        "restart to apply it"
    )
    why = serializers.CharField(allow_blank=True)


class NodeConfigNodeSerializer(serializers.Serializer):
    name = serializers.CharField()
    known = serializers.BooleanField(help_text="the cluster has this node")
    has_entry = serializers.BooleanField(
        help_text="false: no entry, the plugin runs on defaults there"
    )
    position = serializers.IntegerField(allow_null=True)
    hami_vnpu_core = serializers.BooleanField(allow_null=True)
    v_device_count = serializers.IntegerField(allow_null=True)
    filter_uuids = serializers.ListField(child=serializers.CharField())
    filter_indexes = serializers.ListField(child=serializers.IntegerField())
    in_effect = NodeInEffectSerializer()


class NodeConfigMapSerializer(serializers.Serializer):
    namespace = serializers.CharField()
    name = serializers.CharField()
    state = serializers.ChoiceField(
        choices=["present", "absent", "not_synced"],
        help_text="absent: sync listed it and there is no such ConfigMap",
    )
    resource_version = serializers.CharField(allow_blank=True)
    has_key = serializers.BooleanField(help_text="it has node-config.yaml")


class NodeConfigDriftSerializer(serializers.Serializer):
    in_sync = serializers.BooleanField()
    baseline_version = serializers.IntegerField(allow_null=True)
    live_version = serializers.IntegerField(allow_null=True)
    why = serializers.CharField(allow_blank=True)
    diff = serializers.CharField(allow_blank=True, help_text="baseline to live")


class NodeConfigIssueSerializer(serializers.Serializer):
    field = serializers.CharField(allow_blank=True)
    message = TranslatedCharField()
    severity = serializers.CharField()


class NodeConfigStateSerializer(serializers.Serializer):
    cluster = serializers.CharField()
    configmap = NodeConfigMapSerializer()
    text = serializers.CharField(allow_null=True, help_text="as sync mirrored it")
    baseline_version = serializers.IntegerField(
        allow_null=True, help_text="what expected_version must be to publish"
    )
    drift = NodeConfigDriftSerializer()
    issues = NodeConfigIssueSerializer(many=True, help_text="of the live text's format")
    plugin_pods = serializers.CharField(
        help_text="'live', or why the plugin pods could not be read"
    )
    nodes = NodeConfigNodeSerializer(many=True)


class NodeConfigValidationSerializer(serializers.Serializer):
    valid = serializers.BooleanField()
    text = serializers.CharField(help_text="the text checked (edits applied)")
    errors = NodeConfigIssueSerializer(many=True)
    warnings = NodeConfigIssueSerializer(many=True)


class NodeConfigPublishResultSerializer(serializers.Serializer):
    number = serializers.IntegerField(source="version.number")
    source = serializers.CharField(source="version.source")
    author = serializers.CharField(
        source="version.author.username", default=None, allow_null=True
    )
    reason = serializers.CharField(source="version.reason")
    resource_version = serializers.CharField(source="version.resource_version")
    previous_resource_version = serializers.CharField(allow_blank=True)
    created_at = serializers.DateTimeField(source="version.created_at")
    diff = serializers.CharField(help_text="live text to published text")
    forced = serializers.BooleanField()
    rollback_of = serializers.IntegerField(allow_null=True)
    warnings = ValidationIssueSerializer(many=True)


class NodeConfigDiffSerializer(serializers.Serializer):
    from_ = serializers.CharField()
    to = serializers.CharField()
    diff = serializers.CharField(allow_blank=True)

    def get_fields(self) -> dict[str, Any]:
        fields = super().get_fields()
        fields["from"] = fields.pop("from_")
        return fields
