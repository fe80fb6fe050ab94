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


class OidcIdentity(models.Model):
    """Who a user is at an OpenID provider: the issuer and the subject (``sub``).

    A sign-in finds its user by these two, never by name: a provider's
    ``preferred_username`` of ``admin`` must not take over the local ``admin``.
    """

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="oidc_identity"
    )
    issuer = models.CharField(max_length=255)
    subject = models.CharField(max_length=255)
    # The groups of the last sign-in (what the role was mapped from), for admins.
    groups = models.JSONField(default=list, blank=True)
    last_sign_in_at = models.DateTimeField(null=True, blank=True)
    # Deactivated by a sign-in whose groups mapped to no role (not by an
    # admin): a later sign-in with a mapped group activates the user again.
    disabled_by_groups = models.BooleanField(default=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["issuer", "subject"], name="oidc_identity_issuer_subject"
            )
        ]

    def __str__(self) -> str:
        return f"{self.user} ({self.subject} at {self.issuer})"
