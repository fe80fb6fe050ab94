"""Serializers of the scheduling API (input and output kept apart)."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from apps.common.redaction import pod_template_redacted, workload_redacted
from apps.inventory.models import Cluster
from apps.inventory.scheduler import scheduler_in_effect
from apps.scheduling.api.fields import CaveatField, ProgressField, ReasonField
from apps.scheduling.api.job import RequestResultSerializer
from apps.scheduling.api.workload import WorkloadSerializer, WorkloadShownField
from apps.scheduling.choices import PodSecurityLevel, RequestState
from apps.scheduling.models import (
    PreemptionProposal,
    Queue,
    Request,
    queue_name_validator,
)

MAX_INT32 = 2**31 - 1


# Booked but not bound: the chip is known only where the scheduler honours pins.
UNBOUND_STATES = (RequestState.RESERVED, RequestState.ADMITTED)


class RequestCreateSerializer(serializers.Serializer):
    cluster = serializers.CharField(max_length=63, help_text="cluster id or name")
    namespace = serializers.CharField(max_length=63)
    chip_type = serializers.CharField(
        max_length=63, help_text="the chip type's commonWord, e.g. Ascend310P"
    )
    memory = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=0,
        max_value=MAX_INT32,
        help_text="MB; HAMi's template rule picks the smallest template that fits",
    )
    template = serializers.CharField(
        required=False, allow_blank=True, default="", max_length=63
    )
    whole_card = serializers.BooleanField(required=False, default=False)
    priority = serializers.CharField(
        required=False,
        allow_null=True,
        allow_blank=True,
        max_length=253,
        help_text="a PriorityClass name of the cluster; default: its global default",
    )
    queue = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=63,
        help_text="default: `default` (created on first use)",
    )
    workload = WorkloadSerializer(required=False, allow_null=True)
    pod_template = serializers.JSONField(
        required=False,
        allow_null=True,
        help_text="a PodTemplateSpec {metadata, spec}, instead of workload",
    )
    time_limit_seconds = serializers.IntegerField(
        required=False, allow_null=True, min_value=1, max_value=MAX_INT32
    )
    idempotency_key = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=128,
        help_text="the same key (per user) returns the same request (200)",
    )


class PodFailureSerializer(serializers.Serializer):
    """One pod of the request that failed before it ran (apps.scheduling.retries)."""

    pod = serializers.CharField()
    attempt = serializers.IntegerField(help_text="1 for the first pod")
    chip_uuid = serializers.CharField(allow_blank=True)
    node = serializers.CharField(allow_blank=True)
    reason = serializers.CharField()
    at = serializers.DateTimeField()


class RequestSerializer(serializers.ModelSerializer):
    workload = WorkloadShownField(read_only=True)
    cluster_name = serializers.CharField(source="cluster.name", read_only=True)
    chip_type = serializers.CharField(source="common_word", read_only=True)
    whole_card = serializers.BooleanField(read_only=True)
    priority = serializers.CharField(source="priority_class", read_only=True)
    priority_value = serializers.IntegerField(source="priority", read_only=True)
    queue = serializers.CharField(source="queue.name", read_only=True)
    submitted_by = serializers.SerializerMethodField()
    reason = ReasonField()
    chip_uuid = serializers.CharField(
        read_only=True,
        allow_null=True,
        help_text=(
            "the chip it runs on; before the bind only under a scheduler that "
            "honours the portal's pin (HAMi's), null under Volcano"
        ),
    )
    position = serializers.SerializerMethodField(
        help_text="1-based rank among the queue's pending requests (priority, then age)"
    )
    on_unhealthy_chip = serializers.SerializerMethodField(
        help_text="it runs on a chip its device plugin reports unhealthy (the "
        "plugin hands out a sick chip, and Volcano checks no health): move it"
    )
    pod_failures = PodFailureSerializer(
        many=True,
        read_only=True,
        help_text="its pods that failed before they ran, oldest first; after "
        "REQUEST_MAX_POD_FAILURES the request fails",
    )
    result = RequestResultSerializer(read_only=True, allow_null=True)

    class Meta:
        model = Request
        fields = [
            "id",
            "cluster",
            "cluster_name",
            "namespace",
            "chip_type",
            "memory",
            "template",
            "whole_card",
            "priority",
            "priority_value",
            "queue",
            "workload",
            "pod_template",
            "time_limit_seconds",
            "idempotency_key",
            "submitted_by",
            "state",
            "reason",
            "position",
            "allow_preemption",
            "attempts",
            "pod_failures",
            "chip",
            "chip_uuid",
            "on_unhealthy_chip",
            "node",
            "template_booked",
            "memory_booked",
            "pod_name",
            "created_at",
            "updated_at",
            "reserved_at",
            "admitted_at",
            "running_at",
            "finished_at",
            "expires_at",
            "exit_code",
            "result",
        ]
        read_only_fields = fields

    def to_representation(self, instance: Request) -> dict[str, Any]:
        data = super().to_representation(instance)
        # Env values are secrets: the pod gets them, answers never show them.
        data["workload"] = workload_redacted(data.get("workload"))
        data["pod_template"] = pod_template_redacted(data.get("pod_template"))
        if instance.state in UNBOUND_STATES and not self._pins_honoured(instance):
            # Volcano picks the chip of the node itself: before the bind the
            # chip the portal reserved is a plan, not where the pod will run.
            data["chip"] = data["chip_uuid"] = None
        return data

    def _pins_honoured(self, instance: Request) -> bool:
        known = self.context.setdefault("_pins_honoured", {})
        if instance.cluster_id not in known:
            known[instance.cluster_id] = scheduler_in_effect(
                instance.cluster
            ).honours_pins
        return known[instance.cluster_id]

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_submitted_by(self, obj: Request) -> str | None:
        return obj.submitted_by.get_username() if obj.submitted_by else None

    @extend_schema_field(serializers.IntegerField(allow_null=True))
    def get_position(self, obj: Request) -> int | None:
        return (self.context.get("positions") or {}).get(obj.pk)

    @extend_schema_field(serializers.BooleanField())
    def get_on_unhealthy_chip(self, obj: Request) -> bool:
        return (
            obj.state == RequestState.RUNNING
            and obj.chip is not None
            and (not obj.chip.healthy)
        )


class QueueQuotaSerializer(serializers.Serializer):
    chip_type = serializers.CharField(source="common_word", max_length=63)
    memory_limit = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=0,
        max_value=MAX_INT32,
        help_text="MB; empty is unlimited",
    )
    slots_limit = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=0,
        max_value=MAX_INT32,
        help_text="vNPUs; empty is unlimited",
    )


class QueueUsageSerializer(serializers.Serializer):
    chip_type = serializers.CharField()
    memory_used = serializers.IntegerField(help_text="MB held (running and reserved)")
    slots_used = serializers.IntegerField()
    pending = serializers.IntegerField()
    running = serializers.IntegerField()


class VolcanoQueueSerializer(serializers.Serializer):
    state = serializers.CharField(
        help_text=(
            "the Volcano Queue's status.state (Open, Closed, Closing, Unknown), "
            "Missing, or empty when not known (see reason)"
        )
    )
    managed = serializers.BooleanField(
        help_text="created by the portal (label vnpu-portal.io/managed), kept in step"
    )
    capability = serializers.DictField(
        child=serializers.CharField(), help_text="its spec.capability"
    )
    reason = serializers.CharField(
        help_text="why its requests wait, or why the state is not known; empty: Open"
    )


def _namespaces_field(**kwargs: Any) -> serializers.ListField:
    return serializers.ListField(
        child=serializers.CharField(max_length=63),
        max_length=256,
        help_text=(
            "namespaces its requests' pods may run in; empty: only default "
            "(a kube-* namespace only when listed)"
        ),
        **kwargs,
    )


def _service_accounts_field(**kwargs: Any) -> serializers.ListField:
    return serializers.ListField(
        child=serializers.CharField(max_length=253),
        max_length=256,
        help_text="ServiceAccounts its requests' pods may use; empty: only default",
        **kwargs,
    )


def _secrets_field(**kwargs: Any) -> serializers.ListField:
    return serializers.ListField(
        child=serializers.CharField(max_length=253),
        max_length=256,
        help_text=(
            "Secrets its requests' pods may reference (env, envFrom, volumes, "
            "image pull secrets); empty: none"
        ),
        **kwargs,
    )


def _config_maps_field(**kwargs: Any) -> serializers.ListField:
    return serializers.ListField(
        child=serializers.CharField(max_length=253),
        max_length=256,
        help_text=(
            "ConfigMaps its requests' pods may reference (env, envFrom, volumes); "
            "empty: none"
        ),
        **kwargs,
    )


def _pod_security_field(**kwargs: Any) -> serializers.ChoiceField:
    return serializers.ChoiceField(
        choices=PodSecurityLevel.choices,
        help_text=(
            "Pod Security Standards level its requests' pods must meet "
            "(Kubernetes semantics)"
        ),
        **kwargs,
    )


class RelatedNamesField(serializers.ListField):
    """Names in, names out, of a many-to-many (users by username, groups by name)."""

    def __init__(self, *, name_of: str, **kwargs: Any) -> None:
        self.name_of = name_of
        super().__init__(child=serializers.CharField(max_length=150), **kwargs)

    def to_representation(self, data: Any) -> list[str]:
        rows = data.all() if hasattr(data, "all") else data
        return sorted(str(getattr(row, self.name_of, row)) for row in rows)


class QueueAccessFields(serializers.Serializer):
    """Who may submit to a queue and with which PriorityClass (``apps.scheduling.access``)."""

    open_to_all = serializers.BooleanField(
        required=False,
        help_text="every operator and CI account may submit to it, not only members "
        "(admins always may)",
    )
    members = RelatedNamesField(
        name_of="username",
        required=False,
        max_length=1000,
        help_text="usernames that may submit to it",
    )
    member_groups = RelatedNamesField(
        name_of="name",
        required=False,
        max_length=1000,
        help_text="groups (e.g. from the identity provider) whose users may submit to it",
    )
    max_priority = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=-MAX_INT32 - 1,
        max_value=1_000_000_000,
        help_text="the highest PriorityClass value its requests may take; null: "
        "1000000000, the highest a user-defined class may have",
    )
    system_priority_classes = serializers.ListField(
        child=serializers.RegexField(r"^system-[a-z0-9.-]{1,240}$"),
        required=False,
        max_length=16,
        help_text="system-* PriorityClasses its requests may take; empty: none",
    )


class ClusterRefField(serializers.PrimaryKeyRelatedField):
    """A cluster by id or by name (the id in answers)."""

    def to_internal_value(self, data: Any) -> Cluster:
        if isinstance(data, str) and not data.isdigit():
            found = Cluster.objects.filter(name=data).first()
            if found is None:
                self.fail("does_not_exist", pk_value=data)
            return found
        return super().to_internal_value(data)


class QueueSerializer(QueueAccessFields, serializers.ModelSerializer):
    cluster = ClusterRefField(
        queryset=Cluster.objects.all(),
        required=False,
        help_text="cluster id or name; may be left out while the portal has one cluster",
    )
    name = serializers.CharField(max_length=63, validators=[queue_name_validator])
    quotas = QueueQuotaSerializer(many=True, required=False)
    allowed_namespaces = _namespaces_field(required=False)
    pod_security = _pod_security_field(required=False)
    allowed_service_accounts = _service_accounts_field(required=False)
    allowed_secrets = _secrets_field(required=False)
    allowed_config_maps = _config_maps_field(required=False)
    usage = serializers.SerializerMethodField()
    volcano = serializers.SerializerMethodField()

    class Meta:
        model = Queue
        fields = [
            "id",
            "cluster",
            "name",
            "description",
            "quotas",
            "allowed_namespaces",
            "pod_security",
            "allowed_service_accounts",
            "allowed_secrets",
            "allowed_config_maps",
            "open_to_all",
            "members",
            "member_groups",
            "max_priority",
            "system_priority_classes",
            "usage",
            "volcano",
            "created_at",
            "updated_at",
        ]
        read_only_fields = ["created_at", "updated_at"]
        # Uniqueness is the service's check (400 naming `name`).
        validators: list[Any] = []

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if "cluster" not in attrs:
            # Creating a queue by name alone: fine while there is no doubt
            # which cluster is meant.
            clusters = list(Cluster.objects.order_by("pk")[:2])
            if len(clusters) != 1:
                raise serializers.ValidationError(
                    {"cluster": [_("required: give the cluster's id or name")]}
                )
            attrs["cluster"] = clusters[0]
        return attrs

    @extend_schema_field(QueueUsageSerializer(many=True))
    def get_usage(self, obj: Queue) -> list[dict[str, Any]]:
        return (self.context.get("usage") or {}).get(obj.pk, [])

    @extend_schema_field(VolcanoQueueSerializer(allow_null=True))
    def get_volcano(self, obj: Queue) -> dict[str, Any] | None:
        return (self.context.get("volcano") or {}).get(obj.pk)


class QueueUpdateSerializer(QueueAccessFields):
    description = serializers.CharField(
        required=False, allow_blank=True, max_length=200
    )
    quotas = QueueQuotaSerializer(
        many=True, required=False, help_text="replaces every quota of the queue"
    )
    allowed_namespaces = _namespaces_field(required=False)
    pod_security = _pod_security_field(required=False)
    allowed_service_accounts = _service_accounts_field(required=False)
    allowed_secrets = _secrets_field(required=False)
    allowed_config_maps = _config_maps_field(required=False)


class EvictionProgressSerializer(serializers.Serializer):
    """How the eviction of one pod goes (a preemption's victim, a drain's pod)."""

    evicted = serializers.BooleanField(required=False)
    evicted_at = serializers.CharField(required=False)
    blocked = serializers.CharField(
        required=False, help_text="why the Eviction API refused (PDB), when it did"
    )
    last_error = serializers.CharField(required=False)


class VictimSerializer(EvictionProgressSerializer):
    namespace = serializers.CharField()
    pod = serializers.CharField()
    slice_id = serializers.IntegerField(required=False)
    priority = serializers.IntegerField()
    priority_class = serializers.CharField(required=False)
    started_at = serializers.CharField(required=False, allow_null=True)
    lost_seconds = serializers.FloatField(help_text="running time it loses")
    template = serializers.CharField(required=False)
    memory = serializers.IntegerField(required=False)
    queue = serializers.CharField(required=False, help_text="portal queue, if any")
    request = serializers.IntegerField(
        required=False, allow_null=True, help_text="portal request, if any"
    )


class PreemptionProposalSerializer(serializers.ModelSerializer):
    progress = ProgressField()
    caveat = CaveatField()
    request_queue = serializers.CharField(source="request.queue.name", read_only=True)
    request_namespace = serializers.CharField(
        source="request.namespace", read_only=True
    )
    request_priority = serializers.IntegerField(
        source="request.priority", read_only=True
    )
    request_priority_class = serializers.CharField(
        source="request.priority_class", read_only=True
    )
    request_state = serializers.CharField(source="request.state", read_only=True)
    victims = VictimSerializer(many=True, read_only=True)
    decided_by = serializers.SerializerMethodField()
    crosses_queues = serializers.SerializerMethodField(
        help_text="the queues of victims outside the request's queue (empty: none)"
    )

    class Meta:
        model = PreemptionProposal
        fields = [
            "id",
            "cluster",
            "request",
            "request_queue",
            "request_namespace",
            "request_priority",
            "request_priority_class",
            "request_state",
            "chip",
            "chip_uuid",
            "node",
            "template",
            "memory",
            "aicore",
            "aicpu",
            "victims",
            "max_victim_priority",
            "lost_seconds",
            "crosses_queues",
            "caveat",
            "state",
            "reason",
            "progress",
            "auto_approved",
            "decided_by",
            "decided_at",
            "next_attempt_at",
            "created_at",
            "updated_at",
        ]
        read_only_fields = fields

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_crosses_queues(self, obj: PreemptionProposal) -> list[str]:
        # Volcano's own preempt stays inside a queue; evicting across queues
        # is the portal's doing, and the admin approving should see it.
        own = obj.request.queue.name
        return sorted({v.get("queue") or "default" for v in obj.victims} - {own})

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_decided_by(self, obj: PreemptionProposal) -> str | None:
        return obj.decided_by.get_username() if obj.decided_by else None


class DecisionSerializer(serializers.Serializer):
    reason = serializers.CharField(
        max_length=2000, help_text="why; kept with the decision and in the audit log"
    )
