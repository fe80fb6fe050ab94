"""The one place where errors become HTTP responses (Baserow's pattern).

Every error body has the same shape, so scripts and the UI handle one format:

    {"code": "invalid", "message": "...", "errors": {"field": ["..."]}, "detail": ...}

``errors`` (field path -> messages) is present for validation failures so a form
can show each message on its field; ``detail`` carries extra data (a diff...).
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import RequestDataTooBig
from django.db import connections
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler
from rest_framework.views import set_rollback

from apps.common.exceptions import DomainError, ErrorCode, error_body
from apps.common.http_errors import too_large_body
from apps.common.translated import translated


def _flatten(errors: Any, prefix: str = "") -> dict[str, list[str]]:
    """DRF nests errors for nested serializers; flatten to ``a.b`` paths."""
    flat: dict[str, list[str]] = {}
    if isinstance(errors, dict):
        for key, value in errors.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            flat.update(_flatten(value, path))
    elif (
        isinstance(errors, list)
        and errors
        and all(not isinstance(e, dict | list) for e in errors)
    ):
        flat[prefix or "non_field_errors"] = [str(e) for e in errors]
    elif isinstance(errors, list):
        for index, value in enumerate(errors):
            flat.update(_flatten(value, f"{prefix}[{index}]"))
    else:
        flat[prefix or "non_field_errors"] = [str(errors)]
    return flat


def _message(errors: dict[str, list[str]]) -> str:
    first_field, messages = next(iter(errors.items()))
    return (
        f"{first_field}: {messages[0]}"
        if first_field != "non_field_errors"
        else messages[0]
    )


def atomic_inside(view: Any) -> Any:
    """Mark an async view that runs its DRF view in a transaction of its own
    (ATOMIC_REQUESTS cannot wrap an async view): errors roll that one back."""
    view.atomic_inside = True
    return view


def _view_is_atomic(context: dict[str, Any]) -> bool:
    request = context.get("request")
    match = getattr(getattr(request, "_request", request), "resolver_match", None)
    func = getattr(match, "func", None)
    return getattr(func, "atomic_inside", False) or not getattr(
        func, "_non_atomic_requests", None
    )


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """Render DomainError and DRF's exceptions in the portal's error shape."""
    if _view_is_atomic(context):
        return _render(exc, context)
    # A view outside ATOMIC_REQUESTS (publishing) commits its own steps; an
    # atomic block open around it is not the request's (a test's
    # transaction), so the rollback marks DRF sets on error are undone.
    marks = {
        db.alias: db.needs_rollback
        for db in connections.all(initialized_only=True)
        if db.in_atomic_block
    }
    try:
        return _render(exc, context)
    finally:
        for alias, mark in marks.items():
            connections[alias].needs_rollback = mark


def _render(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, DomainError):
        # ATOMIC_REQUESTS: an error answer must never leave a partial write.
        set_rollback()
        return Response(translated(error_body(exc)), status=exc.http_status)
    if isinstance(exc, RequestDataTooBig):
        # Raised while DRF reads the body; unhandled it would be Django's bare
        # 400 (or, with DEBUG, its debug page).
        set_rollback()
        return Response(
            too_large_body(), status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
        )
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, exceptions.ValidationError):
        errors = _flatten(response.data)
        response.data = {
            "code": ErrorCode.INVALID,
            "message": _message(errors),
            "errors": errors,
        }
    else:
        detail = (
            response.data.get("detail")
            if isinstance(response.data, dict)
            else response.data
        )
        code = getattr(detail, "code", None) or getattr(
            exc, "default_code", ErrorCode.ERROR
        )
        response.data = {"code": str(code), "message": str(detail)}
    return response
