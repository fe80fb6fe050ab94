"""Routes of the acts on a chip through the node config: /api/chips/<id>/{isolate,restore}/."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.routers import SimpleRouter

from apps.inventory.api.serializers import ChipActionSerializer, ChipSerializer
from apps.inventory.deviceconfig.api.serializers import PublishingErrorSerializer
from apps.inventory.deviceconfig.api.views import CLUSTER_ERRORS
from apps.inventory.models import Chip
from apps.inventory.nodeconfig.isolation import chip_isolate, chip_restore


def _error(description: str) -> OpenApiResponse:
    return OpenApiResponse(response=PublishingErrorSerializer, description=description)


ACT_ERRORS = {
    **CLUSTER_ERRORS,
    400: _error(
        "no reason (`errors.reason`), or the node's device plugin does not read "
        "the node config (`errors.node` says why and how to fix it)"
    ),
    409: _error(
        "isolation_state (the chip is not in a state to isolate or restore), "
        "plugin_restart_blocked (a device-config restart waits for confirmation), "
        "conflict (no plugin pod runs on the node right now, e.g. while its "
        "DaemonSet replaces it: try again shortly) or drift (the node config "
        "changed under the portal)"
    ),
}


class ChipActionViewSet(viewsets.GenericViewSet):
    """Isolate a chip (its node's filterDevices, its plugin pod restarted) or restore it."""

    queryset = Chip.objects.select_related("node", "cluster")
    serializer_class = ChipActionSerializer
    filter_backends: list[Any] = []

    @classmethod
    def as_view(cls, actions: Any = None, **initkwargs: Any) -> Any:
        # Each step of an isolation commits on its own: the node config's
        # pending write before its PUT, the chip's state before and after. One
        # request-wide transaction would roll back the portal's record of a
        # change the cluster already holds, and keep rows locked across the
        # cluster calls (apps.inventory.nodeconfig.isolation).
        return transaction.non_atomic_requests(super().as_view(actions, **initkwargs))

    def _act(self, request: Request, act: Any) -> Response:
        serializer = ChipActionSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        chip = act(
            chip=self.get_object(),
            actor=request.user,
            reason=serializer.validated_data["reason"],
        )
        return Response(
            ChipSerializer(chip, context={"request": request}).data,
            status=status.HTTP_202_ACCEPTED,
        )

    @extend_schema(
        operation_id="chips_isolate",
        request=ChipActionSerializer,
        responses={202: ChipSerializer, **ACT_ERRORS},
    )
    @action(detail=True, methods=["post"])
    def isolate(self, request: Request, pk: str | None = None) -> Response:
        """Stop new work landing on the chip; the answer is "isolating" until sync proves it."""
        return self._act(request, chip_isolate)

    @extend_schema(
        operation_id="chips_restore",
        request=ChipActionSerializer,
        responses={202: ChipSerializer, **ACT_ERRORS},
    )
    @action(detail=True, methods=["post"])
    def restore(self, request: Request, pk: str | None = None) -> Response:
        """Lift the chip's filter; the answer is "restoring" until sync proves it."""
        return self._act(request, chip_restore)


router = SimpleRouter()
router.register("chips", ChipActionViewSet, basename="chip-action")
urlpatterns = router.urls
