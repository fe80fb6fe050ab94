"""Writes of an OpenID Connect sign-in: the user of an identity, and its role.

A verified sign-in (``apps.accounts.oidc_client.VerifiedSignIn``) finds its
user by issuer and subject (:class:`~apps.accounts.models.OidcIdentity`),
creating one on the first sign-in, and sets the role its groups map to at
*every* sign-in: a promotion or demotion at the provider counts from the next
sign-in on. A user whose groups map to no role is refused and deactivated, so
the sessions it still has stop working too (and its WebSockets close at their
next re-check); a later sign-in with a mapped group brings it back, unless an
admin deactivated it by hand.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from apps.accounts.choices import Role
from apps.accounts.models import OidcIdentity
from apps.accounts.oidc_client import OidcErrorCode, OidcFailure
from apps.accounts.oidc_config import OidcConfig, claimed_groups, role_for_groups
from apps.accounts.services import user_set_role
from apps.accounts.usernames import MAX_LENGTH, username_problem
from apps.audit.services import audit_record

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SignInOutcome:
    """The user of a sign-in and the role its groups gave (None: refused, and
    the user, if it existed, is deactivated)."""

    user: AbstractBaseUser | None
    role: Role | None
    groups: list[str] | None


@transaction.atomic
def oidc_sign_in(
    *, issuer: str, claims: Mapping[str, Any], config: OidcConfig
) -> SignInOutcome:
    """The user ``claims`` (verified) belong to, with the role of their groups.

    A refusal for want of a mapped group is an outcome, not an exception: the
    deactivation it makes must be committed.

    Raises:
        OidcFailure: No subject, or the user was deactivated by an admin
            (``oidc_account_disabled``).
    """
    subject = str(claims.get("sub") or "")
    if not subject:
        raise OidcFailure(OidcErrorCode.TOKEN_INVALID, "the ID token has no subject")
    groups = claimed_groups(claims, config.groups_claim)
    role = role_for_groups(groups, config)
    identity = (
        OidcIdentity.objects.select_for_update()
        .select_related("user")
        .filter(issuer=issuer, subject=subject)
        .first()
    )
    if identity is None:
        if role is None:
            return SignInOutcome(None, None, groups)
        identity = _new_identity(issuer, subject, claims, config)
    identity.groups = groups or []
    identity.last_sign_in_at = timezone.now()
    identity.save(update_fields=["groups", "last_sign_in_at"])
    user = identity.user
    if role is None:
        _deactivate(user, groups)
        return SignInOutcome(user, None, groups)
    _activate(user, identity)
    user_set_role(user=user, role=role)
    return SignInOutcome(user, role, groups)


def _deactivate(user: Any, groups: list[str] | None) -> None:
    if not user.is_active:
        return
    user.is_active = False
    user.save(update_fields=["is_active"])
    OidcIdentity.objects.filter(user=user).update(disabled_by_groups=True)
    audit_record(
        actor=user,
        action="user.oidc_no_role",
        target=user,
        before={"active": True},
        after={"active": False, "groups": groups or []},
    )


def _activate(user: Any, identity: OidcIdentity) -> None:
    if user.is_active:
        return
    if not identity.disabled_by_groups:
        raise OidcFailure(
            OidcErrorCode.ACCOUNT_DISABLED,
            f"user {user.pk} was deactivated in the portal",
        )
    user.is_active = True
    user.save(update_fields=["is_active"])
    identity.disabled_by_groups = False
    identity.save(update_fields=["disabled_by_groups"])
    audit_record(
        actor=user,
        action="user.oidc_role_back",
        target=user,
        before={"active": False},
        after={"active": True},
    )


def _new_identity(
    issuer: str, subject: str, claims: Mapping[str, Any], config: OidcConfig
) -> OidcIdentity:
    user_model = get_user_model()
    name = _free_username(claims, subject, config)
    user = user_model.objects.create(username=name, email=_email(claims))
    user.set_unusable_password()  # never a local password: the provider decides
    user.save()
    user_set_role(user=user, role=Role.VIEWER)
    log.info("OIDC: first sign-in of %r (subject at %s)", name, issuer)
    return OidcIdentity.objects.create(user=user, issuer=issuer, subject=subject)


def _email(claims: Mapping[str, Any]) -> str:
    email = claims.get("email")
    return email[:254] if isinstance(email, str) else ""


def _free_username(claims: Mapping[str, Any], subject: str, config: OidcConfig) -> str:
    """A name for a new user: the username claim (then email) when it is a
    valid username nobody has; else that name with a part of the subject's
    hash; else ``oidc-<hash>``. Never an existing user's: that user is not
    this identity."""
    user_model = get_user_model()
    digest = hashlib.sha256(subject.encode()).hexdigest()[:10]
    wanted = [
        claims.get(config.username_claim),
        claims.get("email"),
    ]
    for value in wanted:
        if not isinstance(value, str) or not value:
            continue
        base = value[: MAX_LENGTH - 11]
        for candidate in (base, f"{base}.{digest}"):
            if username_problem(candidate) is None and not (
                user_model.objects.filter(username__iexact=candidate).exists()
            ):
                return candidate
    return f"oidc-{digest}"
