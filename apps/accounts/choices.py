"""Roles, ordered from least to most powerful."""

from django.db import models


class Role(models.TextChoices):
    VIEWER = "viewer", "Viewer"
    # CI pipelines: read like a viewer, submit and cancel their own requests,
    # nothing else (no templates, publishing, restarts or admin).
    CI = "ci", "CI"
    OPERATOR = "operator", "Operator"
    ADMIN = "admin", "Admin"

    @property
    def rank(self) -> int:
        return _RANK[self]

    def allows(self, required: "Role") -> bool:
        """True when this role may do what ``required`` may do."""
        return self.rank >= Role(required).rank


_RANK = {Role.VIEWER: 0, Role.CI: 1, Role.OPERATOR: 2, Role.ADMIN: 3}
