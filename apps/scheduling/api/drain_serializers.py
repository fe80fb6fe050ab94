"""Serializers of drains: the plan, the drain and its pods (read-only shapes).

Writes take ``DecisionSerializer`` (a ``reason``) as a preemption's decisions do.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from apps.inventory.choices import ChipState
from apps.scheduling.api.fields import ProgressField
from apps.scheduling.api.serializers import EvictionProgressSerializer
from apps.scheduling.models import Drain


class DrainBudgetSerializer(serializers.Serializer):
    name = serializers.CharField()
    disruptions_allowed = serializers.IntegerField(
        help_text="as the budget's status said when read; 0 holds the eviction back"
    )


class DrainPodSerializer(EvictionProgressSerializer):
    namespace = serializers.CharField()
    pod = serializers.CharField()
    node = serializers.CharField()
    chips = serializers.ListField(
        child=serializers.CharField(), help_text="UUIDs of its chips being drained"
    )
    templates = serializers.ListField(child=serializers.CharField())
    memory = serializers.IntegerField(help_text="MB it holds there")
    priority = serializers.IntegerField()
    priority_class = serializers.CharField(allow_blank=True)
    foreign = serializers.BooleanField(
        help_text="not the portal's: evicted only once an admin approves"
    )
    request = serializers.IntegerField(
        allow_null=True, help_text="the portal request it runs, re-queued"
    )
    request_queue = serializers.CharField(allow_null=True)
    pdbs = DrainBudgetSerializer(many=True, help_text="the budgets that cover it")
    outcome = serializers.CharField(help_text="what the drain does with it")
    approved = serializers.BooleanField(
        required=False, help_text="it may be evicted (foreign pods: once approved)"
    )
    requeued = serializers.BooleanField(
        required=False, help_text="its request went back to Pending"
    )


class DrainChipSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    uuid = serializers.CharField()
    index = serializers.IntegerField()
    common_word = serializers.CharField()
    state = serializers.ChoiceField(choices=ChipState.choices)


class DrainPlanSerializer(serializers.Serializer):
    cluster = serializers.IntegerField()
    scope = serializers.CharField()
    node = serializers.CharField()
    chips = DrainChipSerializer(many=True)
    drain = serializers.IntegerField(
        allow_null=True, help_text="the open drain that holds these chips, if any"
    )
    needs_approval = serializers.BooleanField(
        help_text="foreign pods are there: an admin must approve their eviction"
    )
    pods = DrainPodSerializer(many=True)


class DrainSerializer(serializers.ModelSerializer):
    chip_uuids = serializers.ListField(
        child=serializers.CharField(), read_only=True, help_text="the chips it covers"
    )
    victims = DrainPodSerializer(many=True, read_only=True)
    requested_by = serializers.SerializerMethodField()
    decided_by = serializers.SerializerMethodField()
    progress = ProgressField()

    class Meta:
        model = Drain
        fields = [
            "id",
            "cluster",
            "scope",
            "node",
            "chip",
            "chip_uuids",
            "victims",
            "state",
            "reason",
            "requested_by",
            "decided_by",
            "decided_at",
            "decision_reason",
            "progress",
            "next_attempt_at",
            "ended_at",
            "created_at",
            "updated_at",
        ]
        read_only_fields = fields

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_requested_by(self, obj: Drain) -> str | None:
        return obj.requested_by.get_username() if obj.requested_by else None

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_decided_by(self, obj: Drain) -> str | None:
        return obj.decided_by.get_username() if obj.decided_by else None
