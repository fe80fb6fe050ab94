"""Reads about users and their roles."""

from __future__ import annotations

from importlib import import_module
from typing import Any

from django.conf import settings
from django.contrib.auth import SESSION_KEY, get_user_model
from django.utils import timezone

from apps.accounts.choices import Role
from apps.accounts.models import ApiToken


def user_role(user: Any) -> Role | None:
    """The role of ``user``: superusers are admins; anonymous users have none."""
    if user is None or not getattr(user, "is_authenticated", False):
        return None
    if getattr(user, "is_superuser", False):
        return Role.ADMIN
    profile = getattr(user, "portal_profile", None)
    if profile is None:
        return Role.VIEWER
    return Role(profile.role)


def connection_still_authenticated(
    *, user: Any, token_id: int | None, session_key: str | None
) -> bool:
    """Whether an open connection's credentials are still good.

    A token connection needs its token live (not revoked, not expired) and
    its user active; a session connection needs its session to still exist
    for that user (logging out ends it) and the user active.
    """

    user_id = getattr(user, "pk", None)
    if user_id is None:
        return False
    if not get_user_model().objects.filter(pk=user_id, is_active=True).exists():
        return False
    if token_id is not None:
        now = timezone.now()
        return (
            ApiToken.objects.filter(pk=token_id, user_id=user_id, revoked_at=None)
            .exclude(expires_at__lte=now)
            .exists()
        )
    if not session_key:
        return False

    store = import_module(settings.SESSION_ENGINE).SessionStore(session_key)
    return str(store.get(SESSION_KEY)) == str(user_id)


def token_group(token_id: int) -> str:
    """The Channels group of the WebSockets opened with one API token."""
    return f"api-token-{token_id}"
