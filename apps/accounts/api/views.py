"""Who am I, session login/logout, and API tokens (admins)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import authenticate, get_user_model, login, logout
from django.middleware.csrf import get_token
from django.utils.decorators import method_decorator
from django.utils.translation import gettext as _
from django.views.decorators.csrf import ensure_csrf_cookie
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.authentication import SessionAuthentication
from rest_framework.decorators import action
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.accounts import services
from apps.accounts.api.oidc_views import SESSION_ID_TOKEN, end_session_url
from apps.accounts.api.serializers import (
    ApiTokenCreateSerializer,
    ApiTokenIssuedSerializer,
    ApiTokenSerializer,
    LoginCsrfSerializer,
    LoginSerializer,
    LogoutSerializer,
    MeSerializer,
)
from apps.accounts.errors import InvalidCredentials, LocalLoginDisabled
from apps.accounts.models import ApiToken
from apps.accounts.oidc_config import local_login_enabled
from apps.accounts.selectors import user_role
from apps.accounts.throttling import LoginRateThrottle
from apps.common.exceptions import ValidationFailed


def _me(user) -> dict:
    profile = getattr(user, "portal_profile", None)
    return {
        "username": user.get_username(),
        "role": user_role(user),
        "is_service_account": bool(profile and profile.is_service_account),
    }


@extend_schema(tags=["auth"])
class MeView(APIView):
    """The signed-in user and their role."""

    @extend_schema(responses={200: MeSerializer})
    def get(self, request: Request) -> Response:
        return Response(MeSerializer(_me(request.user)).data)


@extend_schema(tags=["auth"])
@method_decorator(ensure_csrf_cookie, name="dispatch")
class LoginView(APIView):
    """Session login for people (the web UI). Scripts use API tokens instead.

    The only endpoint that answers anonymous callers: it must, to let them sign in.
    Signing in is a write (it replaces the browser's session), so the POST needs
    the CSRF token like every session write: a GET here sets the cookie and
    returns the token. Without it a forged cross-site form could sign a victim
    into an attacker's account (login CSRF).
    """

    permission_classes = [AllowAny]
    authentication_classes: list = []
    # Per client IP and username (THROTTLE_LOGIN): password guessing gets 429.
    throttle_classes = [LoginRateThrottle]

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        # With no authentication classes DRF checks no CSRF token (it exempts
        # the view and leaves the check to SessionAuthentication): run it here.
        SessionAuthentication().enforce_csrf(request)
        super().initial(request, *args, **kwargs)

    @extend_schema(responses={200: LoginCsrfSerializer})
    def get(self, request: Request) -> Response:
        """The CSRF token to send (as X-CSRFToken) with the login POST; also set as a cookie."""
        return Response(LoginCsrfSerializer({"csrf_token": get_token(request)}).data)

    @extend_schema(
        request=LoginSerializer,
        responses={
            200: MeSerializer,
            400: OpenApiResponse(description="missing field"),
            401: OpenApiResponse(description="wrong credentials"),
            403: OpenApiResponse(
                description="no or wrong CSRF token (GET it first), or local "
                "passwords are turned off (LOCAL_LOGIN_ENABLED)"
            ),
            429: OpenApiResponse(description="too many attempts; see Retry-After"),
        },
    )
    def post(self, request: Request) -> Response:
        if not local_login_enabled():
            raise LocalLoginDisabled(
                "Local passwords are turned off here: sign in with the identity provider."
            )
        serializer = LoginSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        user = authenticate(request, **serializer.validated_data)
        if user is None:
            raise InvalidCredentials(_("Wrong username or password."))
        login(request, user)
        get_token(request)  # rotate the CSRF cookie along with the session
        return Response(MeSerializer(_me(user)).data)


@extend_schema(tags=["auth"])
class LogoutView(APIView):
    """End the portal's session; for one signed in with OpenID Connect, also
    say where to end the provider's (RP-initiated logout)."""

    @extend_schema(request=None, responses={200: LogoutSerializer})
    def post(self, request: Request) -> Response:
        id_token = str(request.session.get(SESSION_ID_TOKEN) or "")
        logout(request)
        body = {"end_session_url": end_session_url(request, id_token)}
        return Response(LogoutSerializer(body).data)


@extend_schema(tags=["auth"])
class ApiTokenViewSet(
    mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet
):
    """API tokens. Admins issue and revoke them; the plaintext is shown once."""

    queryset = ApiToken.objects.select_related("user", "user__portal_profile")
    serializer_class = ApiTokenSerializer
    filterset_fields = ["user__username"]

    @extend_schema(
        request=ApiTokenCreateSerializer, responses={201: ApiTokenIssuedSerializer}
    )
    def create(self, request: Request) -> Response:
        serializer = ApiTokenCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        user = get_user_model().objects.filter(username=data["username"]).first()
        if user is None:
            if "role" not in data:
                raise ValidationFailed(
                    _("role: required for a new service account"),
                    detail={"role": [_("required to create a new service account")]},
                )
            user = services.user_ensure(
                username=data["username"], role=data["role"], is_service_account=True
            )
        elif "role" in data:
            services.user_set_role(user=user, role=data["role"], actor=request.user)
        issued = services.token_create(
            user=user,
            name=data["name"],
            queues=data["queues"],
            expires_at=data["expires_at"],
            actor=request.user,
        )
        body = {**ApiTokenSerializer(issued.token).data, "token": issued.plaintext}
        return Response(body, status=status.HTTP_201_CREATED)

    @extend_schema(request=None, responses={200: ApiTokenSerializer})
    @action(detail=True, methods=["post"])
    def revoke(self, request: Request, pk: str | None = None) -> Response:
        """Revoke a token at once."""
        token = services.token_revoke(token_id=self.get_object().pk, actor=request.user)
        return Response(ApiTokenSerializer(token).data)

    @extend_schema(
        request=None,
        responses={
            201: ApiTokenIssuedSerializer,
            409: OpenApiResponse(description="the token is revoked or expired"),
        },
    )
    @action(detail=True, methods=["post"])
    def rotate(self, request: Request, pk: str | None = None) -> Response:
        """Replace a token: a new one (same user, name, queues, expiry) shown once; the old one stops working."""
        issued = services.token_rotate(
            token_id=self.get_object().pk, actor=request.user
        )
        body = {**ApiTokenSerializer(issued.token).data, "token": issued.plaintext}
        return Response(body, status=status.HTTP_201_CREATED)
