"""The web UI: the built single-page app (``frontend/dist``) on every non-API path.

Production serves the files Vite built; no Node runs at run time. WhiteNoise
serves ``frontend/dist`` at the site root when it exists at start-up
(``WHITENOISE_ROOT``; the hashed files under ``/assets/`` are cached forever);
this module answers everything else:

- ``index.html`` for ``/`` and every client-side route (``/chips``,
  ``/templates``...), never cached, so a new build is picked up at once;
- ``/assets/...`` from the build directory when WhiteNoise did not index it
  (the build appeared after the server started);
- unknown ``/api/...`` paths (routed to ``api_not_found`` by the URLconf, so
  that a POST is not stopped by the CSRF check first): a JSON 404 in the API's
  error shape, never the app's HTML;
- a path without its trailing slash whose slashed form is a real route
  (``/admin``, ``/api/me``) is redirected there, as ``APPEND_SLASH`` did
  before the catch-all made every path resolve.
"""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.http import (
    HttpRequest,
    HttpResponse,
    HttpResponseNotAllowed,
    HttpResponsePermanentRedirect,
    JsonResponse,
)
from django.urls import Resolver404, resolve
from django.utils.translation import gettext as _
from django.views.decorators.csrf import csrf_exempt, ensure_csrf_cookie
from django.views.static import serve

NOT_BUILT = (
    "The web UI is not built. Run: (cd frontend && npm ci && npm run build)\n"
    "The API is at /api/ and its documentation at /api/docs/.\n"
)


def _dist() -> Path:
    default = Path(settings.BASE_DIR) / "frontend" / "dist"
    return Path(getattr(settings, "FRONTEND_DIST", default))


def _slash_redirect(request: HttpRequest, path: str) -> HttpResponse | None:
    """Redirect ``/x`` to ``/x/`` when ``/x/`` is a real (non-catch-all) route."""
    if request.method not in ("GET", "HEAD") or not path or path.endswith("/"):
        return None
    try:
        match = resolve(f"/{path}/")
    except Resolver404:
        return None
    if match.func in (app, api_not_found):
        return None
    query = request.META.get("QUERY_STRING", "")
    return HttpResponsePermanentRedirect(f"/{path}/" + (f"?{query}" if query else ""))


@csrf_exempt
def api_not_found(request: HttpRequest, path: str) -> HttpResponse:
    """The API's 404, in its error shape, for a path no endpoint matches.

    CSRF-exempt like every API view: it changes nothing, and a POST without a
    token must get this JSON 404, not Django's HTML CSRF page.
    """
    redirect = _slash_redirect(request, path)
    if redirect is not None:
        return redirect
    return JsonResponse(
        {
            "code": "not_found",
            "message": _("no API endpoint at %(path)s") % {"path": f"/{path}"},
        },
        status=404,
    )


# The page itself needs no database: it loads during an outage and shows the
# API's 503s, instead of failing to open the transaction ATOMIC_REQUESTS wants.
@transaction.non_atomic_requests
@ensure_csrf_cookie
def app(request: HttpRequest, path: str = "") -> HttpResponse:
    """``index.html`` for the client-side routes (the csrftoken cookie comes with it)."""
    if path == "api" or path.startswith("api/"):
        return api_not_found(request, path)
    redirect = _slash_redirect(request, path)
    if redirect is not None:
        return redirect
    if request.method not in ("GET", "HEAD"):
        return HttpResponseNotAllowed(["GET", "HEAD"])
    dist = _dist()
    if path.startswith("assets/") or "." in path.rsplit("/", 1)[-1]:
        # A file of the build (WhiteNoise serves them when the build existed at
        # start-up); a name that is not in it is a 404, never index.html.
        return serve(request, path, document_root=str(dist))
    index = dist / "index.html"
    if not index.is_file():
        return HttpResponse(NOT_BUILT, status=503, content_type="text/plain")
    response = HttpResponse(index.read_bytes(), content_type="text/html; charset=utf-8")
    response["Cache-Control"] = "no-cache"
    return response
