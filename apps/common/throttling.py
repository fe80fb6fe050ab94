"""Rate limits: logins (API and Django admin), API-token traffic, and submissions.

DRF throttles counting in the Django cache: ``locmem`` in the embedded default
(one process), Redis (``CACHE_URL=redis://...``) in a deployment, so that every
web replica counts together. Rates come from ``settings.THROTTLE_RATES`` at
each request (not at import, as DRF's own classes do), so an operator's
environment and the tests' ``settings`` fixture both take effect.

When the cache is down the limits are not enforced (logged), rather than
every API call failing with it.

A throttled call gets 429 with ``Retry-After`` and the portal's error body
(``{"code": "throttled", "message": "... available in N seconds."}``).
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.http import HttpRequest
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.permissions import SAFE_METHODS
from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle

from apps.accounts.models import ApiToken

log = logging.getLogger(__name__)


class _PortalThrottle(SimpleRateThrottle):
    """A SimpleRateThrottle whose rate is read from settings when it is used."""

    def get_rate(self) -> str | None:
        return getattr(settings, "THROTTLE_RATES", {}).get(self.scope)

    def allow_request(self, request: Any, view: Any) -> bool:
        # A cache outage (Redis restarting) must not take the API down with it:
        # the limit is not enforced until the cache is back.
        try:
            return super().allow_request(request, view)
        except (ConnectionError, OSError, TimeoutError) as exc:
            log.warning(
                "throttle %s skipped: the cache failed (%s)",
                self.scope,
                type(exc).__name__,
            )
            return True
        except Exception as exc:
            if type(exc).__module__.split(".")[0] != "redis":
                raise
            log.warning(
                "throttle %s skipped: the cache failed (%s)",
                self.scope,
                type(exc).__name__,
            )
            return True

    def _key(self, ident: str) -> str:
        return self.cache_format % {"scope": self.scope, "ident": ident}


class LoginRateThrottle(_PortalThrottle):
    """Sign-in attempts per client IP and username (guessing one account's password).

    Counting per IP *and* username means one office behind a NAT does not lock
    out its colleagues, while a guesser gets ``THROTTLE_LOGIN`` tries a period.
    """

    scope = "login"

    def allow_request(self, request: Any, view: Any) -> bool:
        # Only sign-in attempts count: the SPA's GET for the login CSRF token
        # is not one (counted, every sign-in cost two of THROTTLE_LOGIN).
        if request.method in ("GET", "HEAD", "OPTIONS"):
            return True
        return super().allow_request(request, view)

    def get_cache_key(self, request: Any, view: Any) -> str:
        data = request.data if isinstance(request.data, Mapping) else {}
        username = str(data.get("username") or "")[:150].strip().lower()
        # Hashed: cache keys must be short and printable whatever was typed.
        digest = hashlib.sha256(username.encode()).hexdigest()[:24]
        return self._key(f"{self.get_ident(request)}:{digest}")


def login_attempt_wait(request: HttpRequest) -> float | None:
    """Count a sign-in attempt made outside DRF (the Django admin's login form).

    It shares ``LoginRateThrottle``'s counter (same scope, client IP and
    username), so a guesser refused by ``/api/auth/login/`` is refused by
    ``/admin/login/`` too, and the other way round.

    Returns:
        None when the attempt may go on, else the seconds to wait.
    """
    # A DRF view of the same request: the throttle reads ``data`` and ``META``
    # from it. Form bodies are parsed from (and left in) Django's request.POST.
    drf_request = Request(request, parsers=[FormParser(), MultiPartParser()])
    throttle = LoginRateThrottle()
    if throttle.allow_request(drf_request, None):
        return None
    return throttle.wait() or 1.0


class TokenRateThrottle(_PortalThrottle):
    """Requests per API token (a runaway CI loop); session users are not counted here."""

    scope = "token"

    def get_cache_key(self, request: Any, view: Any) -> str | None:
        token = getattr(request, "auth", None)
        if not isinstance(token, ApiToken):
            return None
        return self._key(str(token.pk))


class RequestCreateRateThrottle(_PortalThrottle):
    """Submissions of scheduling requests per user (writes only; reads are free)."""

    scope = "request_create"

    def get_cache_key(self, request: Any, view: Any) -> str | None:
        if request.method in SAFE_METHODS:
            return None
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            return self._key(f"user:{user.pk}")
        return self._key(f"ip:{self.get_ident(request)}")
