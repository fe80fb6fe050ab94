"""FilterSets of the inventory API (NetBox-style: one per list endpoint)."""

import django_filters
from django.db.models import F, Q
from rest_framework.exceptions import ValidationError

from apps.common.filters import IdFilter
from apps.inventory.chipstate import chip_state_expression
from apps.inventory.choices import ChipState
from apps.inventory.models import (
    Chip,
    ChipType,
    DeviceConfigVersion,
    Node,
    Slice,
    Template,
)
from apps.inventory.selectors import chips_with_room_for


class ClusterScopedFilterSet(django_filters.FilterSet):
    cluster = IdFilter(field_name="cluster_id")
    cluster_name = django_filters.CharFilter(field_name="cluster__name")


class ChipTypeFilterSet(ClusterScopedFilterSet):
    class Meta:
        model = ChipType
        fields = ["common_word", "chip_name"]


class TemplateFilterSet(django_filters.FilterSet):
    cluster = IdFilter(field_name="chip_type__cluster_id")
    common_word = django_filters.CharFilter(field_name="chip_type__common_word")

    class Meta:
        model = Template
        fields = ["chip_type", "name"]


class NodeFilterSet(ClusterScopedFilterSet):
    name = django_filters.CharFilter(lookup_expr="icontains")

    class Meta:
        model = Node
        fields = ["ready", "ascend_enabled"]


class ChipFilterSet(ClusterScopedFilterSet):
    node = django_filters.CharFilter(field_name="node__name")
    chip_type = django_filters.CharFilter(field_name="common_word")
    has_free_slot = django_filters.BooleanFilter(method="filter_has_free_slot")
    room_for = django_filters.CharFilter(
        method="filter_room_for",
        label="template name: chips where one more slice of it fits "
        "(slot, memory, AICore, AICPU; healthy and uncordoned)",
    )
    state = django_filters.MultipleChoiceFilter(
        choices=ChipState.choices,
        method="filter_state",
        label="the chip's state (apps.inventory.chipstate); repeat for several",
    )

    class Meta:
        model = Chip
        fields = ["common_word", "healthy", "cordoned", "uuid"]

    def filter_has_free_slot(self, queryset, name, value):
        return (
            queryset.filter(slots_used__lt=F("slots"))
            if value
            else queryset.filter(slots_used__gte=F("slots"))
        )

    def filter_state(self, queryset, name, value):
        if not value:
            return queryset
        return queryset.alias(state=chip_state_expression()).filter(state__in=value)

    def filter_room_for(self, queryset, name, value):

        room = chips_with_room_for(queryset, value)
        if room is None:
            raise ValidationError(
                {name: [f"no chip type has a template named {value!r}"]}
            )
        return room


class SliceFilterSet(ClusterScopedFilterSet):
    q = django_filters.CharFilter(
        method="filter_q", label="search pod, namespace, node or template"
    )
    chip_type = django_filters.CharFilter(field_name="common_word")
    node = django_filters.CharFilter(field_name="node_name")

    class Meta:
        model = Slice
        fields = ["namespace", "pod_name", "template", "phase", "chip", "chip_uuid"]

    def filter_q(self, queryset, name, value):
        return queryset.filter(
            Q(pod_name__icontains=value)
            | Q(namespace__icontains=value)
            | Q(node_name__icontains=value)
            | Q(template__icontains=value)
        )


class DeviceConfigVersionFilterSet(ClusterScopedFilterSet):
    class Meta:
        model = DeviceConfigVersion
        fields = ["source", "shape"]
