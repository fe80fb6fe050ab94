"""Every URL under /api/ refuses anonymous callers, found by walking the URLconf.

Walking the resolver (instead of listing endpoints by hand) means a future
endpoint cannot escape this test: it is checked the moment it is routed.
"""

from __future__ import annotations

import re

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

# The endpoints that must answer anonymous callers, or nobody could sign in:
# the password login, what the login page offers, and OpenID Connect's two
# browser redirects (which only ever redirect, to the provider or the SPA).
PUBLIC = {
    "/api/auth/login/",
    "/api/auth/config/",
    "/api/auth/oidc/login/",
    "/api/auth/oidc/callback/",
}
METHODS = ("get", "post", "put", "patch", "delete")


def _route_to_path(fragment: str) -> str:
    fragment = fragment.lstrip("^").rstrip("$")
    fragment = re.sub(r"\(\?P<format>[^)]*\)", "json", fragment)
    fragment = re.sub(r"\(\?P<\w+>[^)]*\)", "1", fragment)
    fragment = re.sub(r"<(?:\w+:)?(\w+)>", "1", fragment)
    return fragment.replace("\\.", ".").replace("/?", "/")


def _walk(patterns, prefix: str = "") -> list[str]:
    paths: list[str] = []
    for entry in patterns:
        route = _route_to_path(str(entry.pattern))
        if isinstance(entry, URLResolver):
            paths.extend(_walk(entry.url_patterns, prefix + route))
        elif isinstance(entry, URLPattern):
            paths.append("/" + prefix + route)
    return paths


def api_paths() -> list[str]:
    return sorted(
        {p for p in _walk(get_resolver().url_patterns) if p.startswith("/api/")}
    )


def test_the_walk_finds_the_endpoints():
    paths = api_paths()
    # given the URLconf, when walked, then it sees routers, actions and plain views
    assert "/api/clusters/" in paths
    assert "/api/clusters/1/summary/" in paths
    assert "/api/templates/1/" in paths
    assert "/api/schema/" in paths
    assert len(paths) > 30
    # the public exceptions are real routes (a renamed login must update PUBLIC)
    assert set(paths) >= PUBLIC


@pytest.mark.django_db
@pytest.mark.parametrize("path", [p for p in api_paths() if p not in PUBLIC])
def test_anonymous_is_refused_everywhere(api_client, path):
    for method in METHODS:
        response = getattr(api_client, method)(path)
        assert response.status_code in (401, 403), (
            f"{method.upper()} {path} -> {response.status_code}"
        )


@pytest.mark.django_db
def test_login_refuses_bad_credentials(api_client, viewer):
    response = api_client.post(
        "/api/auth/login/", {"username": "vera", "password": "wrong"}, format="json"
    )
    assert response.status_code == 401
    response = api_client.post("/api/auth/login/", {"username": "vera"}, format="json")
    assert response.status_code == 400
    assert "password" in response.json()["errors"]
