"""Rate limits on accounts: sign-in attempts (API and Django admin) and API tokens.

On the portal's base throttle (``apps.common.throttling``): rates from
``settings.THROTTLE_RATES`` at each request, and no enforcement while the
cache is down.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from django.http import HttpRequest
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request

from apps.accounts.models import ApiToken
from apps.accounts.usernames import login_key
from apps.common.throttling import PortalThrottle


class LoginRateThrottle(PortalThrottle):
    """Sign-in attempts per client IP and username (guessing one account's password).

    Counting per IP *and* username means one office behind a NAT does not lock
    out its colleagues, while a guesser gets ``THROTTLE_LOGIN`` tries a period.
    """

    scope = "login"

    def __init__(self) -> None:
        super().__init__()
        self._refused_by: PortalThrottle | None = None

    def allow_request(self, request: Any, view: Any) -> bool:
        # Only sign-in attempts count: the SPA's GET for the login CSRF token
        # is not one (counted, every sign-in cost two of THROTTLE_LOGIN).
        if request.method in ("GET", "HEAD", "OPTIONS"):
            return True
        # The client's own budget first: it needs no body, so an address over
        # it costs no parse (the username below is read from the body).
        per_ip = LoginIpRateThrottle()
        if not per_ip.allow_request(request, view):
            self._refused_by = per_ip
            return False
        return super().allow_request(request, view)

    def wait(self) -> float | None:
        if self._refused_by is not None:
            return self._refused_by.wait()
        return super().wait()

    def get_cache_key(self, request: Any, view: Any) -> str:
        data = request.data if isinstance(request.data, Mapping) else {}
        # As the login form reads it (NFKC): "admin" spelt in full-width or
        # mathematical-bold letters signs in as "admin", so it must spend
        # admin's budget, not one of its own.
        username = login_key(str(data.get("username") or ""))
        # Hashed: cache keys must be short and printable whatever was typed.
        digest = hashlib.sha256(username.encode()).hexdigest()[:24]
        return self.key_for(f"{self.get_ident(request)}:{digest}")


class LoginIpRateThrottle(PortalThrottle):
    """Sign-in attempts per client IP, whatever the username (``THROTTLE_LOGIN_IP``).

    Checked by :class:`LoginRateThrottle` before it reads the body: a flood
    of large sign-in bodies from one address stops costing a parse.
    """

    scope = "login_ip"

    def get_cache_key(self, request: Any, view: Any) -> str:
        return self.key_for(str(self.get_ident(request)))


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


def sign_in_attempt_wait(request: HttpRequest) -> float | None:
    """Count an OpenID Connect sign-in step (its start or its callback).

    Against the client's budget of the password login (``THROTTLE_LOGIN_IP``,
    ``LoginIpRateThrottle``'s counter): there is no username to count under
    before the provider has answered, and a client that floods one way of
    signing in is refused by both.

    Returns:
        None when the attempt may go on, else the seconds to wait.
    """
    throttle = LoginIpRateThrottle()
    if throttle.allow_request(Request(request), None):
        return None
    return throttle.wait() or 1.0


class TokenRateThrottle(PortalThrottle):
    """Requests per API token (a runaway CI loop); session users are not counted here."""

    scope = "token"

    def get_cache_key(self, request: Any, view: Any) -> str | None:
        token = getattr(request, "auth", None)
        if not isinstance(token, ApiToken):
            return None
        return self.key_for(str(token.pk))
