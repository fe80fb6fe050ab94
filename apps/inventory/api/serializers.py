"""Serializers of the inventory API (input and output kept apart where they differ)."""

from __future__ import annotations

from django.utils import timezone
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from apps.inventory import selectors
from apps.inventory.chipstate import chip_state
from apps.inventory.choices import (
    ChipState,
    ConnectionKind,
    SchedulerSetting,
)
from apps.inventory.hami.catalog import allowed_template_names, chip_family
from apps.inventory.hami.validation import slots_per_chip
from apps.inventory.models import (
    Chip,
    ChipType,
    Cluster,
    Node,
    PendingPod,
    PriorityClass,
    Slice,
    SyncCursor,
    Template,
)
from apps.inventory.nodeconfig.proof import isolation_overdue
from apps.inventory.room import fitting_templates
from apps.inventory.scheduler import scheduler_in_effect


class SchedulerInEffectSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=["volcano", "hami"])
    scheduler_name = serializers.CharField(help_text="the pods' schedulerName")
    honours_pins = serializers.BooleanField(
        help_text="the chip the portal reserves is the chip the pod gets"
    )
    why = serializers.CharField(help_text="set by an admin, or what sync saw")


class ClusterSerializer(serializers.ModelSerializer):
    token = serializers.CharField(
        write_only=True,
        required=False,
        allow_blank=True,
        trim_whitespace=True,
        help_text="Bearer token for the API server; stored encrypted, never returned. Empty removes it.",
    )
    has_token = serializers.BooleanField(read_only=True)
    kubeconfig = serializers.CharField(
        write_only=True,
        required=False,
        allow_blank=True,
        trim_whitespace=False,
        max_length=1_000_000,
        help_text=(
            "The kubeconfig's content (YAML); stored encrypted, never returned. "
            "Empty removes it. Files it names must be inside KUBECONFIG_DIR; "
            "exec plugins are refused unless KUBECONFIG_ALLOW_EXEC."
        ),
    )
    has_kubeconfig = serializers.BooleanField(read_only=True)
    kubeconfig_path = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=500,
        help_text="a kubeconfig file inside the server's KUBECONFIG_DIR",
    )
    connection = serializers.ChoiceField(
        choices=ConnectionKind.choices, default=ConnectionKind.NONE
    )
    scheduler = serializers.ChoiceField(
        choices=SchedulerSetting.choices,
        default=SchedulerSetting.AUTO,
        help_text=(
            "where the portal's pods go: volcano, hami (HAMi's scheduler), or "
            "auto (what sync sees)"
        ),
    )
    scheduler_in_effect = serializers.SerializerMethodField()

    class Meta:
        model = Cluster
        fields = [
            "id",
            "name",
            "description",
            "connection",
            "kubeconfig",
            "has_kubeconfig",
            "kubeconfig_path",
            "kubeconfig_context",
            "api_url",
            "token",
            "has_token",
            "ca_cert",
            "verify_tls",
            "device_config_namespace",
            "device_config_name",
            "scheduler",
            "scheduler_in_effect",
            "sync_state",
            "last_sync_at",
            "last_sync_error",
            "sync_lag_seconds",
            "created_at",
            "updated_at",
        ]
        read_only_fields = [
            "sync_state",
            "last_sync_at",
            "last_sync_error",
            "sync_lag_seconds",
            "created_at",
            "updated_at",
        ]

    @extend_schema_field(SchedulerInEffectSerializer)
    def get_scheduler_in_effect(self, obj: Cluster) -> dict[str, object]:
        return scheduler_in_effect(obj).as_dict()


# Published keys are kept unless removed explicitly: the base document may hold
# keys the database never saw, so a key merely left out is not taken as removed.
EXTRA_HELP = (
    "device-config keys the portal does not manage (memoryFactor, ...); the "
    "object replaces the stored one, and a key set to null is removed from "
    "the published config"
)


class TemplateSerializer(serializers.ModelSerializer):
    cluster = serializers.IntegerField(source="chip_type.cluster_id", read_only=True)
    common_word = serializers.CharField(source="chip_type.common_word", read_only=True)
    memory = serializers.IntegerField(help_text="MB")
    ai_core = serializers.IntegerField(required=False, allow_null=True)
    ai_cpu = serializers.IntegerField(required=False, allow_null=True)
    # Keys of the device config the portal does not manage: always an object
    # (the model's JSONField alone would take a list or a string).
    extra = serializers.DictField(required=False, help_text=EXTRA_HELP)

    class Meta:
        model = Template
        fields = [
            "id",
            "chip_type",
            "cluster",
            "common_word",
            "name",
            "memory",
            "ai_core",
            "ai_cpu",
            "extra",
        ]
        validators: list = []


