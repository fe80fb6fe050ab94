"""OpenID Connect with the provider: the authorization code flow with PKCE.

Authlib (``authlib.integrations.django_client``) does the protocol: discovery,
the authorization URL with ``state``, ``nonce`` and an S256 code challenge
kept in the session, the code exchange, and the ID token's signature (the
provider's JWKS) and claims. This module adds what a portal must check on top
(the discovered issuer is the configured one; the ID token's ``iss`` and
``aud`` are required and must be that issuer and this client) and turns
every failure into one :class:`OidcFailure` with a stable code
(:class:`OidcErrorCode`) that the login page shows a message for. Failures
are logged by code and reason, never with a code, token or secret.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import requests
from authlib.integrations.base_client import MismatchingStateError, OAuthError
from authlib.integrations.django_client import DjangoOAuth2App, OAuth
from django.http import HttpRequest
from joserfc.errors import ClaimError, ExpiredTokenError, JoseError

from apps.accounts.oidc_config import OidcConfig

log = logging.getLogger(__name__)

CLIENT_NAME = "portal"


class OidcErrorCode(StrEnum):
    """Why an OpenID Connect sign-in failed: ``/?login_error=<code>``.

    Stable: the login page picks its message by the code (the ``auth``
    catalog's ``loginError.<code>``), and a test checks that every code has one.
    """

    NOT_CONFIGURED = "oidc_not_configured"
    PROVIDER_UNREACHABLE = "oidc_provider_unreachable"
    ISSUER_MISMATCH = "oidc_issuer_mismatch"
    STATE_MISMATCH = "oidc_state_mismatch"
    NONCE_MISMATCH = "oidc_nonce_mismatch"
    CODE_REJECTED = "oidc_code_rejected"
    CLIENT_REJECTED = "oidc_client_rejected"
    WRONG_AUDIENCE = "oidc_wrong_audience"
    TOKEN_EXPIRED = "oidc_token_expired"  # noqa: S105 - an error code
    TOKEN_INVALID = "oidc_token_invalid"  # noqa: S105 - an error code
    ACCESS_DENIED = "oidc_access_denied"
    PROVIDER_ERROR = "oidc_provider_error"
    NO_ROLE = "oidc_no_role"
    ACCOUNT_DISABLED = "oidc_account_disabled"
    THROTTLED = "oidc_throttled"


class OidcFailure(Exception):
    """A sign-in that cannot go on: ``code`` for the page, ``reason`` for the log
    (no secret in it)."""

    def __init__(self, code: OidcErrorCode, reason: str) -> None:
        super().__init__(f"{code}: {reason}")
        self.code = code
        self.reason = reason


@dataclass(frozen=True)
class VerifiedSignIn:
    """What a successful callback yields: the ID token's verified claims
    (userinfo's added where the ID token lacks them) and the raw ID token
    (kept in the session as the logout's ``id_token_hint``)."""

    issuer: str
    claims: Mapping[str, Any]
    id_token: str


_apps: dict[tuple[Any, ...], DjangoOAuth2App] = {}
_apps_lock = threading.Lock()


def _app(config: OidcConfig) -> DjangoOAuth2App:
    """One authlib client per configuration, kept so that the discovery
    document and the provider's keys are fetched once, not at each sign-in."""
    key = (config.issuer, config.client_id, config.client_secret, config.scopes)
    with _apps_lock:
        app = _apps.get(key)
        if app is None:
            registry = OAuth()
            app = registry.register(
                name=CLIENT_NAME,
                client_id=config.client_id,
                client_secret=config.client_secret,
                server_metadata_url=config.discovery_url,
                client_kwargs={
                    "scope": " ".join(config.scopes),
                    "code_challenge_method": "S256",
                    "default_timeout": config.timeout,
                },
            )
            _apps[key] = app
    return app


def forget_providers() -> None:
    """Drop the kept clients (their discovery and keys): tests, and a
    provider that moved."""
    with _apps_lock:
        _apps.clear()


def _metadata(config: OidcConfig, app: DjangoOAuth2App) -> Mapping[str, Any]:
    """The discovery document, checked to be the configured issuer's."""
    try:
        metadata = app.load_server_metadata()
    except (requests.RequestException, ValueError) as error:
        raise OidcFailure(
            OidcErrorCode.PROVIDER_UNREACHABLE,
            f"discovery at {config.discovery_url} failed: {type(error).__name__}",
        ) from None
    issuer = str(metadata.get("issuer") or "")
    if issuer.rstrip("/") != config.issuer.rstrip("/"):
        # Not kept: a corrected provider (or setting) must be read again.
        forget_providers()
        raise OidcFailure(
            OidcErrorCode.ISSUER_MISMATCH,
            f"the discovery document of {config.discovery_url} names issuer "
            f"{issuer!r}, not OIDC_ISSUER {config.issuer!r}",
        )
    return metadata


def authorization_url(
    request: HttpRequest, config: OidcConfig, redirect_uri: str
) -> str:
    """Where to send the browser to sign in; the flow's state, nonce and
    PKCE verifier are kept in ``request.session``."""
    app = _app(config)
    _metadata(config, app)
    try:
        response = app.authorize_redirect(request, redirect_uri)
    except (requests.RequestException, RuntimeError) as error:
        raise OidcFailure(
            OidcErrorCode.PROVIDER_UNREACHABLE,
            f"no authorization endpoint: {type(error).__name__}",
        ) from None
    return str(response["Location"])


def complete(request: HttpRequest, config: OidcConfig) -> VerifiedSignIn:
    """Finish the flow at the callback: check the state, exchange the code
    (with the PKCE verifier) and verify the ID token.

    Raises:
        OidcFailure: Whatever went wrong, by code.
    """
    app = _app(config)
    _provider_error(request)
    # Before any call to the provider: a callback this session did not start
    # (a forged or replayed one, or another browser's) costs nothing.
    state = request.GET.get("state") or ""
    if not state or app.framework.get_state_data(request.session, state) is None:
        raise OidcFailure(
            OidcErrorCode.STATE_MISMATCH,
            "the callback's state is not one this browser's session started",
        )
    metadata = _metadata(config, app)
    issuer = str(metadata["issuer"])
    options = {
        "iss": {"essential": True, "value": issuer},
        "aud": {"essential": True, "value": config.client_id},
    }
    try:
        token = app.authorize_access_token(request, claims_options=options)
    except MismatchingStateError:
        raise OidcFailure(
            OidcErrorCode.STATE_MISMATCH,
            "the callback's state is not one this browser's session started",
        ) from None
    except OAuthError as error:
        raise _token_endpoint_failure(error) from None
    except requests.RequestException as error:
        raise OidcFailure(
            OidcErrorCode.PROVIDER_UNREACHABLE,
            f"the token endpoint or the keys did not answer: {type(error).__name__}",
        ) from None
    except ClaimError as error:
        raise _claim_failure(error) from None
    except JoseError as error:
        raise OidcFailure(
            OidcErrorCode.TOKEN_INVALID,
            f"the ID token does not verify: {type(error).__name__}",
        ) from None
    claims = token.get("userinfo")
    if not claims or not token.get("id_token"):
        raise OidcFailure(
            OidcErrorCode.TOKEN_INVALID, "the token response has no ID token"
        )
    return VerifiedSignIn(issuer, dict(claims), str(token["id_token"]))


def _provider_error(request: HttpRequest) -> None:
    """The provider sent the browser back with ``error=`` (denied, cancelled)."""
    error = request.GET.get("error")
    if not error:
        return
    # error_description is the provider's text: logged, shortened, as data.
    description = request.GET.get("error_description", "")[:200]
    code = (
        OidcErrorCode.ACCESS_DENIED
        if error in ("access_denied", "login_required", "consent_required")
        else OidcErrorCode.PROVIDER_ERROR
    )
    raise OidcFailure(code, f"the provider answered {error[:60]!r}: {description!r}")


def _token_endpoint_failure(error: OAuthError) -> OidcFailure:
    name = str(getattr(error, "error", "") or "")
    description = str(getattr(error, "description", "") or "")[:200]
    if name == "invalid_grant":
        code = OidcErrorCode.CODE_REJECTED
    elif name in ("invalid_client", "unauthorized_client"):
        code = OidcErrorCode.CLIENT_REJECTED
    else:
        code = OidcErrorCode.PROVIDER_ERROR
    return OidcFailure(
        code, f"the token endpoint refused the code: {name!r} {description!r}"
    )


def _claim_failure(error: ClaimError) -> OidcFailure:
    claim = error.claim
    if isinstance(error, ExpiredTokenError):
        return OidcFailure(OidcErrorCode.TOKEN_EXPIRED, "the ID token has expired")
    codes = {
        "nonce": OidcErrorCode.NONCE_MISMATCH,
        "aud": OidcErrorCode.WRONG_AUDIENCE,
        "azp": OidcErrorCode.WRONG_AUDIENCE,
        "iss": OidcErrorCode.ISSUER_MISMATCH,
    }
    code = codes.get(claim, OidcErrorCode.TOKEN_INVALID)
    return OidcFailure(code, f"the ID token's {claim!r} claim: {type(error).__name__}")


def end_session_url(
    config: OidcConfig, *, id_token: str, post_logout_redirect_uri: str
) -> str | None:
    """The provider's RP-initiated logout URL (``end_session_endpoint``), or
    None when it has none or cannot be reached (the portal's own session
    ends either way)."""
    app = _app(config)
    try:
        metadata = _metadata(config, app)
    except OidcFailure as failure:
        log.warning("OIDC logout: %s (%s)", failure.code, failure.reason)
        return None
    if not metadata.get("end_session_endpoint"):
        return None
    created = app.create_logout_url(
        post_logout_redirect_uri=post_logout_redirect_uri,
        id_token_hint=id_token or None,
        client_id=config.client_id,
    )
    return str(created["url"])
