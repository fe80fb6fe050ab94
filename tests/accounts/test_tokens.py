"""API tokens: issued once, stored hashed, scoped by role, revocable."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from apps.accounts.models import ApiToken

pytestmark = pytest.mark.django_db


def test_admin_issues_a_token_that_works_once_shown(admin_client_api, ci_queue):
    response = admin_client_api.post(
        "/api/tokens/",
        {"username": "ci-bot", "role": "operator", "queues": ["ci"]},
        format="json",
    )
    assert response.status_code == 201, response.json()
    plaintext = response.json()["token"]
    token = ApiToken.objects.get(pk=response.json()["id"])
    assert plaintext not in token.key_hash
    assert token.key_hash != plaintext
    assert token.queue_ids == [ci_queue.pk]
    assert response.json()["queues"] == ["guide/ci"]
    # the list never shows it again
    listed = admin_client_api.get("/api/tokens/").json()["results"]
    assert all("token" not in row for row in listed)

    client = APIClient()
    me = client.get("/api/me/", HTTP_AUTHORIZATION=f"Bearer {plaintext}")
    assert me.status_code == 200
    assert me.json() == {
        "username": "ci-bot",
        "role": "operator",
        "is_service_account": True,
    }

    assert admin_client_api.post(f"/api/tokens/{token.pk}/revoke/").status_code == 200
    assert (
        client.get("/api/me/", HTTP_AUTHORIZATION=f"Bearer {plaintext}").status_code
        == 401
    )


def test_wrong_token_is_401(api_client):
    response = api_client.get("/api/me/", HTTP_AUTHORIZATION="Bearer vnp_abcd1234_nope")
    assert response.status_code == 401


def test_operator_cannot_issue_tokens(operator_client):
    response = operator_client.post(
        "/api/tokens/", {"username": "x", "role": "admin"}, format="json"
    )
    assert response.status_code == 403


def test_new_service_account_needs_a_role(admin_client_api):
    response = admin_client_api.post(
        "/api/tokens/", {"username": "nobody-yet"}, format="json"
    )
    assert response.status_code == 400
    assert "role" in response.json()["errors"]


def test_createtoken_command_prints_a_working_token(capsys, ci_queue):
    call_command("createtoken", "pipeline", "--role", "viewer", "--queue", "ci")
    plaintext = capsys.readouterr().out.strip()
    assert plaintext.startswith("vnp_")
    response = APIClient().get("/api/me/", HTTP_AUTHORIZATION=f"Bearer {plaintext}")
    assert response.json()["role"] == "viewer"
    assert ApiToken.objects.get().queue_ids == [ci_queue.pk]


def test_createtoken_refuses_a_non_admin_token_without_queues(db):
    from django.contrib.auth import get_user_model
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="queues"):
        call_command("createtoken", "pipeline", "--role", "ci")
    assert not get_user_model().objects.filter(username="pipeline").exists()


def test_session_login_gives_role(api_client, operator):
    response = api_client.post(
        "/api/auth/login/", {"username": "otto", "password": "pw-otto"}, format="json"
    )
    assert response.status_code == 200
    assert response.json()["role"] == "operator"
    assert api_client.get("/api/me/").json()["username"] == "otto"


def test_tokens_list_the_role_of_their_user(admin_client_api, ci_queue):
    """The tokens page shows what each token may do: its user's role."""
    for username, role in (("ci-runner", "ci"), ("reader", "viewer")):
        response = admin_client_api.post(
            "/api/tokens/",
            {"username": username, "role": role, "queues": ["ci"]},
            format="json",
        )
        assert response.status_code == 201
        assert response.json()["role"] == role
    listed = admin_client_api.get("/api/tokens/").json()["results"]
    assert {row["username"]: row["role"] for row in listed} == {
        "ci-runner": "ci",
        "reader": "viewer",
    }
    token_id = listed[0]["id"]
    rotated = admin_client_api.post(f"/api/tokens/{token_id}/rotate/").json()
    assert rotated["role"] == listed[0]["role"]
