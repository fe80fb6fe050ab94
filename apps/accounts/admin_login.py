"""The Django admin's login page, throttled with the API login's counter."""

from __future__ import annotations

import math
from typing import Any

from django.contrib import admin
from django.http import HttpRequest, HttpResponse, JsonResponse
from rest_framework.exceptions import Throttled

from apps.accounts.oidc_config import local_login_enabled
from apps.accounts.throttling import login_attempt_wait
from apps.common.exceptions import ERRORS, ErrorCode


def admin_login(request: HttpRequest, extra_context: Any = None) -> HttpResponse:
    """``admin.site.login``, but a password guesser gets 429 as on ``/api/auth/login/``.

    Only form posts count (showing the form is free); the counter is the API
    login's (``THROTTLE_LOGIN`` per client IP and username).
    """
    if request.method == "POST" and not local_login_enabled():
        return JsonResponse(
            {
                "code": ErrorCode.LOCAL_LOGIN_DISABLED,
                "message": "Local passwords are turned off here.",
            },
            status=ERRORS[ErrorCode.LOCAL_LOGIN_DISABLED][0],
        )
    if request.method == "POST":
        wait = login_attempt_wait(request)
        if wait is not None:
            seconds = max(1, math.ceil(wait))
            # The API login's error body and message, word for word.
            message = str(Throttled(wait=seconds).detail)
            response = JsonResponse(
                {"code": ErrorCode.THROTTLED, "message": message},
                status=ERRORS[ErrorCode.THROTTLED][0],
            )
            response["Retry-After"] = str(seconds)
            return response
    return admin.site.login(request, extra_context)
