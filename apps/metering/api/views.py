"""Usage (booked vs used, now and over time), the cost report, chip prices."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.common.exceptions import NotFound
from apps.inventory.models import Chip, Slice
from apps.inventory.selectors import cluster_get
from apps.metering import selectors, services
from apps.metering.api import serializers as s
from apps.metering.api.renderers import REPORT_RENDERERS, FormatNamedNegotiation
from apps.metering.models import ChipPrice
from apps.metering.prometheus import MetricsStatus


def _metrics(status_: MetricsStatus) -> dict[str, Any]:
    return s.MetricsStatusSerializer(status_).data


def _query(serializer_class: type, request: Request) -> dict[str, Any]:
    query = serializer_class(data=request.query_params)
    query.is_valid(raise_exception=True)
    return query.validated_data


@extend_schema(
    tags=["usage"],
    parameters=[s.ClusterQuerySerializer],
    responses=s.ChipMeasuredListSerializer,
)
class ChipUsageView(APIView):
    """Every chip of a cluster: AICore and HBM booked (portal) vs used (Prometheus)."""

    def get(self, request: Request) -> Response:
        cluster = cluster_get(_query(s.ClusterQuerySerializer, request)["cluster"])
        metrics, rows = selectors.chips_usage(cluster)
        # Plain dicts of plain values: rendered as they are (8,000 rows a page).
        return Response({"metrics": _metrics(metrics), "results": rows})


@extend_schema(
    tags=["usage"],
    parameters=[s.SliceUsageQuerySerializer],
    responses=s.SliceMeasuredListSerializer,
)
class SliceUsageView(APIView):
    """Every slice of a cluster: what it booked, what it uses now, how long idle."""

    def get(self, request: Request) -> Response:
        query = _query(s.SliceUsageQuerySerializer, request)
        metrics, rows = selectors.slices_usage(
            cluster_get(query["cluster"]), flag=query.get("flag")
        )
        return Response({"metrics": _metrics(metrics), "results": rows})


class _HistoryView(APIView):
    """One object over time; subclasses name its model, lookup and reader."""

    model: Any
    related: tuple[str, ...]
    reader: Any  # (object, Window) -> (MetricsStatus, series)

    def get(self, request: Request, pk: int) -> Response:
        window = _query(s.HistoryQuerySerializer, request)["window"]
        found = self.model.objects.select_related(*self.related).filter(pk=pk).first()
        if found is None:
            raise NotFound(
                _("%(noun)s %(pk)s does not exist")
                % {"noun": self.model._meta.model_name, "pk": pk}
            )
        metrics, series = type(self).reader(found, window)
        return Response(
            s.HistorySerializer(
                {
                    "metrics": metrics,
                    "start": window.start,
                    "end": window.end,
                    "step": window.step,
                    "series": series,
                }
            ).data
        )


@extend_schema(
    tags=["usage"], parameters=[s.HistoryQuerySerializer], responses=s.HistorySerializer
)
class ChipHistoryView(_HistoryView):
    """One chip over time: AICore % and HBM used (Prometheus) and booked (ledger)."""

    model, related, reader = Chip, ("node", "cluster"), selectors.chip_history


@extend_schema(
    tags=["usage"], parameters=[s.HistoryQuerySerializer], responses=s.HistorySerializer
)
class SliceHistoryView(_HistoryView):
    """One slice over time: AICore % of its own cores, HBM used vs booked."""

    model, related, reader = Slice, ("chip", "cluster"), selectors.slice_history


@extend_schema(
    tags=["usage"],
    parameters=[s.ReportQuerySerializer],
    responses={
        200: OpenApiResponse(
            s.ReportSerializer, description="JSON, or CSV with format=csv"
        ),
    },
)
class UsageReportView(APIView):
    """Slice-hours booked, used and idle, and their cost, per namespace, queue or chip type."""

    renderer_classes = REPORT_RENDERERS
    content_negotiation_class = FormatNamedNegotiation

    def get(self, request: Request) -> Response:
        query = _query(s.ReportQuerySerializer, request)
        cluster = cluster_get(query["cluster"])
        metrics, report = selectors.usage_report(
            cluster, start=query["start"], end=query["end"], group_by=query["group_by"]
        )
        measured_end = min(query["end"], metrics.queried_at)
        body = s.ReportSerializer(
            {
                "metrics": metrics,
                "start": query["start"],
                "end": query["end"],
                "hours": max(
                    0.0, (measured_end - query["start"]).total_seconds() / 3600
                ),
                "group_by": query["group_by"],
                "currency": settings.COST_CURRENCY,
                "rows": report.rows,
                "totals": report.totals,
                "unpriced": report.unpriced,
            }
        ).data
        answer = Response(body)
        if request.accepted_renderer.format == "csv":
            name = f"{cluster.name}-{query['group_by']}-{query['start']:%Y-%m-%d}.csv"
            answer["Content-Disposition"] = f'attachment; filename="{name}"'
        return answer

    def finalize_response(
        self, request: Request, response: Any, *args: Any, **kwargs: Any
    ) -> Any:
        # An error is JSON whatever format was asked for: it has no rows.
        if response.status_code >= 400 and getattr(request, "accepted_renderer", None):
            request.accepted_renderer = JSONRenderer()
            request.accepted_media_type = JSONRenderer.media_type
        return super().finalize_response(request, response, *args, **kwargs)


@extend_schema(tags=["usage"], responses=s.ChipPriceSerializer(many=True))
class ChipPriceListView(APIView):
    """Each chip type's price per card-hour (admins set them)."""

    def get(self, request: Request) -> Response:
        prices = ChipPrice.objects.order_by("common_word")
        return Response(s.ChipPriceSerializer(prices, many=True).data)


class ChipPriceView(APIView):
    """One chip type's price per card-hour."""

    @extend_schema(
        tags=["usage"],
        request=s.ChipPriceWriteSerializer,
        responses=s.ChipPriceSerializer,
    )
    def put(self, request: Request, common_word: str) -> Response:
        body = s.ChipPriceWriteSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        price = services.chip_price_set(
            common_word=common_word, actor=request.user, **body.validated_data
        )
        return Response(s.ChipPriceSerializer(price).data)

    @extend_schema(tags=["usage"], responses={204: None})
    def delete(self, request: Request, common_word: str) -> Response:
        services.chip_price_delete(common_word=common_word, actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)
