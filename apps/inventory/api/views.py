"""Inventory API views: thin; validation in serializers, rules in services."""

from __future__ import annotations

import dataclasses

from django.db.models import Count, Prefetch
from django.http import HttpResponse
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
)
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.filters import OrderingFilter
from rest_framework.request import Request
from rest_framework.response import Response

from apps.common.translated import translated
from apps.inventory import selectors, services
from apps.inventory.api import figure_serializers as fs
from apps.inventory.api import serializers as s
from apps.inventory.deviceconfig.api import serializers as dcs
from apps.inventory.deviceconfig.selectors import (
    deviceconfig_render,
    deviceconfig_state,
    deviceconfig_version_get,
    template_fit_answer,
    version_diff,
)
from apps.inventory.filters import (
    ChipFilterSet,
    ChipTypeFilterSet,
    DeviceConfigVersionFilterSet,
    NodeFilterSet,
    SliceFilterSet,
    TemplateFilterSet,
)
from apps.inventory.hami.template_rule import Scheduler
from apps.inventory.models import (
    Chip,
    ChipEvent,
    ChipType,
    Cluster,
    DeviceConfigVersion,
    Node,
    PendingPod,
    PriorityClass,
    Slice,
    Template,
)

ERRORS = {
    400: OpenApiResponse(description="invalid input; `errors` names each field"),
    404: OpenApiResponse(description="not found"),
}
YAML_RESPONSE = OpenApiResponse(
    response=OpenApiTypes.STR, description="device-config.yaml"
)


def _issues(issues) -> list[dict]:
    """Issues as the answer shows them: their messages in the request's language."""
    return [{**dataclasses.asdict(i), "message": translated(i.message)} for i in issues]


@extend_schema(tags=["clusters"])
class ClusterViewSet(viewsets.ModelViewSet):
    """Clusters the portal manages. Registering or changing one needs the admin role."""

    queryset = Cluster.objects.all()
    serializer_class = s.ClusterSerializer
    filterset_fields = ["name", "sync_state"]

    def perform_create(self, serializer):
        data = dict(serializer.validated_data)
        serializer.instance = services.cluster_create(actor=self.request.user, **data)

    def perform_update(self, serializer):
        data = dict(serializer.validated_data)
        token = data.pop("token", None)
        serializer.instance = services.cluster_update(
            cluster=serializer.instance, actor=self.request.user, token=token, **data
        )

    def perform_destroy(self, instance):
        services.cluster_delete(cluster=instance, actor=self.request.user)

    @extend_schema(responses={200: fs.ClusterSummarySerializer})
    @action(detail=True, methods=["get"])
    def summary(self, request: Request, pk: str | None = None) -> Response:
        """Totals per chip type: chips, slices, memory and slots used and free."""
        data = selectors.cluster_summary(self.get_object())
        return Response(fs.ClusterSummarySerializer(data).data)

    @extend_schema(responses={200: fs.ChipUsageSerializer})
    @action(detail=True, methods=["get"], url_path="chip-usage")
    def chip_usage(self, request: Request, pk: str | None = None) -> Response:
        """Every chip's usage as compact rows (fast at thousands of chips)."""
        return Response(selectors.chip_usage(self.get_object()))

    @extend_schema(responses={200: s.SyncCursorSerializer(many=True)})
    @action(detail=True, methods=["get"], url_path="sync-status", pagination_class=None)
    def sync_status(self, request: Request, pk: str | None = None) -> Response:
        """Where each watch of this cluster stands: resourceVersion, last success, errors."""
        cursors = self.get_object().sync_cursors.order_by("resource")
        return Response(s.SyncCursorSerializer(cursors, many=True).data)

    @extend_schema(
        parameters=[fs.UsageHistoryQuerySerializer],
        responses={200: fs.UsageSampleSerializer(many=True), **ERRORS},
    )
    @action(
        detail=True, methods=["get"], url_path="usage-history", pagination_class=None
    )
    def usage_history(self, request: Request, pk: str | None = None) -> Response:
        """Usage samples (one a minute per chip type) for the last ``hours``."""
        query = fs.UsageHistoryQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        samples = selectors.usage_history(self.get_object(), **query.validated_data)
        return Response(fs.UsageSampleSerializer(samples, many=True).data)

    @extend_schema(responses={200: fs.FragmentationSerializer(many=True)})
    # Whole arrays, not pages (pagination_class=None says so to the schema too):
    # the charts and the sync panel need all of it, and it is small.
    @action(detail=True, methods=["get"], pagination_class=None)
    def fragmentation(self, request: Request, pk: str | None = None) -> Response:
        """Memory stranded on chips that cannot fit the smallest template, per chip type."""
        data = selectors.fragmentation(self.get_object())
        return Response(fs.FragmentationSerializer(data, many=True).data)

    @extend_schema(
        parameters=[fs.FitQuerySerializer],
        responses={200: fs.FitResultSerializer, **ERRORS},
    )
    @action(detail=True, methods=["get"])
    def fit(self, request: Request, pk: str | None = None) -> Response:
        """Which template a request of this size gets now (HAMi's template rule, by
        the config the scheduler loaded), and after a pending restart."""
        query = fs.FitQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        answer = template_fit_answer(
            self.get_object(),
            common_word=query.validated_data["chip_type"],
            memory=query.validated_data.get("memory"),
            scheduler=Scheduler(query.validated_data["scheduler"]),
        )
        return Response(fs.FitAnswerSerializer(answer).data)

    @extend_schema(responses={200: dcs.DeviceConfigStateSerializer, **ERRORS})
    @action(detail=True, methods=["get"], url_path="device-config")
    def device_config(self, request: Request, pk: str | None = None) -> Response:
        """The config the portal would publish, its validation, and its diff from the last stored version."""
        data = deviceconfig_state(self.get_object())
        return Response(dcs.DeviceConfigStateSerializer(data).data)

    @extend_schema(responses={(200, "application/yaml"): YAML_RESPONSE, **ERRORS})
    @action(detail=True, methods=["get"], url_path="device-config/export")
    def device_config_export(
        self, request: Request, pk: str | None = None
    ) -> HttpResponse:
        """device-config.yaml as the portal would publish it (same shape, other keys kept)."""
        text = deviceconfig_render(self.get_object())
        return HttpResponse(text, content_type="application/yaml; charset=utf-8")


