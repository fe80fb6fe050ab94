"""Serializers of the device-config endpoints: its versions and state, and
publishing (inputs validate, outputs document)."""

from __future__ import annotations

from django.utils.translation import gettext as _
from rest_framework import serializers

from apps.common.translated import TranslatedCharField
from apps.inventory.models import DeviceConfigVersion

# --- versions and state ------------------------------------------------------


class DeviceConfigVersionSerializer(serializers.ModelSerializer):
    author = serializers.CharField(
        source="author.username",
        read_only=True,
        default=None,
        allow_null=True,
        help_text="null: no user (imported, observed by sync, or the user is gone)",
    )

    class Meta:
        model = DeviceConfigVersion
        fields = [
            "id",
            "cluster",
            "number",
            "shape",
            "source",
            "author",
            "reason",
            "sha256",
            "resource_version",
            "created_at",
            "text",
        ]


class DeviceConfigVersionListSerializer(DeviceConfigVersionSerializer):
    class Meta(DeviceConfigVersionSerializer.Meta):
        fields = [f for f in DeviceConfigVersionSerializer.Meta.fields if f != "text"]


class DiffSerializer(serializers.Serializer):
    before = serializers.IntegerField(help_text="version id")
    after = serializers.IntegerField(help_text="version id")
    diff = serializers.CharField(help_text="unified diff; empty when equal")


class DiffQuerySerializer(serializers.Serializer):
    other = serializers.IntegerField(help_text="id of the version to compare with")


class ValidationIssueSerializer(serializers.Serializer):
    field = serializers.CharField()
    message = TranslatedCharField()
    chip_type = serializers.CharField(allow_null=True)
    template = serializers.CharField(allow_null=True)
    severity = serializers.CharField()


class ShapeWarningSerializer(serializers.Serializer):
    component = serializers.ChoiceField(choices=["volcano", "hami", "device_plugin"])
    workload = serializers.CharField(
        help_text="e.g. DaemonSet kube-system/hami-ascend-device-plugin"
    )
    image = serializers.CharField(allow_blank=True)
    version = serializers.CharField(
        allow_null=True, help_text="from the image's release tag; null: unknown"
    )
    shape = serializers.ChoiceField(choices=["list", "wrapper"])
    effect = serializers.ChoiceField(
        choices=["crash", "fallback", "unknown"],
        help_text="crash: it cannot parse the shape and exits at its next start "
        "(publishing needs confirm_shape); fallback: it silently uses its "
        "310P3-only default; unknown: its version is unknown",
    )
    message = serializers.CharField()
    fix = serializers.CharField(allow_blank=True)


class ConfigInEffectSerializer(serializers.Serializer):
    version = serializers.IntegerField(
        allow_null=True,
        help_text="the device-config version requests are placed by now: the one "
        "the scheduler loaded when it started",
    )
    published = serializers.IntegerField(
        allow_null=True, help_text="the newest version written to the ConfigMap"
    )
    pending_restart = serializers.BooleanField(
        help_text="the scheduler runs an older version than the published one"
    )
    loaded_by = serializers.CharField(
        allow_blank=True, help_text="the scheduler workload whose pods were read"
    )
    loaded_at = serializers.DateTimeField(
        allow_null=True, help_text="when its oldest pod started (null: not read yet)"
    )
    why = serializers.CharField()


class DeviceConfigStateSerializer(serializers.Serializer):
    yaml = serializers.CharField(help_text="what the portal would publish")
    base_version = serializers.IntegerField(allow_null=True)
    diff_from_base = serializers.CharField()
    errors = ValidationIssueSerializer(many=True)
    warnings = ValidationIssueSerializer(many=True)
    shape_warnings = ShapeWarningSerializer(
        many=True,
        help_text="running components that cannot (or may not) read the vnpus "
        "shape of this config",
    )
    in_effect = ConfigInEffectSerializer(
        help_text="the version the scheduler places by, which may be older than "
        "the published one until it restarts"
    )


# --- inputs ----------------------------------------------------------------------


