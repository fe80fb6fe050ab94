"""OpenAPI: answers as the portal gives them (drf-spectacular's AutoSchema, one
change), and every operation documents the portal's error answers (a
postprocessing hook).

Every endpoint can answer 400, 401, 403 and 404 in the one error shape of
``apps.common.api``, any body can be too large (413) or not JSON (415), and
any caller can be throttled (429). Declaring them once here, instead of on each view, keeps the
schema true for clients and lets schemathesis check every status it gets and
every error body against ``Error``. What a view already documents (its own
description, a richer body such as the publishing conflicts) is kept.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular import openapi
from drf_spectacular.plumbing import force_instance
from rest_framework import serializers

from apps.common.exceptions import ERRORS

ERROR_COMPONENT = "Error"

ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "The portal's error answer (apps/common/api.py).",
    "properties": {
        "code": {
            "type": "string",
            "description": "stable; one of (HTTP status: meaning): "
            + "; ".join(
                f"`{code}` ({status}: {meaning})"
                for code, (status, meaning) in ERRORS.items()
            ),
        },
        "message": {"type": "string"},
        "errors": {
            "type": "object",
            "description": "field path -> messages (validation failures)",
            "additionalProperties": {"type": "array", "items": {"type": "string"}},
        },
        "detail": {"description": "extra data (a diff, a limit...)"},
    },
    "required": ["code", "message"],
}

COMMON_ERRORS = {
    "400": "invalid input: `errors` names each field (a JSON body nested deeper "
    "than 64 levels, or holding NUL or a lone surrogate, included)",
    "401": "not signed in: no session, or a missing, revoked or expired token",
    "403": "your role, or a token's queues, do not allow this",
    "404": "no such object (or endpoint)",
    "429": "rate limited; retry after the Retry-After header",
}
BODY_ERRORS = {
    "413": "the body is over the limit (DATA_UPLOAD_MAX_MEMORY_SIZE): code "
    "`too_large`, the limit in `detail.limit_bytes`",
    "415": "the body is not JSON (the API takes application/json only)",
}
METHODS = {"get", "put", "post", "patch", "delete", "head", "options", "trace"}


class AutoSchema(openapi.AutoSchema):
    """drf-spectacular's, with every field of a model's answer marked required.

    A response component lists as required only the fields that are required
    on input, or read-only: a model field with a default or ``blank=True``
    came out optional, and the frontend's generated types had to guard against
    a key every answer carries. A ModelSerializer writes every field it
    declares for every instance (null when empty), so its response component
    requires them all. Serializers of plain data keep their optional fields:
    DRF leaves out a key that a dict lacks when its field is not required.
    """

    def _map_basic_serializer(self, serializer: Any, direction: str) -> dict[str, Any]:
        schema: dict[str, Any] = super()._map_basic_serializer(serializer, direction)
        model = isinstance(force_instance(serializer), serializers.ModelSerializer)
        if direction == "response" and model and schema.get("properties"):
            schema["required"] = sorted(schema["properties"])
        return schema


def _error_response(description: str) -> dict[str, Any]:
    ref = {"$ref": f"#/components/schemas/{ERROR_COMPONENT}"}
    return {
        "description": description,
        "content": {"application/json": {"schema": ref}},
    }


def document_error_responses(
    result: dict[str, Any], generator: Any, request: Any, public: bool
) -> dict[str, Any]:
    """Add the common error responses to every operation (a POSTPROCESSING_HOOK)."""
    result.setdefault("components", {}).setdefault("schemas", {})
    result["components"]["schemas"].setdefault(ERROR_COMPONENT, ERROR_SCHEMA)
    for item in result.get("paths", {}).values():
        for method, operation in item.items():
            if method not in METHODS:
                continue
            statuses = dict(COMMON_ERRORS)
            if "requestBody" in operation:
                statuses.update(BODY_ERRORS)
            responses = operation.setdefault("responses", {})
            for status, description in statuses.items():
                existing = responses.get(status)
                if existing is None:
                    responses[status] = _error_response(description)
                elif "content" not in existing:
                    # A view's own description, with the body it left out.
                    responses[status] = _error_response(existing["description"])
            operation["responses"] = dict(sorted(responses.items()))
    return result
