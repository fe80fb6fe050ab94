"""Drain API views (thin): the plan and the drain of a chip or a node, uncordon,
and the drains with their approval.

Operators drain and uncordon; admins decide the eviction of foreign pods, as
they decide preemptions (``apps.accounts.policy``). Domain errors become HTTP
answers in ``apps.common.api``.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request as HttpRequest
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.inventory.api.serializers import ChipSerializer
from apps.inventory.models import Chip, Cluster, Node
from apps.scheduling.api import drain_serializers as ds
from apps.scheduling.api.serializers import DecisionSerializer
from apps.scheduling.api.views import CONFLICT, ERRORS
from apps.scheduling.choices import DrainScope
from apps.scheduling.drain import services
from apps.scheduling.drain.plan import drain_plan
from apps.scheduling.filters import DrainFilterSet
from apps.scheduling.models import Drain

UNAVAILABLE = {503: OpenApiResponse(description="the cluster could not be read")}


Target = tuple[Cluster, str, Sequence[Chip]]


def chip_target(pk: int) -> Target:
    """The chip's cluster, node name and the chip (404 when it does not exist)."""
    chip = get_object_or_404(Chip.objects.select_related("node", "cluster"), pk=pk)
    return chip.cluster, chip.node.name, [chip]


def node_target(pk: int) -> Target:
    """The node's cluster, name and every chip of it (404 when it does not exist)."""
    node = get_object_or_404(Node.objects.select_related("cluster"), pk=pk)
    chips = list(node.chips.select_related("node").order_by("common_word", "index"))
    return node.cluster, node.name, chips


class ChipDrainView(APIView):
    """``/api/chips/<id>/drain/``: what a drain of the chip does, and doing it."""

    scope = DrainScope.CHIP
    target = staticmethod(chip_target)

    @extend_schema(
        tags=["drains"],
        responses={200: ds.DrainPlanSerializer, **ERRORS, **UNAVAILABLE},
    )
    def get(self, request: HttpRequest, pk: int) -> Response:
        """Every pod with a slice there, its PodDisruptionBudgets, what will happen."""
        cluster, node, chips = self.target(pk)
        plan = drain_plan(cluster=cluster, scope=self.scope, node=node, chips=chips)
        return Response(ds.DrainPlanSerializer(plan).data)

    @extend_schema(
        tags=["drains"],
        request=DecisionSerializer,
        responses={
            201: ds.DrainSerializer,
            **ERRORS,
            409: OpenApiResponse(
                description="a chip is held by an open drain (`drain_exists`, "
                "`detail.drain`)"
            ),
            **UNAVAILABLE,
        },
    )
    def post(self, request: HttpRequest, pk: int) -> Response:
        """Cordon and drain: the portal's pods are evicted and re-queued at once,
        foreign ones once an admin approves."""
        data = DecisionSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        cluster, node, chips = self.target(pk)
        drain = services.drain_create(
            cluster=cluster,
            scope=self.scope,
            node=node,
            chips=chips,
            actor=request.user,
            reason=data.validated_data["reason"],
        )
        return Response(
            ds.DrainSerializer(_fresh(drain)).data, status=status.HTTP_201_CREATED
        )


class NodeDrainView(ChipDrainView):
    """``/api/nodes/<id>/drain/``: the same for every chip of the node."""

    scope = DrainScope.NODE
    target = staticmethod(node_target)


class ChipUncordonView(APIView):
    """``/api/chips/<id>/uncordon/``: back in service (an open drain ends)."""

    target = staticmethod(chip_target)

    @extend_schema(
        tags=["drains"],
        request=DecisionSerializer,
        responses={
            200: ChipSerializer(many=True),
            **ERRORS,
            409: OpenApiResponse(description="nothing is cordoned (`not_cordoned`)"),
        },
    )
    def post(self, request: HttpRequest, pk: int) -> Response:
        data = DecisionSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        cluster, node, chips = self.target(pk)
        uncordoned = services.uncordon(
            cluster=cluster,
            node=node,
            chips=chips,
            actor=request.user,
            reason=data.validated_data["reason"],
        )
        return Response(ChipSerializer(uncordoned, many=True).data)


class NodeUncordonView(ChipUncordonView):
    """``/api/nodes/<id>/uncordon/``: every cordoned chip of the node."""

    target = staticmethod(node_target)


@extend_schema(tags=["drains"])
class DrainViewSet(viewsets.ReadOnlyModelViewSet):
    """Drains, open and past; admins approve or reject the eviction of foreign pods."""

    serializer_class = ds.DrainSerializer
    filterset_class = DrainFilterSet

    def get_queryset(self) -> QuerySet[Drain]:
        return Drain.objects.select_related("requested_by", "decided_by")

    @extend_schema(
        operation_id="drains_approve",
        request=DecisionSerializer,
        responses={200: ds.DrainSerializer, **ERRORS, **CONFLICT},
    )
    @action(detail=True, methods=["post"])
    def approve(self, request: HttpRequest, pk: str | None = None) -> Response:
        """Approve: the foreign pods are evicted too (Eviction API, PDBs respected)."""
        data = DecisionSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        drain = services.drain_approve(
            drain=self.get_object(),
            actor=request.user,
            reason=data.validated_data["reason"],
        )
        return Response(self.get_serializer(_fresh(drain)).data)

    @extend_schema(
        operation_id="drains_reject",
        request=DecisionSerializer,
        responses={200: ds.DrainSerializer, **ERRORS, **CONFLICT},
    )
    @action(detail=True, methods=["post"])
    def reject(self, request: HttpRequest, pk: str | None = None) -> Response:
        """Reject: the foreign pods keep running; the chips stay cordoned."""
        data = DecisionSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        drain = services.drain_reject(
            drain=self.get_object(),
            actor=request.user,
            reason=data.validated_data["reason"],
        )
        return Response(self.get_serializer(_fresh(drain)).data)


def _fresh(drain: Drain) -> Drain:
    return Drain.objects.select_related("requested_by", "decided_by").get(pk=drain.pk)
