"""Domain errors: raised by services and selectors, rendered as HTTP in one place.

Every error answer carries a stable ``code``. :class:`ErrorCode` names each
one and :data:`ERRORS` is the one table mapping a code to its HTTP status and
meaning: ``apps.common.api`` renders from it, the OpenAPI schema lists it
(``apps.common.schema``) and the frontend gets it as generated constants
(``manage.py error_codes``, ``frontend/src/api/errorCodes.ts``).

Services raise named errors (``Drift``, ``NoChange``... in each app's
``errors`` module), never a code as a string. Views never catch them;
``apps.common.api.exception_handler`` turns them into responses.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any


class ErrorCode(StrEnum):
    """Every ``code`` an error answer of the portal can carry."""

    # generic domain errors
    INVALID = "invalid"
    NOT_FOUND = "not_found"
    CONFLICT = "conflict"
    PERMISSION_DENIED = "permission_denied"
    CLUSTER_UNAVAILABLE = "cluster_unavailable"
    # publishing (apps.inventory.errors)
    NO_CHANGE = "no_change"
    DRIFT = "drift"
    UNREADABLE_SHAPE = "unreadable_shape"
    BREAKS_RUNNING_SLICES = "breaks_running_slices"
    NO_BASELINE = "no_baseline"
    NODE_CONFIG_NOT_READ = "node_config_not_read"
    STALE_VERSION = "stale_version"
    UNCONFIRMED_WARNINGS = "unconfirmed_warnings"
    # acting on chips (apps.inventory.errors)
    ISOLATION_STATE = "isolation_state"
    PLUGIN_RESTART_BLOCKED = "plugin_restart_blocked"
    # scheduling (apps.scheduling.errors)
    IDEMPOTENCY_CONFLICT = "idempotency_conflict"
    QUEUE_IN_USE = "queue_in_use"
    REQUEST_NOT_PENDING = "request_not_pending"
    CHIP_GONE = "chip_gone"
    PROPOSAL_DECIDED = "proposal_decided"
    NO_LOG = "no_log"
    LOG_NOT_READY = "log_not_ready"
    DRAIN_EXISTS = "drain_exists"
    NOT_CORDONED = "not_cordoned"
    # accounts (apps.accounts.errors)
    TOKEN_NOT_LIVE = "token_not_live"  # noqa: S105 - an error code, no secret
    INVALID_CREDENTIALS = "invalid_credentials"
    LOCAL_LOGIN_DISABLED = "local_login_disabled"
    # alerts (apps.alerts.errors)
    NOTIFICATIONS_NOT_CONFIGURED = "notifications_not_configured"
    ALERTMANAGER_UNAVAILABLE = "alertmanager_unavailable"
    ALERTMANAGER_REFUSED = "alertmanager_refused"
    # answers made outside the services: HTTP, authentication, the database
    NOT_AUTHENTICATED = "not_authenticated"
    AUTHENTICATION_FAILED = "authentication_failed"
    CSRF_FAILED = "csrf_failed"
    THROTTLED = "throttled"
    TOO_LARGE = "too_large"
    PARSE_ERROR = "parse_error"
    UNSUPPORTED_MEDIA_TYPE = "unsupported_media_type"
    METHOD_NOT_ALLOWED = "method_not_allowed"
    NOT_ACCEPTABLE = "not_acceptable"
    BAD_REQUEST = "bad_request"
    DATABASE_UNAVAILABLE = "database_unavailable"
    SERVER_ERROR = "server_error"
    ERROR = "error"


#: code -> (HTTP status, what it means): the one table.
ERRORS: dict[ErrorCode, tuple[int, str]] = {
    ErrorCode.INVALID: (400, "input breaks a rule; `errors` names each field"),
    ErrorCode.NOT_FOUND: (404, "no such object (or endpoint)"),
    ErrorCode.CONFLICT: (409, "the state changed under the caller"),
    ErrorCode.PERMISSION_DENIED: (403, "your role, or a token's queues, forbid it"),
    ErrorCode.CLUSTER_UNAVAILABLE: (503, "the cluster's API server failed or refused"),
    ErrorCode.NO_CHANGE: (400, "nothing to publish or adopt: the cluster has it"),
    ErrorCode.DRIFT: (409, "the live ConfigMap changed outside the portal"),
    ErrorCode.UNREADABLE_SHAPE: (
        400,
        "a component would not read the config's shape (confirm_shape)",
    ),
    ErrorCode.NODE_CONFIG_NOT_READ: (
        400,
        "the device plugin would not read the node config (confirm_unread)",
    ),
    ErrorCode.BREAKS_RUNNING_SLICES: (
        400,
        "the publish breaks running slices (confirm_breaking)",
    ),
    ErrorCode.NO_BASELINE: (
        409,
        "no config the portal owns yet: adopt the live one first",
    ),
    ErrorCode.STALE_VERSION: (
        409,
        "the node config's version is not the one the edit was based on",
    ),
    ErrorCode.UNCONFIRMED_WARNINGS: (
        400,
        "the node config has warnings the caller did not confirm (confirm_warnings)",
    ),
    ErrorCode.ISOLATION_STATE: (
        409,
        "the chip is already isolated (or being isolated), or is not isolated",
    ),
    ErrorCode.PLUGIN_RESTART_BLOCKED: (
        409,
        "a device-config restart is pending unconfirmed: a plugin restart would apply it",
    ),
    ErrorCode.IDEMPOTENCY_CONFLICT: (
        409,
        "the idempotency_key was used with different content",
    ),
    ErrorCode.QUEUE_IN_USE: (409, "the queue still has requests"),
    ErrorCode.REQUEST_NOT_PENDING: (409, "the request is no longer waiting"),
    ErrorCode.CHIP_GONE: (409, "the proposal's chip no longer exists"),
    ErrorCode.NO_LOG: (
        404,
        "the request has no log: it never had a pod, or it was not kept",
    ),
    ErrorCode.LOG_NOT_READY: (409, "its container has not started yet: no log to read"),
    ErrorCode.PROPOSAL_DECIDED: (409, "the proposal was already decided"),
    ErrorCode.DRAIN_EXISTS: (
        409,
        "a chip is already being drained (`detail.drain` names the drain)",
    ),
    ErrorCode.NOT_CORDONED: (409, "nothing to uncordon: the chip is in service"),
    ErrorCode.TOKEN_NOT_LIVE: (409, "the token is revoked or expired"),
    ErrorCode.INVALID_CREDENTIALS: (401, "wrong username or password"),
    ErrorCode.LOCAL_LOGIN_DISABLED: (
        403,
        "local passwords are turned off (LOCAL_LOGIN_ENABLED): sign in with OpenID Connect",
    ),
    ErrorCode.NOTIFICATIONS_NOT_CONFIGURED: (
        409,
        "no Alertmanager is configured (ALERTMANAGER_URL): nothing to silence",
    ),
    ErrorCode.ALERTMANAGER_UNAVAILABLE: (
        503,
        "Alertmanager could not be reached or did not answer in time",
    ),
    ErrorCode.ALERTMANAGER_REFUSED: (502, "Alertmanager answered with an error"),
    ErrorCode.NOT_AUTHENTICATED: (401, "no session or token was sent"),
    ErrorCode.AUTHENTICATION_FAILED: (401, "the token is wrong, revoked or expired"),
    ErrorCode.CSRF_FAILED: (403, "a session write without its CSRF token"),
    ErrorCode.THROTTLED: (429, "rate limited; retry after Retry-After"),
    ErrorCode.TOO_LARGE: (413, "the body is over the limit (`detail.limit_bytes`)"),
    ErrorCode.PARSE_ERROR: (400, "the body is not valid JSON"),
    ErrorCode.UNSUPPORTED_MEDIA_TYPE: (415, "the body is not JSON"),
    ErrorCode.METHOD_NOT_ALLOWED: (405, "the endpoint does not take this method"),
    ErrorCode.NOT_ACCEPTABLE: (406, "no answer in the Accept header's formats"),
    ErrorCode.BAD_REQUEST: (400, "the request could not be understood"),
    ErrorCode.DATABASE_UNAVAILABLE: (503, "the database is away; retry shortly"),
    ErrorCode.SERVER_ERROR: (500, "the server failed; the error has been logged"),
    ErrorCode.ERROR: (500, "an error without a more precise code"),
}


def http_status(code: ErrorCode) -> int:
    """The HTTP status of an error code (from :data:`ERRORS`)."""
    return ERRORS[code][0]


class DomainError(Exception):
    """Base of every error the portal's services raise on purpose.

    Subclasses name their ``code``; the HTTP status comes from the table.
    """

    code: ErrorCode = ErrorCode.ERROR

    def __init__(self, message: str, *, detail: Any = None):
        super().__init__(message)
        self.message = message
        self.detail = detail

    @property
    def http_status(self) -> int:
        return http_status(self.code)


class ValidationFailed(DomainError):
    """Input that breaks a domain rule; ``detail`` maps field paths to messages."""

    code = ErrorCode.INVALID


class NotFound(DomainError):
    code = ErrorCode.NOT_FOUND


class Conflict(DomainError):
    """The state changed under the caller (stale write, drift, double booking)."""

    code = ErrorCode.CONFLICT


class PermissionDenied(DomainError):
    code = ErrorCode.PERMISSION_DENIED


class ClusterUnavailable(DomainError):
    """The cluster's API server could not be reached or refused the call."""

    code = ErrorCode.CLUSTER_UNAVAILABLE


def error_body(exc: DomainError) -> dict[str, Any]:
    """The JSON body of a domain error's answer (every answer has this shape)."""
    body: dict[str, Any] = {"code": exc.code, "message": exc.message}
    if isinstance(exc, ValidationFailed) and isinstance(exc.detail, dict):
        body["errors"] = exc.detail
    elif exc.detail is not None:
        body["detail"] = exc.detail
    return body