class PublishInputSerializer(serializers.Serializer):
    reason = serializers.CharField(
        allow_blank=False, help_text="why; kept with the version and in the audit log"
    )
    force = serializers.BooleanField(
        default=False,
        help_text="publish over a hand edit of the ConfigMap (admin only)",
    )
    confirm_shape = serializers.BooleanField(
        default=False,
        help_text="write even a vnpus shape that a running component cannot parse "
        "(it crashes at its next start); without it such a publish is a 400",
    )
    confirm_breaking = serializers.ListField(
        child=serializers.CharField(max_length=317),
        max_length=100_000,
        default=list,
        help_text="the running slices (namespace/pod) you accept this publish breaks "
        "(template removed or resized); each must be named, else a 400 "
        "breaks_running_slices lists them",
    )
    confirm_breaking_templates = serializers.ListField(
        child=serializers.RegexField(
            r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$", max_length=127
        ),
        max_length=1_000,
        default=list,
        help_text="the templates (commonWord/template, commonWord/whole-card for a "
        "whole card) whose running slices you accept this publish breaks, "
        "whichever pods run them when it lands; a slice it breaks must be named "
        "here or in confirm_breaking",
    )


class RollbackInputSerializer(PublishInputSerializer):
    confirm_breaking = None  # a rollback restores a version as it was
    confirm_breaking_templates = None
    version = serializers.IntegerField(
        min_value=1, help_text="the version number to restore (3 for v3)"
    )


class AdoptInputSerializer(serializers.Serializer):
    reason = serializers.CharField(required=False, allow_blank=True, default="")


class RestartInputSerializer(serializers.Serializer):
    confirm = serializers.BooleanField(
        default=False,
        help_text="must be true: every pod of the component is replaced",
    )

    def validate_confirm(self, value: bool) -> bool:
        if value is not True:
            raise serializers.ValidationError(
                _(
                    "send confirm: true to restart; every pod of the component is replaced"
                )
            )
        return value


class DriftQuerySerializer(serializers.Serializer):
    live = serializers.BooleanField(
        default=True,
        help_text="false: use what sync recorded instead of asking the cluster",
    )


# --- outputs ---------------------------------------------------------------------


class PublishResultSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="version.id", help_text="version id")
    number = serializers.IntegerField(source="version.number")
    source = serializers.CharField(source="version.source")
    author = serializers.CharField(
        source="version.author.username", default=None, allow_null=True
    )
    reason = serializers.CharField(source="version.reason")
    resource_version = serializers.CharField(source="version.resource_version")
    previous_resource_version = serializers.CharField()
    created_at = serializers.DateTimeField(source="version.created_at")
    diff = serializers.CharField(help_text="unified diff, live text to published text")
    forced = serializers.BooleanField()
    rollback_of = serializers.IntegerField(allow_null=True)
    warnings = ValidationIssueSerializer(many=True)
    shape_warnings = ShapeWarningSerializer(many=True)


class AdoptResultSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    number = serializers.IntegerField()
    source = serializers.CharField()
    reason = serializers.CharField()
    resource_version = serializers.CharField()
    created_at = serializers.DateTimeField()


class DriftSerializer(serializers.Serializer):
    in_sync = serializers.BooleanField()
    checked = serializers.ChoiceField(
        choices=["live", "recorded"],
        help_text="live: the ConfigMap was read now; recorded: what sync saw",
    )
    baseline_version = serializers.IntegerField(allow_null=True)
    live_version = serializers.IntegerField(allow_null=True)
    live_resource_version = serializers.CharField(allow_blank=True)
    diff = serializers.CharField(allow_blank=True, help_text="baseline to live")
    unpublished = serializers.CharField(
        allow_blank=True,
        help_text="the portal's edits not yet published (baseline to portal): "
        "what adopting the live config discards",
    )


class DriftConflictDetailSerializer(serializers.Serializer):
    baseline_version = serializers.IntegerField(
        allow_null=True, help_text="null: the portal owns no version (node config)"
    )
    live_resource_version = serializers.CharField(allow_blank=True)
    live_exists = serializers.BooleanField(
        help_text="false: the ConfigMap does not exist (node config)"
    )
    last_seen = serializers.CharField(help_text="the portal's baseline text")
    live = serializers.CharField(help_text="the ConfigMap's text now")
    proposed = serializers.CharField(help_text="what the portal wanted to write")
    diff_live = serializers.CharField(help_text="last seen to live")
    diff_proposed = serializers.CharField(help_text="last seen to proposed")


class PublishConflictSerializer(serializers.Serializer):
    code = serializers.CharField(help_text="drift or no_baseline")
    message = serializers.CharField()
    detail = DriftConflictDetailSerializer(required=False)


class PublishingErrorSerializer(serializers.Serializer):
    code = serializers.CharField()
    message = serializers.CharField()
    errors = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()), required=False
    )
    detail = serializers.JSONField(required=False)


class RestartPodSerializer(serializers.Serializer):
    name = serializers.CharField()
    node = serializers.CharField(allow_blank=True)
    started_at = serializers.DateTimeField(allow_null=True)
    ready = serializers.BooleanField()
    terminating = serializers.BooleanField()
    stale = serializers.BooleanField(help_text="started before the config changed")


