"""Rate limit on submissions of scheduling requests (``THROTTLE_REQUEST_CREATE``)."""

from __future__ import annotations

from typing import Any

from rest_framework.permissions import SAFE_METHODS

from apps.common.throttling import PortalThrottle


class RequestCreateRateThrottle(PortalThrottle):
    """Submissions of scheduling requests per user (writes only; reads are free)."""

    scope = "request_create"

    def get_cache_key(self, request: Any, view: Any) -> str | None:
        if request.method in SAFE_METHODS:
            return None
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            return self.key_for(f"user:{user.pk}")
        return self.key_for(f"ip:{self.get_ident(request)}")
