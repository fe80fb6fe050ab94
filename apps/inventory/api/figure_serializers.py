"""Serializers of the inventory's figures: fit, summaries, usage history, room,
fragmentation and a chip's history (read-only answers and their queries)."""

from __future__ import annotations

from rest_framework import serializers

from apps.common.translated import TranslatedCharField
from apps.inventory.choices import (
    SyncState,
)
from apps.inventory.hami.template_rule import Scheduler
from apps.inventory.models import (
    ChipEvent,
    UsageSample,
)


class FitQuerySerializer(serializers.Serializer):
    chip_type = serializers.CharField(help_text="commonWord, e.g. Ascend310P")
    memory = serializers.IntegerField(
        required=False, allow_null=True, help_text="MB; omitted means a whole card"
    )
    scheduler = serializers.ChoiceField(
        choices=[s.value for s in Scheduler],
        default=Scheduler.HAMI.value,
        help_text="whose reading applies: they differ for 0 MB (Volcano: a whole "
        "card) and over memoryCapacity (Volcano: the smallest template, 0 MB booked)",
    )


class FitResultSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=["template", "whole_card", "invalid"])
    template = serializers.CharField(allow_null=True)
    memory = serializers.IntegerField()
    reason = TranslatedCharField()


class FitAnswerSerializer(FitResultSerializer):
    config_version = serializers.IntegerField(
        allow_null=True,
        help_text="the device-config version the answer is by: the one the "
        "scheduler loaded when it started",
    )
    published_version = serializers.IntegerField(
        allow_null=True, help_text="the newest version written to the ConfigMap"
    )
    after_restart = FitResultSerializer(
        allow_null=True,
        help_text="the published version's answer, when the scheduler still runs "
        "an older one and the answers differ",
    )


class ChipTypeSummarySerializer(serializers.Serializer):
    common_word = serializers.CharField()
    chips = serializers.IntegerField()
    healthy_chips = serializers.IntegerField()
    slices = serializers.IntegerField()
    memory_total = serializers.IntegerField()
    memory_used = serializers.IntegerField()
    memory_free = serializers.IntegerField()
    slots_total = serializers.IntegerField()
    slots_used = serializers.IntegerField()
    slots_free = serializers.IntegerField()
    aicore_total = serializers.IntegerField()
    aicore_used = serializers.IntegerField()
    aicpu_total = serializers.IntegerField()
    aicpu_used = serializers.IntegerField()


class ClusterSummarySerializer(serializers.Serializer):
    cluster = serializers.CharField()
    nodes = serializers.IntegerField()
    chips = serializers.IntegerField()
    slices = serializers.IntegerField()
    sync_state = serializers.ChoiceField(choices=SyncState.choices)
    last_sync_at = serializers.DateTimeField(allow_null=True)
    chip_types = ChipTypeSummarySerializer(many=True)


class ChipUsageSerializer(serializers.Serializer):
    cluster = serializers.CharField()
    columns = serializers.ListField(child=serializers.CharField())
    rows = serializers.ListField(
        child=serializers.ListField(),
        help_text="one array per chip, in the order of columns",
    )


class UsageSampleSerializer(serializers.ModelSerializer):
    class Meta:
        model = UsageSample
        fields = [
            "at",
            "common_word",
            "chips",
            "slices",
            "memory_total",
            "memory_used",
            "slots_total",
            "slots_used",
            "aicore_total",
            "aicore_used",
            "aicpu_total",
            "aicpu_used",
            "stranded_memory",
        ]


class UsageHistoryQuerySerializer(serializers.Serializer):
    hours = serializers.IntegerField(min_value=1, max_value=24 * 31, default=6)
    chip_type = serializers.CharField(required=False)


class TemplateRoomSerializer(serializers.Serializer):
    name = serializers.CharField()
    memory = serializers.IntegerField()
    ai_core = serializers.IntegerField(allow_null=True)
    ai_cpu = serializers.IntegerField(allow_null=True)
    chips_with_room = serializers.IntegerField(
        help_text="healthy, uncordoned chips where one more slice of it fits"
    )
    slices_that_fit = serializers.IntegerField(
        help_text="slices of this template that fit at once, over all chips"
    )
    stranded_memory = serializers.IntegerField(
        help_text="free MB left over once as many of these slices as fit are placed"
    )


class FragmentationSerializer(serializers.Serializer):
    common_word = serializers.CharField()
    chips = serializers.IntegerField()
    eligible_chips = serializers.IntegerField(help_text="healthy and not cordoned")
    free_memory = serializers.IntegerField(help_text="free MB on eligible chips")
    largest_template = serializers.CharField(
        allow_null=True, help_text="the largest template that still fits somewhere"
    )
    largest_template_memory = serializers.IntegerField(allow_null=True)
    templates = TemplateRoomSerializer(many=True, help_text="smallest first")
    stranded_memory = serializers.IntegerField(
        help_text="free MB on chips that cannot fit the smallest template"
    )
    stranded_chips = serializers.IntegerField()
    smallest_template_memory = serializers.IntegerField(allow_null=True)


class ChipEventSerializer(serializers.ModelSerializer):
    class Meta:
        model = ChipEvent
        fields = [
            "id",
            "chip_uuid",
            "kind",
            "namespace",
            "pod_name",
            "template",
            "memory",
            "priority",
            "at",
        ]
