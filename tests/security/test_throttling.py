"""Rate limits: login per IP and username, traffic per API token, request creation per user."""

from __future__ import annotations

import pytest
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.test import APIClient, APIRequestFactory
from rest_framework.views import APIView

from apps.accounts.services import token_create, user_ensure
from apps.scheduling.throttling import RequestCreateRateThrottle

pytestmark = pytest.mark.django_db


@pytest.fixture
def low_rates(settings):
    settings.THROTTLE_RATES = {
        "login": "3/min",
        "token": "5/min",
        "request_create": "2/min",
    }
    return settings.THROTTLE_RATES


def _login(client: APIClient, username: str, password: str, ip: str = "10.0.0.1"):
    return client.post(
        "/api/auth/login/",
        {"username": username, "password": password},
        format="json",
        REMOTE_ADDR=ip,
    )


def test_login_is_throttled_per_ip_and_username(low_rates, viewer):
    client = APIClient()
    # given three wrong passwords for vera from one address
    for _ in range(3):
        assert _login(client, "vera", "wrong").status_code == 401
    # when a fourth try comes, even with the right password, then 429 explains itself
    throttled = _login(client, "vera", "pw-vera")
    assert throttled.status_code == 429
    body = throttled.json()
    assert body["code"] == "throttled"
    assert "seconds" in body["message"]
    assert int(throttled["Retry-After"]) > 0
    # another user from the same address, and vera from another address, are not blocked
    assert _login(client, "otto", "wrong").status_code == 401
    assert _login(client, "vera", "pw-vera", ip="10.0.0.2").status_code == 200


def test_fetching_the_login_csrf_token_is_not_a_sign_in_attempt(low_rates, viewer):
    client = APIClient()
    # the SPA asks for the CSRF token before every sign-in
    for _ in range(5):
        assert client.get("/api/auth/login/", REMOTE_ADDR="10.0.0.1").status_code == 200
    for _ in range(3):
        assert _login(client, "vera", "wrong").status_code == 401
    assert _login(client, "vera", "pw-vera").status_code == 429


def test_login_throttle_ignores_case_and_spaces_in_the_username(low_rates, viewer):
    client = APIClient()
    for name in ("vera", "VERA", " Vera "):
        assert _login(client, name, "wrong").status_code == 401
    assert _login(client, "vEra", "wrong").status_code == 429


def test_login_with_a_non_object_body_is_a_400_not_a_500(low_rates):
    response = APIClient().post("/api/auth/login/", ["x"], format="json")
    assert response.status_code == 400
    assert response.json()["code"] == "invalid"


def test_each_api_token_has_its_own_budget(low_rates, ci_queue):
    user = user_ensure(username="ci", role="viewer", is_service_account=True)
    first = token_create(user=user, queues=["ci"]).plaintext
    second = token_create(user=user, queues=["ci"]).plaintext
    client = APIClient()
    for _ in range(5):
        assert (
            client.get("/api/me/", HTTP_AUTHORIZATION=f"Bearer {first}").status_code
            == 200
        )
    over = client.get("/api/me/", HTTP_AUTHORIZATION=f"Bearer {first}")
    assert over.status_code == 429
    assert over.json()["code"] == "throttled"
    # the other token of the same user is unaffected
    assert (
        client.get("/api/me/", HTTP_AUTHORIZATION=f"Bearer {second}").status_code == 200
    )


def test_session_users_are_not_counted_by_the_token_throttle(low_rates, viewer):
    client = APIClient()
    client.force_login(viewer)
    for _ in range(8):
        assert client.get("/api/me/").status_code == 200


class _Submit(APIView):
    throttle_classes = [RequestCreateRateThrottle]
    permission_classes = [IsAuthenticated]  # any signed-in user may submit here

    def get(self, request):
        return Response({"ok": True})

    def post(self, request):
        return Response({"ok": True}, status=201)


def test_request_creation_is_throttled_per_user_and_reads_are_free(
    low_rates, operator, viewer
):
    factory = APIRequestFactory()
    view = _Submit.as_view()

    def call(method: str, user):
        from rest_framework.test import force_authenticate

        request = getattr(factory, method)("/submit/", {}, format="json")
        force_authenticate(request, user=user)
        return view(request)

    assert [call("post", operator).status_code for _ in range(3)] == [201, 201, 429]
    assert call("get", operator).status_code == 200
    assert call("post", viewer).status_code == 201


def _admin_login(client, username: str, password: str, ip: str = "10.0.0.1"):
    return client.post(
        "/admin/login/",
        {"username": username, "password": password, "next": "/admin/"},
        REMOTE_ADDR=ip,
    )


def test_the_admin_login_is_throttled_like_the_api_login(low_rates, admin_user):
    from django.test import Client

    admin_user.is_staff = True  # the Django admin lets only staff in
    admin_user.save()
    client = Client()
    # given three wrong passwords on the admin's form (it answers with the form again)
    for _ in range(3):
        assert _admin_login(client, "ada", "wrong").status_code == 200
    # when a fourth try comes, even with the right password, then 429
    throttled = _admin_login(client, "ada", "pw-ada")
    assert throttled.status_code == 429
    assert throttled.json()["code"] == "throttled"
    assert int(throttled["Retry-After"]) > 0
    # showing the form is free, and another address is not blocked
    assert client.get("/admin/login/", REMOTE_ADDR="10.0.0.1").status_code == 200
    assert _admin_login(client, "ada", "pw-ada", ip="10.0.0.9").status_code == 302


def test_the_admin_and_api_logins_share_one_counter(low_rates, admin_user):
    from django.test import Client

    api = APIClient()
    for _ in range(3):
        assert _login(api, "ada", "wrong").status_code == 401
    # the API said 429 next; the admin's form must not accept more guesses
    assert _admin_login(Client(), "ada", "wrong").status_code == 429
    # and the other way round, for another account
    for _ in range(3):
        assert _admin_login(Client(), "vera", "wrong").status_code == 200
    assert _login(api, "vera", "wrong").status_code == 429
