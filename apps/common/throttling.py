"""The base of the portal's rate limits; each app defines its own on it.

The limits: logins and API-token traffic (``apps.accounts.throttling``),
submissions of scheduling requests (``apps.scheduling.throttling``).

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

import logging
from typing import Any

from django.conf import settings
from rest_framework.throttling import SimpleRateThrottle

log = logging.getLogger(__name__)


class PortalThrottle(SimpleRateThrottle):
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

    def key_for(self, ident: str) -> str:
        """The cache key of ``ident`` in this throttle's scope."""
        return self.cache_format % {"scope": self.scope, "ident": ident}
