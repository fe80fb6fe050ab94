"""Django's error views (``handler400/403/404/500``): the portal's error body, nothing more.

DRF renders the errors of API views itself (``apps.common.api``); these answer
what happens outside them: a disallowed Host, a non-DRF view's 404, and any
exception nothing caught. They never show the exception, a traceback or a
setting, whatever DEBUG says about Django's own pages; the exception itself
goes to the log (scrubbed, see ``apps.common.logging``).
"""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.translation import gettext as _

from apps.common.exceptions import ERRORS, DomainError, ErrorCode, error_body
from apps.common.translated import translated


def _answer(request: HttpRequest, code: ErrorCode, message: str) -> HttpResponse:
    status = ERRORS[code][0]
    wants_json = request.path.startswith("/api/") or "json" in request.headers.get(
        "Accept", ""
    )
    if wants_json:
        return JsonResponse({"code": code, "message": message}, status=status)
    return HttpResponse(
        message + "\n", status=status, content_type="text/plain; charset=utf-8"
    )


def too_large_body(limit: int | None = None) -> dict[str, object]:
    """The 413 body for a request over ``limit`` bytes: says why and the limit.

    The default limit is Django's ``DATA_UPLOAD_MAX_MEMORY_SIZE``; the ASGI
    body limit (``apps.common.body_limit``) passes its own.
    """
    if limit is None:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    return {
        "code": ErrorCode.TOO_LARGE,
        "message": _("the request body is larger than the limit of %(limit)d bytes")
        % {"limit": limit},
        "detail": {"limit_bytes": limit},
    }


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    if isinstance(exception, RequestDataTooBig):
        # Django files it as a suspicious 400; the caller needs to know it was
        # the size, and what size would do.
        return JsonResponse(too_large_body(), status=ERRORS[ErrorCode.TOO_LARGE][0])
    return _answer(
        request, ErrorCode.BAD_REQUEST, _("The request could not be understood.")
    )


def permission_denied(request: HttpRequest, exception: Exception) -> HttpResponse:
    return _answer(request, ErrorCode.PERMISSION_DENIED, _("You may not do this."))


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """``CSRF_FAILURE_VIEW``: the portal's error body instead of Django's HTML page."""
    return _answer(
        request,
        ErrorCode.CSRF_FAILED,
        _("CSRF check failed: reload the page and retry."),
    )


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    return _answer(request, ErrorCode.NOT_FOUND, _("Nothing here."))


def server_error(request: HttpRequest) -> HttpResponse:
    return _answer(
        request,
        ErrorCode.SERVER_ERROR,
        _("The server failed to answer this request; the error has been logged."),
    )


def service_unavailable(
    request: HttpRequest, *, code: ErrorCode, message: str, retry_after: int
) -> HttpResponse:
    """503 for a dependency that is away (``apps.common.db_unavailable``)."""
    response = _answer(request, code, message)
    response["Retry-After"] = str(retry_after)
    return response


def domain_error(exc: DomainError) -> JsonResponse:
    """A domain error answered outside DRF (the async views), in the same shape."""
    return JsonResponse(translated(error_body(exc)), status=exc.http_status)