class ComponentRestartSerializer(serializers.Serializer):
    component = serializers.CharField()
    kind = serializers.CharField()
    namespace = serializers.CharField()
    restart_state = serializers.ChoiceField(
        choices=["restart_pending", "rolling", "in_effect", "missing", "unknown"]
    )
    message = serializers.CharField()
    restarted_at = serializers.DateTimeField(allow_null=True)
    loaded_version = serializers.IntegerField(
        allow_null=True,
        help_text="the device-config version its oldest pod read when it started",
    )
    pods = RestartPodSerializer(many=True)


class RestartStatesSerializer(serializers.Serializer):
    cluster = serializers.CharField()
    config_version = serializers.IntegerField(
        allow_null=True, help_text="the version whose change the pods must pick up"
    )
    config_changed_at = serializers.DateTimeField(allow_null=True)
    components = ComponentRestartSerializer(many=True)
    in_effect = ConfigInEffectSerializer(
        help_text="the version requests are placed by (the scheduler's), as last read"
    )


class WhatIfTemplateSerializer(serializers.Serializer):
    name = serializers.CharField()
    memory = serializers.IntegerField()
    ai_core = serializers.IntegerField(allow_null=True)
    ai_cpu = serializers.IntegerField(allow_null=True)
    fit_alone = serializers.IntegerField(help_text="slices of it alone on one chip")
    template_change = serializers.ChoiceField(choices=["added", "resized", "unchanged"])
    memory_before = serializers.IntegerField(allow_null=True)


class WhatIfChipTypeSerializer(serializers.Serializer):
    common_word = serializers.CharField()
    chip_name = serializers.CharField()
    chip_type_change = serializers.ChoiceField(
        choices=["added", "changed", "renamed", "unchanged"]
    )
    renamed_from = serializers.CharField(allow_null=True)
    memory_allocatable = serializers.IntegerField()
    slots_per_chip = serializers.IntegerField()
    slots_per_chip_before = serializers.IntegerField(allow_null=True)
    templates = WhatIfTemplateSerializer(many=True)
    removed_templates = serializers.ListField(child=serializers.CharField())
    overcommit = serializers.ListField(child=TranslatedCharField())
    warnings = serializers.ListField(child=TranslatedCharField())


class WhatIfRemovedChipTypeSerializer(serializers.Serializer):
    common_word = serializers.CharField()
    renamed_to = serializers.CharField(allow_null=True)


class WhatIfSliceSerializer(serializers.Serializer):
    namespace = serializers.CharField()
    pod_name = serializers.CharField()
    node_name = serializers.CharField(allow_blank=True)
    common_word = serializers.CharField()
    chip_uuid = serializers.CharField()
    chip_index = serializers.IntegerField(allow_null=True)
    template = serializers.CharField(allow_blank=True)
    memory = serializers.IntegerField()
    reason = serializers.CharField()


class WhatIfChipSerializer(serializers.Serializer):
    node_name = serializers.CharField()
    common_word = serializers.CharField()
    chip_index = serializers.IntegerField()
    slots_used = serializers.IntegerField()
    slots_per_chip = serializers.IntegerField()
    memory_used = serializers.IntegerField()
    memory_allocatable = serializers.IntegerField()


class WhatIfSerializer(serializers.Serializer):
    cluster = serializers.CharField()
    baseline_version = serializers.IntegerField(allow_null=True)
    valid = serializers.BooleanField()
    errors = serializers.ListField(child=TranslatedCharField())
    chip_types = WhatIfChipTypeSerializer(many=True)
    removed_chip_types = WhatIfRemovedChipTypeSerializer(many=True)
    invalid_slices = WhatIfSliceSerializer(
        many=True, help_text="running slices this publish would break"
    )
    already_invalid_slices = WhatIfSliceSerializer(
        many=True,
        help_text="running slices the published config already fails the same "
        "way (not this publish's doing; publishing needs no confirmation for them)",
    )
    overbooked_chips = WhatIfChipSerializer(many=True)


class HealthCheckSerializer(serializers.Serializer):
    id = serializers.CharField()
    check_status = serializers.ChoiceField(choices=["ok", "warn", "fail"])
    message = serializers.CharField()
    fix = serializers.CharField(allow_blank=True)


class ClusterHealthSerializer(serializers.Serializer):
    cluster = serializers.CharField()
    check_status = serializers.ChoiceField(
        choices=["ok", "warn", "fail"], help_text="the worst of the checks"
    )
    checks = HealthCheckSerializer(many=True)
