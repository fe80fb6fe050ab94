"""The audit log, read-only."""

import django_filters
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, viewsets

from apps.audit.models import AuditEvent
from apps.audit.selectors import audit_event_queryset
from apps.common.filters import IdFilter, UtcDateTimeFilter
from apps.common.redaction import payload_redacted


class AuditEventSerializer(serializers.ModelSerializer):
    class Meta:
        model = AuditEvent
        fields = [
            "id",
            "created_at",
            "cluster",
            "actor_name",
            "action",
            "object_type",
            "object_id",
            "object_repr",
            "reason",
            "before",
            "after",
        ]

    def to_representation(self, instance: AuditEvent) -> dict:
        data = super().to_representation(instance)
        # New rows are stored redacted; rows written before that are redacted here.
        data["before"] = payload_redacted(data.get("before"))
        data["after"] = payload_redacted(data.get("after"))
        return data


class AuditEventFilterSet(django_filters.FilterSet):
    cluster = IdFilter(field_name="cluster_id")
    action = django_filters.CharFilter(lookup_expr="startswith")
    actor = django_filters.CharFilter(field_name="actor_name")
    since = UtcDateTimeFilter(field_name="created_at", lookup_expr="gte")

    class Meta:
        model = AuditEvent
        fields = ["object_type", "object_id"]


@extend_schema(tags=["audit"])
class AuditEventViewSet(viewsets.ReadOnlyModelViewSet):
    """Every change made through the portal, newest first, with before and after.

    A token limited to queues sees no event about another queue's request.
    """

    queryset = AuditEvent.objects.all()  # for the schema; get_queryset scopes it
    serializer_class = AuditEventSerializer
    filterset_class = AuditEventFilterSet

    def get_queryset(self):
        return audit_event_queryset(token=self.request.auth)
