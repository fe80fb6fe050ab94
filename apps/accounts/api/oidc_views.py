"""Sign-in with OpenID Connect: what the login page offers, and the two
browser redirects of the authorization code flow.

- ``GET /api/auth/config/``: whether local passwords and OIDC sign people in,
  and the provider's display name (public: the login page asks it).
- ``GET /api/auth/oidc/login/``: sends the browser to the provider.
- ``GET /api/auth/oidc/callback/``: where the provider sends it back; signs
  the user in and sends the browser to the SPA (``/``), or to its login page
  with ``?login_error=<code>`` (``apps.accounts.oidc_client.OidcErrorCode``).

The two redirects never answer with an error page: every failure, an
unexpected one included, ends on the login page with a code, and is logged
by code and reason without a secret. Both count as sign-in attempts against
the client's budget of the password login (``THROTTLE_LOGIN_IP``).
"""

from __future__ import annotations

import logging
from urllib.parse import urlencode

from django.conf import settings
from django.contrib.auth import login
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.middleware.csrf import get_token
from django.urls import reverse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from apps.accounts import oidc_client
from apps.accounts.api.serializers import AuthConfigSerializer
from apps.accounts.oidc_client import OidcErrorCode, OidcFailure
from apps.accounts.oidc_config import OidcConfig, local_login_enabled, oidc_config
from apps.accounts.oidc_users import oidc_sign_in
from apps.accounts.throttling import sign_in_attempt_wait

log = logging.getLogger(__name__)

SESSION_ID_TOKEN = "oidc_id_token"  # noqa: S105 - a session key's name
MODEL_BACKEND = "django.contrib.auth.backends.ModelBackend"


@extend_schema(tags=["auth"])
class AuthConfigView(APIView):
    """How people sign in here: the login page shows what this says."""

    permission_classes = [AllowAny]
    authentication_classes: list = []

    @extend_schema(responses={200: AuthConfigSerializer})
    def get(self, request: Request) -> Response:
        config = _config_or_none()
        body = {
            "local_login_enabled": local_login_enabled(),
            "oidc_enabled": config is not None,
            "oidc_provider_name": config.provider_name if config else None,
            "oidc_login_url": reverse("api:oidc-login") if config else None,
        }
        return Response(AuthConfigSerializer(body).data)


def _config_or_none() -> OidcConfig | None:
    try:
        return oidc_config()
    except Exception:
        log.exception("OIDC: the configuration is not usable")
        return None


def portal_url(request: HttpRequest, path: str) -> str:
    """``path`` as an absolute URL: under PORTAL_URL when set (behind a
    proxy the request's host may be an internal one), else the request's."""
    base = str(getattr(settings, "PORTAL_URL", "") or "")
    return base + path if base else request.build_absolute_uri(path)


def login_page(code: OidcErrorCode | None = None) -> HttpResponseRedirect:
    """The SPA, with the failure's code for its login page to explain."""
    return HttpResponseRedirect(
        "/" + (f"?{urlencode({'login_error': code})}" if code else "")
    )


def _failed(request: HttpRequest, failure: OidcFailure) -> HttpResponseRedirect:
    log.warning(
        "OIDC sign-in failed: %s: %s (client %s)",
        failure.code,
        failure.reason,
        request.META.get("REMOTE_ADDR", "?"),
    )
    return login_page(failure.code)


@extend_schema(tags=["auth"])
class OidcLoginView(APIView):
    """Start a sign-in at the provider (a browser navigation, not an XHR)."""

    permission_classes = [AllowAny]
    authentication_classes: list = []

    @extend_schema(
        responses={
            302: OpenApiResponse(
                description="to the provider's sign-in page, or to "
                "/?login_error=<code> when it cannot start"
            )
        }
    )
    def get(self, drf_request: Request) -> HttpResponse:
        request = drf_request._request
        try:
            return HttpResponseRedirect(_start(request))
        except OidcFailure as failure:
            return _failed(request, failure)
        except Exception:
            log.exception("OIDC sign-in failed unexpectedly at its start")
            return login_page(OidcErrorCode.PROVIDER_ERROR)


def _start(request: HttpRequest) -> str:
    config = _config_or_none()
    if config is None:
        raise OidcFailure(OidcErrorCode.NOT_CONFIGURED, "OIDC_ISSUER is not set")
    if sign_in_attempt_wait(request) is not None:
        raise OidcFailure(OidcErrorCode.THROTTLED, "too many sign-in attempts")
    return oidc_client.authorization_url(
        request, config, portal_url(request, reverse("api:oidc-callback"))
    )


@extend_schema(tags=["auth"])
class OidcCallbackView(APIView):
    """The provider sends the browser back here with a code (or an error)."""

    permission_classes = [AllowAny]
    authentication_classes: list = []

    @extend_schema(
        responses={
            302: OpenApiResponse(
                description="to / signed in, or to /?login_error=<code> "
                "(docs/security.md lists the codes)"
            )
        }
    )
    def get(self, drf_request: Request) -> HttpResponse:
        request = drf_request._request
        try:
            _finish(request)
        except OidcFailure as failure:
            return _failed(request, failure)
        except Exception:
            log.exception("OIDC sign-in failed unexpectedly at its callback")
            return login_page(OidcErrorCode.PROVIDER_ERROR)
        return login_page()


def _finish(request: HttpRequest) -> None:
    config = _config_or_none()
    if config is None:
        raise OidcFailure(OidcErrorCode.NOT_CONFIGURED, "OIDC_ISSUER is not set")
    if sign_in_attempt_wait(request) is not None:
        raise OidcFailure(OidcErrorCode.THROTTLED, "too many sign-in attempts")
    verified = oidc_client.complete(request, config)
    outcome = oidc_sign_in(
        issuer=verified.issuer, claims=verified.claims, config=config
    )
    if outcome.user is None or outcome.role is None:
        raise OidcFailure(
            OidcErrorCode.NO_ROLE,
            f"subject {str(verified.claims.get('sub'))[:64]!r}: "
            + (
                "no groups claim"
                if outcome.groups is None
                else f"{len(outcome.groups)} group(s), none mapped to a role"
            ),
        )
    login(request, outcome.user, backend=MODEL_BACKEND)
    get_token(request)  # a new CSRF cookie with the new session
    request.session[SESSION_ID_TOKEN] = verified.id_token
    log.info(
        "OIDC sign-in of %r as %s", outcome.user.get_username(), outcome.role.value
    )


def end_session_url(request: HttpRequest, id_token: str) -> str | None:
    """The provider's logout URL for a session signed in through it (None:
    a local session, or a provider without RP-initiated logout)."""
    if not id_token:
        return None
    config = _config_or_none()
    if config is None:
        return None
    try:
        return oidc_client.end_session_url(
            config, id_token=id_token, post_logout_redirect_uri=portal_url(request, "/")
        )
    except Exception:
        log.exception("OIDC: no logout URL from the provider")
        return None
