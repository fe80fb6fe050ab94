"""Session auth: cookies are Secure/HttpOnly/SameSite in production, and writes need CSRF."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db


def _login(client: APIClient):
    """Sign in as the SPA does: GET the login endpoint for the CSRF token, then POST."""
    token = client.get("/api/auth/login/").json()["csrf_token"]
    return client.post(
        "/api/auth/login/",
        {"username": "otto", "password": "pw-otto"},
        format="json",
        HTTP_X_CSRFTOKEN=token,
    )


def test_login_without_the_csrf_token_is_refused(operator):
    # given a browser that never fetched a token (a forged cross-site login form)
    client = APIClient(enforce_csrf_checks=True)
    # when it posts the credentials
    response = client.post(
        "/api/auth/login/", {"username": "otto", "password": "pw-otto"}, format="json"
    )
    # then 403 in the portal's error shape, and no session
    assert response.status_code == 403
    assert response["Content-Type"].startswith("application/json")
    assert response.json()["code"] == "permission_denied"
    assert "CSRF" in response.json()["message"]
    assert "sessionid" not in response.cookies
    assert client.get("/api/me/").status_code in (401, 403)


def test_login_with_a_wrong_csrf_token_is_refused(operator):
    client = APIClient(enforce_csrf_checks=True)
    client.get("/api/auth/login/")
    response = client.post(
        "/api/auth/login/",
        {"username": "otto", "password": "pw-otto"},
        format="json",
        HTTP_X_CSRFTOKEN="x" * 32,
    )
    assert response.status_code == 403
    assert "CSRF" in response.json()["message"]


def test_login_with_the_csrf_token_from_get_signs_in(operator):
    client = APIClient(enforce_csrf_checks=True)
    # the GET sets the cookie and returns the same token in its body
    got = client.get("/api/auth/login/")
    assert got.status_code == 200
    assert got.cookies["csrftoken"].value
    response = _login(client)
    assert response.status_code == 200, response.json()
    assert response.json()["username"] == "otto"
    assert client.get("/api/me/").json()["username"] == "otto"


def test_production_cookies_are_secure_httponly_and_samesite(settings, operator):
    settings.SESSION_COOKIE_SECURE = True
    settings.CSRF_COOKIE_SECURE = True
    response = _login(APIClient())
    assert response.status_code == 200
    session = response.cookies["sessionid"]
    assert session["secure"] is True
    assert session["httponly"] is True
    assert session["samesite"] == "Lax"
    csrf = response.cookies["csrftoken"]
    assert csrf["secure"] is True
    assert csrf["samesite"] == "Lax"
    # the SPA reads this one to send X-CSRFToken: it cannot be HttpOnly
    assert not csrf["httponly"]


def test_a_session_write_without_the_csrf_token_is_refused(operator, guide_cluster):
    client = APIClient(enforce_csrf_checks=True)
    assert _login(client).status_code == 200
    # when the browser session posts without X-CSRFToken (a forged cross-site form)
    chip_type = client.get("/api/chip-types/").json()["results"][0]
    response = client.patch(
        f"/api/chip-types/{chip_type['id']}/", {"memory_allocatable": 1}, format="json"
    )
    # then 403, in the portal's error shape, and nothing changed
    assert response.status_code == 403
    assert response.json()["code"] == "permission_denied"
    assert "CSRF" in response.json()["message"]
    again = client.get(f"/api/chip-types/{chip_type['id']}/").json()
    assert again["memory_allocatable"] == chip_type["memory_allocatable"]


def test_the_same_write_with_the_csrf_token_goes_through(operator, guide_cluster):
    client = APIClient(enforce_csrf_checks=True)
    login = _login(client)
    token = login.cookies["csrftoken"].value
    response = client.post("/api/auth/logout/", HTTP_X_CSRFTOKEN=token, format="json")
    assert response.status_code == 200


def test_api_tokens_need_no_csrf(operator, guide_cluster):
    from apps.accounts.services import token_create
    from apps.scheduling.models import Queue

    Queue.objects.create(cluster=guide_cluster, name="ci")
    plaintext = token_create(user=operator, queues=["ci"]).plaintext
    client = APIClient(enforce_csrf_checks=True)
    response = client.post(
        "/api/auth/logout/", HTTP_AUTHORIZATION=f"Bearer {plaintext}"
    )
    assert response.status_code == 200


def test_security_headers_on_every_answer(settings, viewer_client):
    response = viewer_client.get("/api/me/")
    assert response["X-Frame-Options"] == "DENY"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Referrer-Policy"] == "same-origin"
    assert response["Cross-Origin-Opener-Policy"] == "same-origin"


def test_https_redirect_spares_probes_and_metrics(settings, viewer_client):
    settings.SECURE_SSL_REDIRECT = True
    assert viewer_client.get("/api/me/").status_code == 301
    for path in ("/healthz", "/readyz", "/metrics"):
        assert viewer_client.get(path).status_code in (200, 404), path
    # behind the proxy that says https, the API answers
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    assert (
        viewer_client.get("/api/me/", HTTP_X_FORWARDED_PROTO="https").status_code == 200
    )
