"""WebSocket: foreign origins and anonymous, bad, revoked or expired tokens are refused."""

from __future__ import annotations

from datetime import timedelta

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.utils import timezone

from apps.accounts.services import token_create, token_revoke, user_ensure
from vnpuportal.asgi import application

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.websockets]


async def _connect(path: str, *, origin: bytes | None, token: str | None = None):
    headers = []
    if origin is not None:
        headers.append((b"origin", origin))
    if token is not None:
        headers.append((b"authorization", f"Bearer {token}".encode()))
    communicator = WebsocketCommunicator(application, path, headers=headers)
    connected, code = await communicator.connect(timeout=5)
    if connected:
        await communicator.disconnect()
    return connected, code


@pytest.fixture
def viewer_token(db):
    user = user_ensure(username="screen", role="viewer")
    return token_create(user=user)


@pytest.mark.parametrize(
    "origin",
    [
        b"http://evil.example",
        b"https://localhost.evil.example",
        b"null",
        None,  # no Origin at all: a script must say where it comes from
    ],
)
async def test_a_foreign_or_missing_origin_is_refused_even_with_a_good_token(
    guide_cluster, viewer_token, origin
):
    connected, _ = await _connect(
        f"/ws/clusters/{guide_cluster.pk}/", origin=origin, token=viewer_token.plaintext
    )
    assert not connected


async def test_an_allowed_origin_with_a_good_token_connects(
    guide_cluster, viewer_token
):
    connected, _ = await _connect(
        f"/ws/clusters/{guide_cluster.pk}/",
        origin=b"http://localhost:8000",
        token=viewer_token.plaintext,
    )
    assert connected


async def test_anonymous_is_refused_with_4401(guide_cluster):
    connected, code = await _connect(
        f"/ws/clusters/{guide_cluster.pk}/", origin=b"http://localhost"
    )
    assert not connected
    assert code == 4401


@pytest.mark.parametrize(
    "token",
    ["vnp_00000000_nope", "not-a-token", "vnp_", ""],
)
async def test_a_bad_token_is_refused(guide_cluster, token):
    connected, code = await _connect(
        f"/ws/clusters/{guide_cluster.pk}/", origin=b"http://localhost", token=token
    )
    assert not connected
    assert code == 4401


async def test_revoked_and_expired_tokens_are_refused(guide_cluster, admin_user):
    user = await sync_to_async(user_ensure)(username="old-ci", role="viewer")
    revoked = await sync_to_async(token_create)(user=user)
    await sync_to_async(token_revoke)(token_id=revoked.token.pk, actor=admin_user)
    expired = await sync_to_async(token_create)(
        user=user, expires_at=timezone.now() - timedelta(seconds=1)
    )
    for issued in (revoked, expired):
        connected, code = await _connect(
            f"/ws/clusters/{guide_cluster.pk}/",
            origin=b"http://localhost",
            token=issued.plaintext,
        )
        assert not connected
        assert code == 4401
