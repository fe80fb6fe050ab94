"""Scheduling API views: thin; validation in serializers, rules in services.

Roles (``apps.accounts.policy``): viewers read; CI, operators and admins submit
and cancel (their own) requests; admins manage queues and decide preemptions,
and cancel anyone's request. A token
limited to queues (``ApiToken.queue_ids``) only sees and acts on those queues:
anything else is a 403 naming ``queue``.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Prefetch, QuerySet
from django.http import HttpResponse
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request as HttpRequest
from rest_framework.response import Response

from apps.common.renderers import PlainTextRenderer
from apps.inventory.kube import cluster_gateway
from apps.inventory.podlogs import endpoint_for
from apps.scheduling import access, decisions, selectors, volcano
from apps.scheduling import logs as request_logs
from apps.scheduling.api import job
from apps.scheduling.api import serializers as s
from apps.scheduling.api.deferred import LiveLogAnswer, WaitAnswer
from apps.scheduling.filters import (
    PreemptionProposalFilterSet,
    QueueFilterSet,
    RequestFilterSet,
)
from apps.scheduling.models import PreemptionProposal, Queue, QueueQuota, Request
from apps.scheduling.services.queues import (
    ACCESS_FIELDS,
    queue_create,
    queue_delete,
    queue_update,
)
from apps.scheduling.services.requests import request_cancel, request_create
from apps.scheduling.throttling import RequestCreateRateThrottle

ERRORS = {
    400: OpenApiResponse(description="invalid input; `errors` names each field"),
    403: OpenApiResponse(
        description="role too low, or a token limited to other queues (`queue`)"
    ),
    404: OpenApiResponse(description="not found"),
}
TEXT = "text/plain; charset=utf-8"
CONFLICT = {
    409: OpenApiResponse(
        description="conflict with the current state; `code` says which"
    )
}


@extend_schema(tags=["requests"])
@extend_schema_view(
    list=extend_schema(
        description="Requests, newest first; a token limited to queues sees only those.",
        responses={200: s.RequestSerializer(many=True), 403: ERRORS[403]},
    ),
)
class RequestViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    viewsets.GenericViewSet,
):
    """Requests for vNPUs (CI pipelines submit, poll and cancel them)."""

    serializer_class = s.RequestSerializer
    filterset_class = RequestFilterSet

    def get_queryset(self) -> QuerySet[Request]:
        # Lists are limited to the token's queues; a single request outside
        # them is found and refused with a 403 naming the queue (not a 404).
        token = self.request.auth if self.action == "list" else None
        return selectors.request_queryset(token=token)

    def get_throttles(self) -> list[Any]:
        throttles = list(super().get_throttles())
        if self.action == "create":
            throttles.append(RequestCreateRateThrottle())
        return throttles

    def get_object(self) -> Request:
        obj = super().get_object()
        access.token_scope_check(self.request.auth, obj.queue, obj.queue.name)
        return obj

    def _page(self, requests: list[Request]) -> dict[str, Any]:
        return {"positions": selectors.queue_positions(requests)}

    def list(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Response:
        if request.query_params.get("queue"):
            access.token_name_check(request.auth, request.query_params["queue"])
        queryset = self.filter_queryset(self.get_queryset())
        page = self.paginate_queryset(queryset)
        rows = list(page if page is not None else queryset)
        data = s.RequestSerializer(rows, many=True, context=self._page(rows)).data
        return self.get_paginated_response(data) if page is not None else Response(data)

    @extend_schema(
        parameters=[job.WaitQuerySerializer(partial=True)],
        description=(
            "A request: its state, reason and, while pending, its position in "
            "its queue. With `wait=running|finished` (and `timeout`, seconds) "
            "it answers once the request got there or at the timeout: compare "
            "the `state` it returns."
        ),
        responses={200: s.RequestSerializer, **ERRORS},
    )
    def retrieve(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Response:
        obj = self.get_object()
        if "wait" in request.query_params:
            wait = job.WaitQuerySerializer(data=request.query_params)
            wait.is_valid(raise_exception=True)
            states = job.WAIT_STATES[wait.validated_data["wait"]]
            waited = getattr(request._request, "vnpu_waited", False)
            if obj.state not in states and not waited:
                return WaitAnswer(obj.pk, states, wait.validated_data["timeout"])
        return Response(s.RequestSerializer(obj, context=self._page([obj])).data)

    @extend_schema(
        parameters=[job.LogQuerySerializer],
        description=(
            "The job's log as text: live from its pod (`follow=true` streams "
            "it until the container ends), or, once the request ended, the "
            "tail kept then (`X-Log-Source: kept`; REQUEST_LOG_KEEP_BYTES)."
        ),
        responses={
            (200, "text/plain"): OpenApiResponse(description="the log"),
            **ERRORS,
            404: OpenApiResponse(description="no such request, or no log (`no_log`)"),
            409: OpenApiResponse(description="its container has not started"),
        },
    )
    @action(
        detail=True,
        methods=["get"],
        url_path="logs",
        renderer_classes=[JSONRenderer, PlainTextRenderer],
    )
    def logs(self, request: HttpRequest, pk: str | None = None) -> HttpResponse:
        params = job.LogQuerySerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        query = params.query()
        obj = self.get_object()
        source = None
        if not getattr(request._request, "vnpu_pod_gone", False):
            source = request_logs.log_source(obj)
        if source is not None:
            with cluster_gateway(obj.cluster) as gateway:
                endpoint = endpoint_for(gateway, source.namespace, source.pod, query)
            return LiveLogAnswer(endpoint)
        kept = request_logs.kept_log(obj, query)
        return HttpResponse(
            kept.text,
            content_type=TEXT,
            headers={
                "X-Log-Source": "kept",
                "X-Log-Truncated": "true" if kept.truncated else "false",
            },
        )

    @extend_schema(
        request=s.RequestCreateSerializer,
        responses={
            201: s.RequestSerializer,
            200: OpenApiResponse(
                response=s.RequestSerializer,
                description="the same idempotency key was used before: that request",
            ),
            **ERRORS,
            409: OpenApiResponse(
                description="`idempotency_key` already used with different content"
            ),
        },
    )
    def create(self, request: HttpRequest) -> Response:
        """Submit a request (201), or get the earlier one with the same idempotency key (200)."""
        data = s.RequestCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        fields = dict(data.validated_data)
        if fields.get("workload") is not None:
            fields["workload"] = dict(fields["workload"])
        created_request, created = request_create(
            actor=request.user, token=request.auth, **fields
        )
        if not created:
            # The earlier request was read bare; a new one already holds the
            # rows its answer shows (cluster, queue, submitter; no chip yet),
            # so reading it back would cost a POST a joined query for nothing.
            created_request = selectors.request_queryset().get(pk=created_request.pk)
        body = s.RequestSerializer(
            created_request, context=self._page([created_request])
        )
        return Response(
            body.data, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK
        )

    @extend_schema(
        description=(
            "Cancel a request, or release a running one (its pod is deleted). "
            "Ended requests are returned unchanged."
        ),
        responses={200: s.RequestSerializer, **ERRORS},
    )
    def destroy(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Response:
        obj = self.get_object()
        cancelled = request_cancel(request=obj, actor=request.user, token=request.auth)
        return Response(s.RequestSerializer(cancelled, context=self._page([])).data)


@extend_schema(tags=["queues"])
@extend_schema_view(
    list=extend_schema(responses={200: s.QueueSerializer(many=True)}),
    retrieve=extend_schema(responses={200: s.QueueSerializer, **ERRORS}),
    create=extend_schema(
        request=s.QueueSerializer, responses={201: s.QueueSerializer, **ERRORS}
    ),
    update=extend_schema(
        request=s.QueueUpdateSerializer, responses={200: s.QueueSerializer, **ERRORS}
    ),
    partial_update=extend_schema(
        request=s.QueueUpdateSerializer, responses={200: s.QueueSerializer, **ERRORS}
    ),
    destroy=extend_schema(responses={204: None, **ERRORS, **CONFLICT}),
)
class QueueViewSet(viewsets.ModelViewSet):
    """Queues with quotas per chip type (admins write; the name is fixed once made)."""

    queryset = Queue.objects.select_related("cluster").prefetch_related(
        Prefetch("quotas", queryset=QueueQuota.objects.order_by("common_word")),
        "members",
        "member_groups",
    )
    serializer_class = s.QueueSerializer
    filterset_class = QueueFilterSet

    def get_serializer_class(self) -> type[Any]:
        if self.action in ("update", "partial_update"):
            return s.QueueUpdateSerializer
        return s.QueueSerializer

    def _out(self, queues: list[Queue]) -> dict[str, Any]:
        return {
            "usage": selectors.queue_usage(queues),
            "volcano": volcano.queue_views(queues),
        }

    def list(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Response:
        queryset = self.filter_queryset(self.get_queryset())
        page = self.paginate_queryset(queryset)
        rows = list(page if page is not None else queryset)
        data = s.QueueSerializer(rows, many=True, context=self._out(rows)).data
        return self.get_paginated_response(data) if page is not None else Response(data)

    def retrieve(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Response:
        obj = self.get_object()
        return Response(s.QueueSerializer(obj, context=self._out([obj])).data)

    def create(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Response:
        data = s.QueueSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        fields = data.validated_data
        queue = queue_create(
            actor=request.user,
            cluster=fields["cluster"],
            name=fields["name"],
            description=fields.get("description", ""),
            quotas=_quotas(fields.get("quotas", [])),
            access=_access(fields),
            **_pod_policy(fields),
        )
        return self._respond(queue, status.HTTP_201_CREATED)

    def update(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Response:
        queue = self.get_object()
        data = s.QueueUpdateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        fields = data.validated_data
        queue_update(
            actor=request.user,
            queue=queue,
            description=fields.get("description"),
            quotas=_quotas(fields["quotas"]) if "quotas" in fields else None,
            access=_access(fields),
            **_pod_policy(fields),
        )
        return self._respond(queue, status.HTTP_200_OK)

    def destroy(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Response:
        queue_delete(actor=request.user, queue=self.get_object())
        return Response(status=status.HTTP_204_NO_CONTENT)

    def _respond(self, queue: Queue, code: int) -> Response:
        fresh = self.get_queryset().get(pk=queue.pk)
        return Response(
            s.QueueSerializer(fresh, context=self._out([fresh])).data, status=code
        )


def _pod_policy(fields: dict[str, Any]) -> dict[str, Any]:
    keys = (
        "allowed_namespaces",
        "pod_security",
        "allowed_service_accounts",
        "allowed_secrets",
        "allowed_config_maps",
    )
    return {key: fields[key] for key in keys if key in fields}


def _access(fields: dict[str, Any]) -> dict[str, Any]:
    return {key: fields[key] for key in ACCESS_FIELDS if key in fields}


def _quotas(rows: list[Any]) -> list[dict[str, Any]]:
    return [
        {
            "chip_type": row["common_word"],
            "memory_limit": row.get("memory_limit"),
            "slots_limit": row.get("slots_limit"),
        }
        for row in rows
    ]


@extend_schema(tags=["preemptions"])
@extend_schema_view(
    list=extend_schema(
        description=(
            "Preemption proposals: pending decisions and history, filterable by "
            "cluster, chip, queue and state."
        ),
        responses={200: s.PreemptionProposalSerializer(many=True)},
    ),
    retrieve=extend_schema(responses={200: s.PreemptionProposalSerializer, **ERRORS}),
)
class PreemptionProposalViewSet(viewsets.ReadOnlyModelViewSet):
    """Preemption proposals; admins approve or reject them, with a reason."""

    serializer_class = s.PreemptionProposalSerializer
    filterset_class = PreemptionProposalFilterSet

    def get_queryset(self) -> QuerySet[PreemptionProposal]:
        return selectors.proposal_queryset(token=self.request.auth)

    def list(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Response:
        if request.query_params.get("queue"):
            access.token_name_check(request.auth, request.query_params["queue"])
        return super().list(request, *args, **kwargs)

    @extend_schema(
        operation_id="preemptions_approve",
        request=s.DecisionSerializer,
        responses={200: s.PreemptionProposalSerializer, **ERRORS, **CONFLICT},
    )
    @action(detail=True, methods=["post"])
    def approve(self, request: HttpRequest, pk: str | None = None) -> Response:
        """Approve: the victims are evicted (Eviction API), then the request is admitted."""
        data = s.DecisionSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        proposal = decisions.proposal_approve(
            proposal=self.get_object(),
            actor=request.user,
            reason=data.validated_data["reason"],
        )
        return Response(self.get_serializer(self._fresh(proposal)).data)

    @extend_schema(
        operation_id="preemptions_reject",
        request=s.DecisionSerializer,
        responses={200: s.PreemptionProposalSerializer, **ERRORS, **CONFLICT},
    )
    @action(detail=True, methods=["post"])
    def reject(self, request: HttpRequest, pk: str | None = None) -> Response:
        """Reject: everyone keeps running; the request waits for room without preemption."""
        data = s.DecisionSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        proposal = decisions.proposal_reject(
            proposal=self.get_object(),
            actor=request.user,
            reason=data.validated_data["reason"],
        )
        return Response(self.get_serializer(self._fresh(proposal)).data)

    def _fresh(self, proposal: PreemptionProposal) -> PreemptionProposal:
        return selectors.proposal_queryset().get(pk=proposal.pk)