class ValidatedWriteMixin:
    """Create/update/destroy through a service that returns the validation report."""

    def _respond(self, instance, report, status_code=status.HTTP_200_OK) -> Response:
        data = self.get_serializer(instance).data
        return Response(
            {**data, "warnings": _issues(report.warnings)}, status=status_code
        )


@extend_schema(tags=["templates"])
@extend_schema_view(
    create=extend_schema(responses={201: s.ChipTypeSerializer, **ERRORS}),
    update=extend_schema(
        request=s.ChipTypeUpdateSerializer,
        responses={200: s.ChipTypeSerializer, **ERRORS},
    ),
    partial_update=extend_schema(
        request=s.ChipTypeUpdateSerializer,
        responses={200: s.ChipTypeSerializer, **ERRORS},
    ),
)
class ChipTypeViewSet(ValidatedWriteMixin, viewsets.ModelViewSet):
    """Chip types (entries of `vnpus`). Every write is validated as a whole device config."""

    queryset = ChipType.objects.select_related("cluster").prefetch_related(
        Prefetch("templates", queryset=Template.objects.order_by("position", "memory"))
    )
    serializer_class = s.ChipTypeSerializer
    filterset_class = ChipTypeFilterSet

    def get_serializer_class(self):
        if self.action in ("update", "partial_update"):
            return s.ChipTypeUpdateSerializer
        return s.ChipTypeSerializer

    def create(self, request: Request, *args, **kwargs) -> Response:
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        cluster = data.pop("cluster")
        data["templates"] = [dict(t) for t in data.get("templates", [])]
        chip_type, report = services.chip_type_create(
            cluster=cluster, actor=request.user, data=data
        )
        return self._respond(chip_type, report, status.HTTP_201_CREATED)

    def update(self, request: Request, *args, **kwargs) -> Response:
        instance = self.get_object()
        serializer = self.get_serializer(
            instance, data=request.data, partial=kwargs.get("partial", False)
        )
        serializer.is_valid(raise_exception=True)
        chip_type, report = services.chip_type_update(
            chip_type=instance, actor=request.user, data=dict(serializer.validated_data)
        )
        return self._respond(ChipType.objects.get(pk=chip_type.pk), report)

    def perform_destroy(self, instance):
        services.chip_type_delete(chip_type=instance, actor=self.request.user)