class TemplateUpdateSerializer(TemplateSerializer):
    class Meta(TemplateSerializer.Meta):
        read_only_fields = ["chip_type"]


class NestedTemplateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=63)
    memory = serializers.IntegerField(help_text="MB")
    ai_core = serializers.IntegerField(required=False, allow_null=True)
    ai_cpu = serializers.IntegerField(required=False, allow_null=True)
    extra = serializers.DictField(required=False, help_text=EXTRA_HELP)


class ChipTypeSerializer(serializers.ModelSerializer):
    templates = NestedTemplateSerializer(many=True, required=False)
    memory_allocatable = serializers.IntegerField(help_text="MB")
    memory_capacity = serializers.IntegerField(help_text="MB")
    ai_core = serializers.IntegerField(required=False, allow_null=True)
    ai_cpu = serializers.IntegerField(required=False, allow_null=True)
    slots_per_chip = serializers.SerializerMethodField()
    allowed_template_names = serializers.SerializerMethodField()
    extra = serializers.DictField(  # an object, as on templates
        required=False, help_text=EXTRA_HELP
    )

    class Meta:
        model = ChipType
        fields = [
            "id",
            "cluster",
            "common_word",
            "chip_name",
            "resource_name",
            "resource_memory_name",
            "resource_core_name",
            "memory_allocatable",
            "memory_capacity",
            "ai_core",
            "ai_cpu",
            "extra",
            "templates",
            "slots_per_chip",
            "allowed_template_names",
        ]
        # Uniqueness is a device-config rule: the validator reports it on the field.
        validators: list = []

    def get_allowed_template_names(self, obj: ChipType) -> list[str]:
        """Names ascend-docker-runtime and the chip family accept (for the editor)."""
        return sorted(
            allowed_template_names(chip_family(obj.chip_name, obj.common_word))
        )

    def get_slots_per_chip(self, obj: ChipType) -> int:
        return slots_per_chip(obj.memory_allocatable, list(obj.templates.all()))


class ChipTypeUpdateSerializer(ChipTypeSerializer):
    templates = NestedTemplateSerializer(many=True, read_only=True)

    class Meta(ChipTypeSerializer.Meta):
        read_only_fields = ["cluster"]


class NodeSerializer(serializers.ModelSerializer):
    chips = serializers.IntegerField(source="chip_count", read_only=True)

    class Meta:
        model = Node
        fields = [
            "id",
            "cluster",
            "name",
            "labels",
            "ready",
            "ascend_enabled",
            "hami_vnpu_core",
            "unschedulable",
            "chips",
            "synced_at",
        ]


