"""The portal's URLs plus two views that fail with a secret in the exception (tests only)."""

from django.http import HttpRequest, HttpResponse
from django.urls import path
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from vnpuportal.urls import (  # noqa: F401 - the error handlers under test
    handler400,
    handler403,
    handler404,
    handler500,
)
from vnpuportal.urls import urlpatterns as portal_urlpatterns


class ApiBoom(APIView):
    authentication_classes: list = []
    permission_classes = [AllowAny]

    def get(self, request: Request) -> Response:
        raise RuntimeError(f"failed with {request.headers.get('Authorization')}")


def page_boom(request: HttpRequest) -> HttpResponse:
    raise RuntimeError(f"failed with {request.headers.get('Authorization')}")


urlpatterns = [
    path("api/boom/", ApiBoom.as_view()),
    path("boom/", page_boom),
    *portal_urlpatterns,
]
