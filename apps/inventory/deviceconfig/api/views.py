"""Publishing endpoints: actions on a cluster's device config and its components.

Thin: each action validates its input, calls one service or selector, and
serializes the answer; DomainErrors become HTTP responses in
``apps.common.api``. Roles: viewers read (drift, restarts, what-if, health);
operators publish, roll back and restart; adopting, and publishing over
drift (``force``, checked by the service), need an admin.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from apps.inventory.deviceconfig import publishing
from apps.inventory.deviceconfig.api import serializers as s
from apps.inventory.deviceconfig.health import cluster_health
from apps.inventory.deviceconfig.liveconfig import deviceconfig_drift
from apps.inventory.deviceconfig.refresh import config_loaded_refresh
from apps.inventory.deviceconfig.restarts import restart_states
from apps.inventory.deviceconfig.selectors import deviceconfig_unpublished
from apps.inventory.deviceconfig.whatif import template_what_if
from apps.inventory.models import Cluster

TAGS = ["publishing"]


def error_response(description: str) -> OpenApiResponse:
    """An error answer of the schema, with the given description."""
    return OpenApiResponse(
        response=s.PublishingErrorSerializer, description=description
    )


READ_ERRORS = {
    403: error_response("your role does not allow this"),
    404: error_response("no such cluster (or ConfigMap, version or component in it)"),
}
CLUSTER_ERRORS = {
    **READ_ERRORS,
    503: error_response(
        "the cluster's API server could not be reached or refused the call"
    ),
}
WRITE_ERRORS = {
    400: error_response(
        "invalid input or config (`errors` names each field), no_change, or "
        "unreadable_shape (`errors.confirm_shape`: a running component cannot "
        "parse the vnpus shape; send confirm_shape: true to write it anyway), "
        "breaks_running_slices (`errors.confirm_breaking` names the running "
        "slices the publish would break; name each in confirm_breaking, or their "
        "templates in confirm_breaking_templates)"
    ),
    **CLUSTER_ERRORS,
    409: OpenApiResponse(
        response=s.PublishConflictSerializer,
        description="drift: the ConfigMap changed outside the portal (three-way "
        "detail); no_baseline: adopt the live config first",
    ),
}


def _valid(serializer_class: type[serializers.Serializer], data: Any) -> dict[str, Any]:
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


valid_input = _valid


class ClusterCommandViewSet(viewsets.GenericViewSet):
    """Actions on a cluster that take a command body (publishing, the node config).

    ``input_serializers`` names each action's input, which is also what
    OPTIONS describes (without it DRF's metadata asserts on the missing
    serializer_class and OPTIONS was a 500). ``non_atomic_actions`` run
    outside ATOMIC_REQUESTS: a publish commits its pending-write row before
    the PUT and its version after it; one request-wide transaction would lose
    the row with a process killed in between (see
    apps.inventory.deviceconfig.publishing).
    """

    queryset = Cluster.objects.all()
    filter_backends: list[Any] = []
    input_serializers: dict[str, type[serializers.Serializer]] = {}
    non_atomic_actions: frozenset[str] = frozenset()

    def get_serializer_class(self) -> type[serializers.Serializer]:
        action = self.action or ""
        if action == "metadata":  # OPTIONS: describe the route's POST command
            action = getattr(self, "action_map", {}).get("post", "")
        return self.input_serializers.get(action, serializers.Serializer)

    @classmethod
    def as_view(cls, actions: Any = None, **initkwargs: Any) -> Any:
        view = super().as_view(actions, **initkwargs)
        if actions and set(actions.values()) & cls.non_atomic_actions:
            return transaction.non_atomic_requests(view)
        return view


class ClusterPublishingViewSet(ClusterCommandViewSet):
    """Publish, roll back, adopt, watch drift and restarts, check configuration health."""

    input_serializers = {
        "publish": s.PublishInputSerializer,
        "rollback": s.RollbackInputSerializer,
        "adopt": s.AdoptInputSerializer,
        "restart": s.RestartInputSerializer,
    }
    non_atomic_actions = frozenset({"publish", "rollback"})

    @extend_schema(
        tags=TAGS,
        operation_id="clusters_publish",
        request=s.PublishInputSerializer,
        responses={201: s.PublishResultSerializer, **WRITE_ERRORS},
    )
    @action(detail=True, methods=["post"])
    def publish(self, request: Request, pk: str | None = None) -> Response:
        """Write the portal's chip types and templates to the ConfigMap (guarded by resourceVersion)."""
        data = _valid(s.PublishInputSerializer, request.data)
        result = publishing.deviceconfig_publish(
            cluster=self.get_object(),
            actor=request.user,
            reason=data["reason"],
            force=data["force"],
            confirm_shape=data["confirm_shape"],
            confirm_breaking=data["confirm_breaking"],
            confirm_breaking_templates=data["confirm_breaking_templates"],
        )
        return Response(
            s.PublishResultSerializer(result).data, status=status.HTTP_201_CREATED
        )

    @extend_schema(
        tags=TAGS,
        operation_id="clusters_rollback",
        request=s.RollbackInputSerializer,
        responses={201: s.PublishResultSerializer, **WRITE_ERRORS},
    )
    @action(detail=True, methods=["post"])
    def rollback(self, request: Request, pk: str | None = None) -> Response:
        """Publish the exact text of an earlier version again (a new version)."""
        data = _valid(s.RollbackInputSerializer, request.data)
        result = publishing.deviceconfig_rollback(
            cluster=self.get_object(),
            actor=request.user,
            number=data["version"],
            reason=data["reason"],
            force=data["force"],
            confirm_shape=data["confirm_shape"],
        )
        return Response(
            s.PublishResultSerializer(result).data, status=status.HTTP_201_CREATED
        )

    @extend_schema(
        tags=TAGS,
        operation_id="clusters_adopt",
        request=s.AdoptInputSerializer,
        responses={201: s.AdoptResultSerializer, **WRITE_ERRORS},
    )
    @action(detail=True, methods=["post"])
    def adopt(self, request: Request, pk: str | None = None) -> Response:
        """Take the live ConfigMap content as the portal's (admin)."""
        data = _valid(s.AdoptInputSerializer, request.data)
        version = publishing.deviceconfig_adopt(
            cluster=self.get_object(), actor=request.user, reason=data["reason"]
        )
        return Response(
            s.AdoptResultSerializer(version).data, status=status.HTTP_201_CREATED
        )

    @extend_schema(
        tags=TAGS,
        operation_id="clusters_drift",
        request=None,
        parameters=[s.DriftQuerySerializer],
        responses={200: s.DriftSerializer, **CLUSTER_ERRORS},
    )
    @action(detail=True, methods=["get"])
    def drift(self, request: Request, pk: str | None = None) -> Response:
        """Whether the ConfigMap still holds the portal's last published or adopted version."""
        query = _valid(s.DriftQuerySerializer, request.query_params)
        cluster = self.get_object()
        data = deviceconfig_drift(cluster, live=query["live"])
        data["unpublished"] = deviceconfig_unpublished(cluster)
        return Response(s.DriftSerializer(data).data)

    @extend_schema(
        tags=TAGS,
        operation_id="clusters_restarts",
        request=None,
        responses={200: s.RestartStatesSerializer, **CLUSTER_ERRORS},
    )
    @action(detail=True, methods=["get"])
    def restarts(self, request: Request, pk: str | None = None) -> Response:
        """Restart state of the HAMi scheduler, the device plugin and volcano-scheduler."""
        cluster = self.get_object()
        # These states list the scheduler's pods live: the start stored for the
        # config in effect is read again first, so the "placed by" banner never
        # lags a restart no sync event reported (deviceconfig.refresh).
        config_loaded_refresh(cluster)
        data = restart_states(cluster)
        return Response(s.RestartStatesSerializer(data).data)

    @extend_schema(
        tags=TAGS,
        operation_id="clusters_restart_component",
        request=s.RestartInputSerializer,
        parameters=[
            OpenApiParameter(
                "component",
                OpenApiTypes.STR,
                OpenApiParameter.PATH,
                description="workload name, e.g. hami-scheduler",
            )
        ],
        responses={
            202: s.ComponentRestartSerializer,
            400: error_response("confirm is not true"),
            **CLUSTER_ERRORS,
        },
    )
    @action(detail=True, methods=["post"], url_path=r"restarts/(?P<component>[^/.]+)")
    def restart(
        self, request: Request, pk: str | None = None, component: str = ""
    ) -> Response:
        """Rollout-restart one component so it reads the device config again (needs confirm: true)."""
        _valid(s.RestartInputSerializer, request.data)
        data = publishing.workload_restart(
            cluster=self.get_object(), component=component, actor=request.user
        )
        return Response(
            s.ComponentRestartSerializer(data).data, status=status.HTTP_202_ACCEPTED
        )

    @extend_schema(
        tags=TAGS,
        operation_id="clusters_what_if",
        request=None,
        responses={200: s.WhatIfSerializer, **READ_ERRORS},
    )
    @action(detail=True, methods=["get"], url_path="what-if")
    def what_if(self, request: Request, pk: str | None = None) -> Response:
        """What publishing the edited templates would change: slots, fits, broken slices."""
        data = template_what_if(self.get_object())
        return Response(s.WhatIfSerializer(data).data)

    @extend_schema(
        tags=TAGS,
        operation_id="clusters_health",
        request=None,
        responses={200: s.ClusterHealthSerializer, **READ_ERRORS},
    )
    @action(detail=True, methods=["get"])
    def health(self, request: Request, pk: str | None = None) -> Response:
        """Configuration checks: Volcano's config by its version, the vnpus shape, device plugin, registrations."""
        data = cluster_health(self.get_object())
        return Response(s.ClusterHealthSerializer(data).data)
