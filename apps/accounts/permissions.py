"""Role checks applied to every API view by default."""

from __future__ import annotations

from typing import Any

from rest_framework.permissions import SAFE_METHODS, BasePermission

from apps.accounts.choices import Role
from apps.accounts.selectors import user_role


class RolePermission(BasePermission):
    """Reads need ``viewer``; writes need the view's ``write_role`` (default ``operator``).

    A view may set ``read_role`` / ``write_role``, or ``action_roles`` mapping a
    ViewSet action name to the role it needs.
    """

    message = "Your role does not allow this."

    def has_permission(self, request: Any, view: Any) -> bool:
        role = user_role(request.user)
        if role is None:
            return False
        return role.allows(required_role(request, view))


def required_role(request: Any, view: Any) -> Role:
    """The role a request to ``view`` needs."""
    action = getattr(view, "action", None)
    action_roles = getattr(view, "action_roles", {})
    if action and action in action_roles:
        return Role(action_roles[action])
    if request.method in SAFE_METHODS:
        return Role(getattr(view, "read_role", Role.VIEWER))
    return Role(getattr(view, "write_role", Role.OPERATOR))
