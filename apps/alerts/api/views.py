"""The portal's alerts (everyone reads) and their silences (admins)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.alerts import selectors, services
from apps.alerts.api import serializers as s


class AlertListView(APIView):
    """Firing (and silenced or inhibited) alerts, from Alertmanager or, without
    one, evaluated by the portal. Never fails because Alertmanager is away:
    ``error`` says why the list is empty."""

    @extend_schema(tags=["alerts"], responses=s.AlertListSerializer)
    def get(self, request: Request) -> Response:
        return Response(s.AlertListSerializer(selectors.alert_list()).data)


class SilenceCreateView(APIView):
    """Silence an alert's object in Alertmanager for a while (audited)."""

    @extend_schema(
        tags=["alerts"],
        operation_id="alerts_silences_create",
        request=s.SilenceCreateSerializer,
        responses={
            201: s.SilenceSerializer,
            409: OpenApiResponse(
                description="`notifications_not_configured`: no ALERTMANAGER_URL"
            ),
            502: OpenApiResponse(
                description="`alertmanager_refused`: Alertmanager answered an error"
            ),
            503: OpenApiResponse(
                description="`alertmanager_unavailable`: Alertmanager is away"
            ),
        },
    )
    def post(self, request: Request) -> Response:
        body = s.SilenceCreateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        silence = services.silence_create(actor=request.user, **body.validated_data)
        return Response(
            s.SilenceSerializer(silence).data, status=status.HTTP_201_CREATED
        )
