"""People, service accounts, their roles, and API tokens."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from apps.accounts.choices import Role


class Profile(models.Model):
    """The portal's view of a user: role and whether it is a service account (CI)."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="portal_profile",
    )
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.VIEWER)
    is_service_account = models.BooleanField(default=False)

    def __str__(self) -> str:
        return f"{self.user} ({self.role})"


class ApiToken(models.Model):
    """A bearer token for scripts and CI. Only a SHA-256 of the secret is stored.

    The token string is ``vnp_<prefix>_<secret>``: the prefix finds the row, the
    secret is checked against ``key_hash`` in constant time. It is shown once.
    """

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100, blank=True)
    prefix = models.CharField(max_length=16, unique=True)
    key_hash = models.CharField(max_length=64)
    # Ids of the queues the token is limited to (a queue is a cluster's: a
    # name alone would match that name in every cluster); empty means every
    # queue its user may use. Ids, not a relation: a deleted queue must not
    # widen the token by dropping out of its list.
    queue_ids = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.user} token {self.prefix}"
