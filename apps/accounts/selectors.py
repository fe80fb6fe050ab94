"""Reads about users and their roles."""

from __future__ import annotations

from typing import Any

from apps.accounts.choices import Role


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
