"""Kubernetes API errors rendered as ``Status`` objects."""

from __future__ import annotations

import json
from typing import Any

CONFLICT_MESSAGE = (
    "the object has been modified; please apply your changes to the latest "
    "version and try again"
)


class ApiError(Exception):
    """An error that the API server answers with a ``Status`` object."""

    def __init__(
        self,
        code: int,
        reason: str,
        message: str,
        details: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details
        self.headers = headers or {}

    def status(self) -> dict[str, Any]:
        """Return the ``Status`` object for this error."""
        body: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        }
        if self.details is not None:
            body["details"] = self.details
        return body

    def body(self) -> bytes:
        """Return the JSON bytes of the ``Status`` object."""
        return json.dumps(self.status()).encode()


def _details(plural: str, group: str, name: str | None) -> dict[str, Any]:
    details: dict[str, Any] = {"kind": plural}
    if group:
        details["group"] = group
    if name:
        details["name"] = name
    return details


def _qualified(plural: str, group: str) -> str:
    return f"{plural}.{group}" if group else plural


def not_found(plural: str, group: str, name: str) -> ApiError:
    """``404 NotFound`` for an object."""
    return ApiError(
        404,
        "NotFound",
        f'{_qualified(plural, group)} "{name}" not found',
        _details(plural, group, name),
    )


def already_exists(plural: str, group: str, name: str) -> ApiError:
    """``409 AlreadyExists`` for a create of an existing name."""
    return ApiError(
        409,
        "AlreadyExists",
        f'{_qualified(plural, group)} "{name}" already exists',
        _details(plural, group, name),
    )


def conflict(plural: str, group: str, name: str) -> ApiError:
    """``409 Conflict`` for a write with a stale resourceVersion."""
    return ApiError(
        409,
        "Conflict",
        f"Operation cannot be fulfilled on {_qualified(plural, group)} "
        f'"{name}": {CONFLICT_MESSAGE}',
        _details(plural, group, name),
    )


def invalid(
    kind: str, group: str, name: str, causes: list[tuple[str, str]]
) -> ApiError:
    """``422 Invalid`` with field causes ``(field, message)``."""
    text = "; ".join(f"{field}: {msg}" for field, msg in causes)
    details: dict[str, Any] = {
        "name": name,
        "kind": kind,
        "causes": [
            {"reason": "FieldValueInvalid", "message": msg, "field": field}
            for field, msg in causes
        ],
    }
    if group:
        details["group"] = group
    return ApiError(422, "Invalid", f'{kind} "{name}" is invalid: {text}', details)


def bad_request(message: str) -> ApiError:
    """``400 BadRequest``."""
    return ApiError(400, "BadRequest", message)


def unauthorized() -> ApiError:
    """``401 Unauthorized`` for a missing or unknown token."""
    return ApiError(401, "Unauthorized", "Unauthorized")


def forbidden(message: str, details: dict[str, Any] | None = None) -> ApiError:
    """``403 Forbidden``."""
    return ApiError(403, "Forbidden", message, details)


def method_not_allowed(
    message: str = "the server does not allow this method on the requested resource",
) -> ApiError:
    """``405 MethodNotAllowed``."""
    return ApiError(405, "MethodNotAllowed", message)


def gone(message: str) -> ApiError:
    """``410 Expired`` for a resourceVersion or continue token that is too old."""
    return ApiError(410, "Expired", message)


def too_many_requests(message: str, details: dict[str, Any] | None = None) -> ApiError:
    """``429 TooManyRequests``."""
    return ApiError(429, "TooManyRequests", message, details, {"Retry-After": "1"})


def internal_error(message: str) -> ApiError:
    """``500 InternalError``."""
    return ApiError(500, "InternalError", message)


def unavailable(message: str) -> ApiError:
    """``503 ServiceUnavailable``."""
    return ApiError(503, "ServiceUnavailable", message, headers={"Retry-After": "1"})
