"""The audit log, read-only."""

import django_filters
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, viewsets

from apps.audit.models import AuditEvent
from apps.common.filters import IdFilter, UtcDateTimeFilter


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
    """Every change made through the portal, newest first, with before and after."""

    queryset = AuditEvent.objects.all()
    serializer_class = AuditEventSerializer
    filterset_class = AuditEventFilterSet