class ChipSerializer(serializers.ModelSerializer):
    node = serializers.CharField(source="node.name", read_only=True)
    fits = serializers.SerializerMethodField(
        help_text="templates of which one more slice fits (slot, memory, AICore, "
        "AICPU; healthy and uncordoned chips only), smallest first"
    )
    largest_template = serializers.SerializerMethodField(
        help_text="the largest template that still fits (null: none)"
    )
    state = serializers.SerializerMethodField(
        help_text="what the chip is doing, in one word (apps.inventory.chipstate): "
        "draining while a drain has slices left on it, drained (still cordoned) "
        "once they are gone, until an uncordon"
    )
    drain = serializers.IntegerField(
        source="active_drain",
        read_only=True,
        allow_null=True,
        help_text="the open drain that holds the chip (/api/drains/<id>/), or null",
    )
    running_while_unhealthy = serializers.SerializerMethodField(
        help_text="vNPUs that still run on this chip although its device plugin "
        "reports it unhealthy (0 on a healthy chip): the device plugin hands "
        "out a sick chip, so a pod Volcano bound to it runs there; move them"
    )

    @extend_schema_field(serializers.ChoiceField(choices=ChipState.choices))
    def get_state(self, chip: Chip) -> str:
        return chip_state(chip).value

    isolation_overdue = serializers.SerializerMethodField(
        help_text="an isolation or restore whose proof has not come within "
        "ISOLATION_PROOF_TIMEOUT_SECONDS; isolation_seen says what the portal saw"
    )

    @extend_schema_field(serializers.BooleanField())
    def get_isolation_overdue(self, chip: Chip) -> bool:
        return isolation_overdue(chip, timezone.now())

    @extend_schema_field(serializers.IntegerField())
    def get_running_while_unhealthy(self, chip: Chip) -> int:
        if chip.healthy:
            return 0
        # One query for the page's unhealthy chips, not one per chip.
        counts = self.context.get("_on_unhealthy")
        if counts is None:
            counts = self.context["_on_unhealthy"] = (
                selectors.slices_on_unhealthy_chips_count(chip.cluster_id)
            )
        return counts.get(chip.pk, 0)

    def _fits(self, chip: Chip) -> list[str]:
        # Templates are read once per cluster for the whole page, not per chip.
        by_cluster = self.context.setdefault("_templates", {})
        if chip.cluster_id not in by_cluster:
            by_cluster[chip.cluster_id] = selectors.templates_by_type([chip.cluster_id])
        templates = by_cluster[chip.cluster_id].get(
            (chip.cluster_id, chip.common_word), []
        )
        load = selectors.chip_loads([chip])[0]
        return [t.name for t in fitting_templates(load, templates)]

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_fits(self, chip: Chip) -> list[str]:
        return self._fits(chip)

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_largest_template(self, chip: Chip) -> str | None:
        fits = self._fits(chip)
        return fits[-1] if fits else None

    class Meta:
        model = Chip
        fields = [
            "id",
            "cluster",
            "node",
            "common_word",
            "uuid",
            "index",
            "healthy",
            "cordoned",
            "state",
            "drain",
            "network_id",
            "handshake",
            "handshake_at",
            "slots",
            "slots_used",
            "memory",
            "memory_used",
            "aicore",
            "aicore_used",
            "aicpu",
            "aicpu_used",
            "fits",
            "largest_template",
            "running_while_unhealthy",
            "registered",
            "isolation",
            "isolation_reason",
            "isolation_by",
            "isolation_since",
            "isolation_seen",
            "isolation_overdue",
        ]


class ChipActionSerializer(serializers.Serializer):
    """Isolate or restore a chip: why (kept in the audit log)."""

    reason = serializers.CharField(
        max_length=1000, help_text="why, as the actor gives it (required)"
    )


class SliceSerializer(serializers.ModelSerializer):
    chip_index = serializers.IntegerField(
        source="chip.index",
        read_only=True,
        default=None,
        allow_null=True,
        help_text="null until the slice's chip is known",
    )
    on_unhealthy_chip = serializers.SerializerMethodField(
        help_text="its chip is reported unhealthy (it runs there all the same)"
    )

    @extend_schema_field(serializers.BooleanField())
    def get_on_unhealthy_chip(self, obj: Slice) -> bool:
        return obj.chip is not None and not obj.chip.healthy

    class Meta:
        model = Slice
        fields = [
            "id",
            "cluster",
            "chip",
            "chip_uuid",
            "chip_index",
            "on_unhealthy_chip",
            "common_word",
            "namespace",
            "pod_name",
            "pod_uid",
            "container_index",
            "node_name",
            "template",
            "memory",
            "aicore",
            "aicpu",
            "priority",
            "priority_class",
            "phase",
            "started_at",
        ]


class PendingPodSerializer(serializers.ModelSerializer):
    class Meta:
        model = PendingPod
        fields = [
            "id",
            "cluster",
            "namespace",
            "name",
            "common_word",
            "memory",
            "priority",
            "priority_class",
            "reason",
            "created_at",
        ]


class PriorityClassSerializer(serializers.ModelSerializer):
    class Meta:
        model = PriorityClass
        fields = [
            "id",
            "cluster",
            "name",
            "value",
            "global_default",
            "preemption_policy",
            "description",
        ]


class SkippedObjectSerializer(serializers.Serializer):
    kind = serializers.CharField()
    namespace = serializers.CharField(allow_blank=True)
    name = serializers.CharField()
    resource_version = serializers.CharField(allow_blank=True)
    reason = serializers.CharField()
    at = serializers.DateTimeField()


class SyncCursorSerializer(serializers.ModelSerializer):
    skipped_objects = SkippedObjectSerializer(many=True, read_only=True)

    class Meta:
        model = SyncCursor
        fields = [
            "resource",
            "resource_version",
            "last_list_at",
            "last_event_at",
            "last_success_at",
            "last_error",
            "last_error_at",
            "relists",
            "restarts",
            "crashes",
            "events",
            "skipped_objects",
            "served",
        ]
