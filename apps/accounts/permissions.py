"""Role checks applied to every API view by default (the table: ``apps.accounts.policy``)."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext_lazy
from rest_framework.permissions import SAFE_METHODS, BasePermission

from apps.accounts.choices import Role
from apps.accounts.models import ApiToken
from apps.accounts.policy import QUEUE_SCOPED_WRITES, READ_ONLY_ACTIONS, least_role
from apps.accounts.selectors import user_role


class RolePermission(BasePermission):
    """The caller's role must reach the least role ``apps.accounts.policy`` names."""

    message = gettext_lazy("Your role does not allow this.")

    def has_permission(self, request: Any, view: Any) -> bool:
        role = user_role(request.user)
        if role is None:
            return False
        if not role.allows(required_role(request, view)):
            return False
        if _queue_limited(request.auth) and not _queue_scoped(request, view):
            self.message = gettext_lazy(
                "A token limited to queues may act on those queues only, not on "
                "the whole cluster."
            )
            return False
        return True


def _queue_limited(token: Any) -> bool:
    return isinstance(token, ApiToken) and bool(token.queue_ids)


def _queue_scoped(request: Any, view: Any) -> bool:
    name = type(view).__name__
    return (
        request.method in SAFE_METHODS
        or name in QUEUE_SCOPED_WRITES
        or (name, getattr(view, "action", None)) in READ_ONLY_ACTIONS
    )


def required_role(request: Any, view: Any) -> Role:
    """The role a request to ``view`` needs."""
    return least_role(
        type(view).__name__,
        action=getattr(view, "action", None),
        safe=request.method in SAFE_METHODS,
    )