@extend_schema(tags=["templates"])
@extend_schema_view(
    create=extend_schema(responses={201: s.TemplateSerializer, **ERRORS}),
    update=extend_schema(
        request=s.TemplateUpdateSerializer,
        responses={200: s.TemplateSerializer, **ERRORS},
    ),
    partial_update=extend_schema(
        request=s.TemplateUpdateSerializer,
        responses={200: s.TemplateSerializer, **ERRORS},
    ),
)
class TemplateViewSet(ValidatedWriteMixin, viewsets.ModelViewSet):
    """vNPU templates. A write that would make the device config invalid gets a 400 on the field."""

    queryset = Template.objects.select_related("chip_type", "chip_type__cluster")
    serializer_class = s.TemplateSerializer
    filterset_class = TemplateFilterSet

    def get_serializer_class(self):
        if self.action in ("update", "partial_update"):
            return s.TemplateUpdateSerializer
        return s.TemplateSerializer

    def create(self, request: Request, *args, **kwargs) -> Response:
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        chip_type = data.pop("chip_type")
        template, report = services.template_create(
            chip_type=chip_type, actor=request.user, data=data
        )
        return self._respond(template, report, status.HTTP_201_CREATED)

    def update(self, request: Request, *args, **kwargs) -> Response:
        instance = self.get_object()
        serializer = self.get_serializer(
            instance, data=request.data, partial=kwargs.get("partial", False)
        )
        serializer.is_valid(raise_exception=True)
        template, report = services.template_update(
            template=instance, actor=request.user, data=dict(serializer.validated_data)
        )
        return self._respond(template, report)

    def perform_destroy(self, instance):
        services.template_delete(template=instance, actor=self.request.user)


@extend_schema(tags=["inventory"])
class NodeViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = Node.objects.annotate(chip_count=Count("chips"))
    serializer_class = s.NodeSerializer
    filterset_class = NodeFilterSet


@extend_schema(tags=["inventory"])
class ChipViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = Chip.objects.select_related("node")
    serializer_class = s.ChipSerializer
    filterset_class = ChipFilterSet

    @extend_schema(responses={200: fs.ChipEventSerializer(many=True)})
    @action(detail=True, methods=["get"])
    def history(self, request: Request, pk: str | None = None) -> Response:
        """Slices placed on and released from this chip, newest first (paginated)."""
        chip = self.get_object()
        events = ChipEvent.objects.filter(
            cluster_id=chip.cluster_id, chip_uuid=chip.uuid
        )
        page = self.paginate_queryset(events)
        return self.get_paginated_response(fs.ChipEventSerializer(page, many=True).data)


@extend_schema(tags=["inventory"])
class SliceViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = Slice.objects.select_related("chip")
    serializer_class = s.SliceSerializer
    filterset_class = SliceFilterSet
    filter_backends = [DjangoFilterBackend, OrderingFilter]
    ordering_fields = [
        "pod_name",
        "namespace",
        "node_name",
        "template",
        "memory",
        "priority",
        "started_at",
        "phase",
    ]
    ordering = ["namespace", "pod_name"]


@extend_schema(tags=["inventory"])
class PendingPodViewSet(viewsets.ReadOnlyModelViewSet):
    """Pods waiting for a vNPU, with the scheduler's reason."""

    queryset = PendingPod.objects.all()
    serializer_class = s.PendingPodSerializer
    filterset_fields = ["cluster", "namespace", "name", "common_word"]


@extend_schema(tags=["inventory"])
class PriorityClassViewSet(viewsets.ReadOnlyModelViewSet):
    """PriorityClasses mirrored from each cluster."""

    queryset = PriorityClass.objects.all()
    serializer_class = s.PriorityClassSerializer
    filterset_fields = ["cluster", "name"]


@extend_schema(tags=["device-config"])
class DeviceConfigVersionViewSet(
    mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet
):
    """Every device-config text the portal imported, published, observed or adopted."""

    queryset = DeviceConfigVersion.objects.select_related("author")
    filterset_class = DeviceConfigVersionFilterSet

    def get_serializer_class(self):
        return (
            dcs.DeviceConfigVersionListSerializer
            if self.action == "list"
            else dcs.DeviceConfigVersionSerializer
        )

    @extend_schema(
        parameters=[
            OpenApiParameter("other", int, required=True, description="version id")
        ],
        responses={200: dcs.DiffSerializer, **ERRORS},
    )
    @action(detail=True, methods=["get"])
    def diff(self, request: Request, pk: str | None = None) -> Response:
        """Unified diff from this version to ``other`` (any two versions of the same cluster).

        Texts over the diff budget (4,000 lines or 512 KiB together) get a
        ``# diff not computed`` line instead; answers are cached.
        """
        version = self.get_object()
        query = dcs.DiffQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        other = deviceconfig_version_get(version.cluster, query.validated_data["other"])
        diff = version_diff(version, other)
        return Response({"before": version.pk, "after": other.pk, "diff": diff})

    @extend_schema(responses={(200, "application/yaml"): YAML_RESPONSE})
    @action(detail=True, methods=["get"])
    def export(self, request: Request, pk: str | None = None) -> HttpResponse:
        """The stored text of this version, as YAML."""
        return HttpResponse(
            self.get_object().text, content_type="application/yaml; charset=utf-8"
        )
