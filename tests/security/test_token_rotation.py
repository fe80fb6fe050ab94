"""Token rotation: a new plaintext once, the old one dead at once, audited, admins only."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from apps.accounts.models import ApiToken
from apps.accounts.services import token_create, token_revoke, user_ensure
from apps.audit.models import AuditEvent

pytestmark = pytest.mark.django_db


@pytest.fixture
def ci_token(admin_user, ci_queue):
    user = user_ensure(username="ci-bot", role="operator", is_service_account=True)
    return token_create(user=user, name="pipeline", queues=["ci"], actor=admin_user)


def _me(plaintext: str) -> int:
    return (
        APIClient()
        .get("/api/me/", HTTP_AUTHORIZATION=f"Bearer {plaintext}")
        .status_code
    )


def test_rotation_issues_a_new_token_and_kills_the_old_one(admin_client_api, ci_token):
    assert _me(ci_token.plaintext) == 200
    # when an admin rotates the token
    response = admin_client_api.post(f"/api/tokens/{ci_token.token.pk}/rotate/")
    # then the answer holds the new plaintext, once, with the same scope
    assert response.status_code == 201, response.json()
    body = response.json()
    new_plain = body["token"]
    assert new_plain.startswith("vnp_")
    assert new_plain != ci_token.plaintext
    assert body["name"] == "pipeline"
    assert body["queues"] == ["guide/ci"]
    assert body["username"] == "ci-bot"
    assert body["revoked_at"] is None
    # and the old token stops working at once; the new one works
    assert _me(ci_token.plaintext) == 401
    assert _me(new_plain) == 200
    old = ApiToken.objects.get(pk=ci_token.token.pk)
    assert old.revoked_at is not None
    # the plaintext is never stored or listed
    new = ApiToken.objects.get(pk=body["id"])
    assert new_plain.split("_", 2)[2] not in new.key_hash
    listed = admin_client_api.get("/api/tokens/").json()["results"]
    assert all("token" not in row for row in listed)
    # and the rotation is audited, without the secret
    event = AuditEvent.objects.get(action="token.rotate")
    assert event.actor.username == "ada"
    assert event.before == {"token_id": old.pk, "prefix": old.prefix}
    assert event.after["prefix"] == new.prefix
    assert new_plain not in str(event.before) + str(event.after)


def test_a_revoked_token_cannot_be_rotated(admin_client_api, admin_user, ci_token):
    token_revoke(token_id=ci_token.token.pk, actor=admin_user)
    response = admin_client_api.post(f"/api/tokens/{ci_token.token.pk}/rotate/")
    assert response.status_code == 409
    assert response.json()["code"] == "token_not_live"
    assert ApiToken.objects.count() == 1


def test_rotating_twice_keeps_exactly_one_live_token(admin_client_api, ci_token):
    first = admin_client_api.post(f"/api/tokens/{ci_token.token.pk}/rotate/")
    again = admin_client_api.post(f"/api/tokens/{ci_token.token.pk}/rotate/")
    assert first.status_code == 201
    assert again.status_code == 409
    assert ApiToken.objects.filter(revoked_at__isnull=True).count() == 1


@pytest.mark.parametrize("who", ["viewer_client", "operator_client"])
def test_only_admins_rotate(request, who, ci_token):
    client = request.getfixturevalue(who)
    assert client.post(f"/api/tokens/{ci_token.token.pk}/rotate/").status_code == 403
    assert _me(ci_token.plaintext) == 200


def test_a_token_cannot_rotate_itself_unless_admin(ci_token):
    # the operator CI token tries to renew itself: refused, and still alive
    response = APIClient().post(
        f"/api/tokens/{ci_token.token.pk}/rotate/",
        HTTP_AUTHORIZATION=f"Bearer {ci_token.plaintext}",
    )
    assert response.status_code == 403
    assert _me(ci_token.plaintext) == 200


def test_unknown_token_is_404(admin_client_api):
    response = admin_client_api.post("/api/tokens/999999/rotate/")
    assert response.status_code == 404
    assert response.json()["code"] == "not_found"
