"""DRF authentication with portal API tokens (``Authorization: Bearer vnp_...``)."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _
from rest_framework import authentication, exceptions

from apps.accounts.models import ApiToken
from apps.accounts.services import token_authenticate


class ApiTokenAuthentication(authentication.BaseAuthentication):
    """Accepts ``Bearer <token>`` and ``Token <token>``; anything else is not ours."""

    keywords = ("bearer", "token")

    def authenticate(self, request: Any) -> tuple[Any, ApiToken] | None:
        header = authentication.get_authorization_header(request).decode(
            errors="replace"
        )
        parts = header.split()
        if not parts or parts[0].lower() not in self.keywords:
            return None
        if len(parts) != 2:
            raise exceptions.AuthenticationFailed(_("Malformed Authorization header."))
        token = token_authenticate(parts[1])
        if token is None:
            raise exceptions.AuthenticationFailed(
                _("Invalid, expired or revoked token.")
            )
        return token.user, token

    def authenticate_header(self, request: Any) -> str:
        # Makes DRF answer 401 (not 403) to anonymous callers, with a hint.
        return 'Bearer realm="api"'
