"""The node config's read-only checks: is it read at all (health), and what a draft would do.

Thin: validate the input, call one selector, serialize. Publishing, versions
and the editor's writes live elsewhere. Viewers read both: the what-if is a
POST only because it carries a draft, and it writes nothing.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from apps.inventory.deviceconfig.api.serializers import PublishingErrorSerializer
from apps.inventory.models import Cluster
from apps.inventory.nodeconfig.api import check_serializers as s
from apps.inventory.nodeconfig.health import node_config_health
from apps.inventory.nodeconfig.whatif_data import (
    nodeconfig_draft_read,
    nodeconfig_what_if,
)

TAGS = ["node-config"]


def _error(description: str) -> OpenApiResponse:
    return OpenApiResponse(response=PublishingErrorSerializer, description=description)


READ_ERRORS = {
    403: _error("your role does not allow this"),
    404: _error("no such cluster"),
}


class NodeConfigChecksViewSet(viewsets.GenericViewSet):
    """The device plugin's node config: whether it is read, and a draft's what-if."""

    queryset = Cluster.objects.all()
    filter_backends: list[Any] = []
    serializer_class = s.NodeConfigWhatIfInputSerializer

    @extend_schema(
        tags=TAGS,
        operation_id="clusters_node_config_health",
        request=None,
        responses={200: s.NodeConfigHealthSerializer, **READ_ERRORS},
    )
    @action(detail=True, methods=["get"], url_path="node-config/health")
    def node_config_health(self, request: Request, pk: str | None = None) -> Response:
        """Whether the device plugin reads the node config, per node, with the DaemonSet patch."""
        data = node_config_health(self.get_object())
        return Response(s.NodeConfigHealthSerializer(data).data)

    @extend_schema(
        tags=TAGS,
        operation_id="clusters_node_config_what_if",
        request=s.NodeConfigWhatIfInputSerializer,
        responses={
            200: s.NodeConfigWhatIfSerializer,
            400: _error(
                "invalid input: `errors` names the field (text, or the path of "
                "an entry's value such as nodes[0].vDeviceCount)"
            ),
            **READ_ERRORS,
        },
    )
    @action(detail=True, methods=["post"], url_path="node-config/what-if")
    def node_config_what_if(self, request: Request, pk: str | None = None) -> Response:
        """What a draft node config would do per node: stranded slices, requests, room."""
        cluster = self.get_object()
        body = s.NodeConfigWhatIfInputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        read = nodeconfig_draft_read(**body.validated_data)
        data = nodeconfig_what_if(cluster, read)
        return Response(s.NodeConfigWhatIfSerializer(data).data)
