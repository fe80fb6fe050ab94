"""Domain errors: raised by services and selectors, rendered as HTTP in one place.

Each error carries a stable ``code`` (for clients and tests), the HTTP status it
maps to, a message, and optional ``detail`` (field errors, a diff...). Views never
catch them; ``apps.common.api.exception_handler`` turns them into responses.
"""

from __future__ import annotations

from typing import Any


class DomainError(Exception):
    """Base of every error the portal's services raise on purpose."""

    code = "error"
    http_status = 400

    def __init__(self, message: str, *, detail: Any = None, code: str | None = None):
        super().__init__(message)
        self.message = message
        self.detail = detail
        if code:
            self.code = code


class ValidationFailed(DomainError):
    """Input that breaks a domain rule; ``detail`` maps field paths to messages."""

    code = "invalid"
    http_status = 400


class NotFound(DomainError):
    code = "not_found"
    http_status = 404


class Conflict(DomainError):
    """The state changed under the caller (stale write, drift, double booking)."""

    code = "conflict"
    http_status = 409


class PermissionDenied(DomainError):
    code = "permission_denied"
    http_status = 403


class ClusterUnavailable(DomainError):
    """The cluster's API server could not be reached or refused the call."""

    code = "cluster_unavailable"
    http_status = 503
