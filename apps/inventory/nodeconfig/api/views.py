"""Node-config endpoints: ``/api/clusters/<id>/node-config/...``.

Thin: each action validates its input with a serializer (400s name the
field), calls one service or selector, and serializes the answer;
DomainErrors become HTTP responses in ``apps.common.api``. Roles as the
device config's publishing (``apps.accounts.policy``): viewers read and
validate, operators publish and roll back, admins adopt and ``force``.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from apps.inventory.deviceconfig.api.serializers import PublishConflictSerializer
from apps.inventory.deviceconfig.api.views import (
    ClusterCommandViewSet,
    error_response,
    valid_input,
)
from apps.inventory.nodeconfig import publishing
from apps.inventory.nodeconfig.api import serializers as s
from apps.inventory.nodeconfig.in_effect import nodeconfig_state
from apps.inventory.nodeconfig.plugin_pods import node_plugin_restart
from apps.inventory.nodeconfig.publishing import NodeEdit
from apps.inventory.nodeconfig.selectors import nodeconfig_diff, nodeconfig_versions

TAGS = ["node-config"]


READ_ERRORS = {
    403: error_response("your role does not allow this"),
    404: error_response("no such cluster or version"),
}
WRITE_ERRORS = {
    **READ_ERRORS,
    400: error_response(
        "invalid input or node config (`errors` names each path, e.g. "
        "nodes[0].filterDevices.uuid[0]), unconfirmed_warnings "
        "(`errors.confirm_warnings` lists them), node_config_not_read (the "
        "device plugin does not read the file: `errors.confirm_unread` says why "
        "and how to wire it; send confirm_unread: true to write it anyway), or "
        "no_change"
    ),
    409: OpenApiResponse(
        response=PublishConflictSerializer,
        description="stale_version: the node config is not at expected_version; "
        "drift: the ConfigMap was edited outside the portal (three-way detail); "
        "no_baseline: adopt the live one first",
    ),
    503: error_response(
        "the cluster's API server could not be reached or refused the call"
    ),
}


def _edits(data: dict[str, Any]) -> list[NodeEdit]:
    return [
        NodeEdit(
            name=edit["name"],
            remove=edit["remove"],
            hami_vnpu_core=edit["hami_vnpu_core"],
            v_device_count=edit["v_device_count"],
            filter_uuids=tuple(edit["filter_uuids"])
            if edit["filter_uuids"] is not None
            else None,
            filter_indexes=tuple(edit["filter_indexes"])
            if edit["filter_indexes"] is not None
            else None,
        )
        for edit in data.get("nodes") or []
    ]


class ClusterNodeConfigViewSet(ClusterCommandViewSet):
    """The device plugin's node config of a cluster: read, validate, publish, history."""

    input_serializers = {
        "node_config_validate": s.NodeConfigDraftSerializer,
        "node_config_publish": s.NodeConfigPublishSerializer,
        "node_config_rollback": s.NodeConfigRollbackSerializer,
        "node_config_adopt": s.NodeConfigAdoptSerializer,
        "node_config_restart": s.NodePluginRestartSerializer,
    }
    non_atomic_actions = frozenset({"node_config_publish", "node_config_rollback"})

    @extend_schema(
        tags=TAGS,
        operation_id="clusters_node_config",
        request=None,
        responses={200: s.NodeConfigStateSerializer, **READ_ERRORS},
    )
    @action(detail=True, methods=["get"], url_path="node-config")
    def node_config(self, request: Request, pk: str | None = None) -> Response:
        """The live node config per node (as sync mirrored it), the version in effect on each node, drift."""
        data = nodeconfig_state(self.get_object())
        return Response(s.NodeConfigStateSerializer(data).data)

    @extend_schema(
        tags=TAGS,
        operation_id="clusters_node_config_validate",
        request=s.NodeConfigDraftSerializer,
        responses={200: s.NodeConfigValidationSerializer, **READ_ERRORS},
    )
    @action(detail=True, methods=["post"], url_path="node-config/validate")
    def node_config_validate(self, request: Request, pk: str | None = None) -> Response:
        """Check a draft (a whole text, or per-node edits of the live one); nothing is written."""
        data = valid_input(s.NodeConfigDraftSerializer, request.data)
        answer = publishing.nodeconfig_draft_check(
            self.get_object(), text=data.get("text"), edits=_edits(data)
        )
        return Response(s.NodeConfigValidationSerializer(answer).data)

    @extend_schema(
        tags=TAGS,
        operation_id="clusters_node_config_publish",
        request=s.NodeConfigPublishSerializer,
        responses={201: s.NodeConfigPublishResultSerializer, **WRITE_ERRORS},
    )
    @action(detail=True, methods=["post"], url_path="node-config/publish")
    def node_config_publish(self, request: Request, pk: str | None = None) -> Response:
        """Write a draft to the ConfigMap, guarded by the expected version and resourceVersion."""
        data = valid_input(s.NodeConfigPublishSerializer, request.data)
        result = publishing.nodeconfig_publish(
            cluster=self.get_object(),
            actor=request.user,
            reason=data["reason"],
            expected_version=data["expected_version"],
            expected_resource_version=data["expected_resource_version"],
            text=data.get("text"),
            edits=_edits(data),
            confirm_warnings=data["confirm_warnings"],
            confirm_unread=data["confirm_unread"],
            force=data["force"],
        )
        return Response(
            s.NodeConfigPublishResultSerializer(result).data,
            status=status.HTTP_201_CREATED,
        )

    @extend_schema(
        tags=TAGS,
        operation_id="clusters_node_config_rollback",
        request=s.NodeConfigRollbackSerializer,
        responses={201: s.NodeConfigPublishResultSerializer, **WRITE_ERRORS},
    )
    @action(detail=True, methods=["post"], url_path="node-config/rollback")
    def node_config_rollback(self, request: Request, pk: str | None = None) -> Response:
        """Publish the exact text of an earlier version again (a new version)."""
        data = valid_input(s.NodeConfigRollbackSerializer, request.data)
        result = publishing.nodeconfig_rollback(
            cluster=self.get_object(),
            actor=request.user,
            number=data["version"],
            reason=data["reason"],
            confirm_warnings=data["confirm_warnings"],
            confirm_unread=data["confirm_unread"],
            force=data["force"],
        )
        return Response(
            s.NodeConfigPublishResultSerializer(result).data,
            status=status.HTTP_201_CREATED,
        )

    @extend_schema(
        tags=TAGS,
        operation_id="clusters_node_config_adopt",
        request=s.NodeConfigAdoptSerializer,
        responses={201: s.NodeConfigVersionSerializer, **WRITE_ERRORS},
    )
    @action(detail=True, methods=["post"], url_path="node-config/adopt")
    def node_config_adopt(self, request: Request, pk: str | None = None) -> Response:
        """Take the live node config (a hand edit) as the portal's (admin)."""
        data = valid_input(s.NodeConfigAdoptSerializer, request.data)
        version = publishing.nodeconfig_adopt(
            cluster=self.get_object(), actor=request.user, reason=data["reason"]
        )
        return Response(
            s.NodeConfigVersionSerializer(version).data, status=status.HTTP_201_CREATED
        )

    @extend_schema(
        tags=TAGS,
        operation_id="clusters_node_config_restart",
        request=s.NodePluginRestartSerializer,
        responses={202: s.NodePluginRestartResultSerializer, **WRITE_ERRORS},
    )
    @action(detail=True, methods=["post"], url_path="node-config/restart")
    def node_config_restart(self, request: Request, pk: str | None = None) -> Response:
        """Restart one node's device plugin pod, so that it reads the node config again."""
        data = valid_input(s.NodePluginRestartSerializer, request.data)
        pod = node_plugin_restart(
            cluster=self.get_object(),
            node=data["node"],
            actor=request.user,
            reason=data["reason"],
        )
        return Response(
            s.NodePluginRestartResultSerializer(
                {"node": data["node"], "pod": pod}
            ).data,
            status=status.HTTP_202_ACCEPTED,
        )

    @extend_schema(
        tags=TAGS,
        operation_id="clusters_node_config_versions",
        request=None,
        responses={200: s.NodeConfigVersionSerializer(many=True), **READ_ERRORS},
    )
    @action(detail=True, methods=["get"], url_path="node-config/versions")
    def node_config_versions(self, request: Request, pk: str | None = None) -> Response:
        """Every version, newest first (paged): observed, imported, published, adopted."""
        versions = nodeconfig_versions(self.get_object())
        page = self.paginate_queryset(versions)
        return self.get_paginated_response(
            s.NodeConfigVersionSerializer(page, many=True).data
        )

    @extend_schema(
        tags=TAGS,
        operation_id="clusters_node_config_diff",
        request=None,
        parameters=[s.NodeConfigDiffQuerySerializer],
        responses={200: s.NodeConfigDiffSerializer, **READ_ERRORS},
    )
    @action(detail=True, methods=["get"], url_path="node-config/diff")
    def node_config_diff(self, request: Request, pk: str | None = None) -> Response:
        """A unified diff between two versions (absent: the live text)."""
        query = valid_input(s.NodeConfigDiffQuerySerializer, request.query_params)
        data = nodeconfig_diff(
            self.get_object(), before=query["from"], after=query["to"], draft=None
        )
        return Response(s.NodeConfigDiffSerializer(data).data)

    @extend_schema(
        tags=TAGS,
        operation_id="clusters_node_config_diff_draft",
        request=s.NodeConfigDiffDraftSerializer,
        responses={200: s.NodeConfigDiffSerializer, **READ_ERRORS},
    )
    @node_config_diff.mapping.post
    def node_config_diff_draft(
        self, request: Request, pk: str | None = None
    ) -> Response:
        """A unified diff from a version (null: the live text) to a draft."""
        data = valid_input(s.NodeConfigDiffDraftSerializer, request.data)
        answer = nodeconfig_diff(
            self.get_object(),
            before=data["from_version"],
            after=None,
            draft=data["text"],
        )
        return Response(s.NodeConfigDiffSerializer(answer).data)
