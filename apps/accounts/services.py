"""Writes about users, roles and tokens."""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
from dataclasses import dataclass
from datetime import datetime

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.accounts.choices import Role
from apps.accounts.errors import TokenNotLive
from apps.accounts.models import ApiToken, Profile
from apps.accounts.queue_refs import queue_ids_of, queue_labels_of
from apps.accounts.selectors import token_group, user_role
from apps.accounts.usernames import username_problem
from apps.audit.services import audit_record
from apps.common.exceptions import NotFound, ValidationFailed

log = logging.getLogger(__name__)

TOKEN_PREFIX = "vnp"  # noqa: S105 - a public marker, not a secret


@dataclass(frozen=True)
class IssuedToken:
    """A freshly made token: ``plaintext`` exists only here, never in the database."""

    token: ApiToken
    plaintext: str


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def user_set_role(
    *,
    user: AbstractBaseUser,
    role: Role | str,
    is_service_account: bool | None = None,
    actor: AbstractBaseUser | None = None,
) -> Profile:
    """Give ``user`` a role (creating its profile); a change of role is audited."""
    if role not in Role.values:
        raise ValidationFailed(
            _("unknown role"),
            detail={"role": [_("must be one of %(roles)s") % {"roles": Role.values}]},
        )
    profile, created = Profile.objects.get_or_create(user=user)
    before = None if created else profile.role
    profile.role = Role(role)
    if is_service_account is not None:
        profile.is_service_account = is_service_account
    profile.save()
    if before != profile.role:
        audit_record(
            actor=actor or user,
            action="user.role",
            target=user,
            before={"role": before},
            after={"role": profile.role},
        )
    return profile


@transaction.atomic
def user_ensure(
    *, username: str, role: Role | str, is_service_account: bool = False
) -> AbstractBaseUser:
    """Return the user called ``username``, creating it (without a password) if needed.

    Raises:
        ValidationFailed: Naming ``username`` when a new user could not be
            told apart from another (``apps.accounts.usernames``).
    """
    user_model = get_user_model()
    problem = username_problem(username)
    # An existing user keeps its name, whatever it is; only new ones are checked.
    if problem and not user_model.objects.filter(username=username).exists():
        raise ValidationFailed(f"username: {problem}", detail={"username": [problem]})
    user, created = user_model.objects.get_or_create(username=username)
    if created:
        user.set_unusable_password()
        user.save()
    user_set_role(
        user=user, role=role, is_service_account=is_service_account if created else None
    )
    return user


def _new_secret() -> tuple[str, str]:
    """A fresh (prefix, secret) pair; the prefix is unique in practice (32 bits)."""
    return secrets.token_hex(4), secrets.token_urlsafe(32)


@transaction.atomic
def token_create(
    *,
    user: AbstractBaseUser,
    name: str = "",
    queues: list[str] | None = None,
    expires_at: datetime | None = None,
    actor: AbstractBaseUser | None = None,
) -> IssuedToken:
    """Issue a new API token for ``user``; the plaintext is returned once.

    ``queues`` are ``cluster/queue`` references (a bare name where one cluster
    has it). Only an admin's token may go without: any other is limited to
    the queues it names, so a leaked CI token reaches one team's queues.

    Raises:
        ValidationFailed: A queue reference names no queue or is ambiguous,
            or a non-admin's token names none (``queues``).
    """
    queue_ids = queue_ids_of(sorted(set(queues or [])))
    role = user_role(user)
    if not queue_ids and not (role is not None and role.allows(Role.ADMIN)):
        raise ValidationFailed(
            _("queues: required for a token of a non-admin"),
            detail={
                "queues": [
                    _(
                        "required: a %(role)s token is limited to the queues it "
                        "names (cluster/queue)"
                    )
                    % {"role": role.value if role else "viewer"}
                ]
            },
        )
    prefix, secret = _new_secret()
    token = ApiToken.objects.create(
        user=user,
        name=name,
        prefix=prefix,
        key_hash=_hash(secret),
        queue_ids=queue_ids,
        expires_at=expires_at,
    )
    audit_record(
        actor=actor or user,
        action="token.create",
        target=token,
        after={
            "user": str(user),
            "name": name,
            "queues": queue_labels_of(token.queue_ids),
        },
    )
    return IssuedToken(token=token, plaintext=f"{TOKEN_PREFIX}_{prefix}_{secret}")


def token_authenticate(plaintext: str) -> ApiToken | None:
    """The live token matching ``plaintext``, or None (unknown, revoked, expired)."""
    parts = plaintext.split("_", 2)
    if len(parts) != 3 or parts[0] != TOKEN_PREFIX:
        return None
    token = (
        ApiToken.objects.select_related("user", "user__portal_profile")
        .filter(prefix=parts[1])
        .first()
    )
    if token is None or not hmac.compare_digest(token.key_hash, _hash(parts[2])):
        return None
    now = timezone.now()
    if token.revoked_at or (token.expires_at and token.expires_at <= now):
        return None
    if not token.user.is_active:
        return None
    # Writing on every call would serialise API traffic on one row: once a minute is enough.
    if token.last_used_at is None or (now - token.last_used_at).total_seconds() > 60:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token


@transaction.atomic
def token_revoke(*, token_id: int, actor: AbstractBaseUser) -> ApiToken:
    """Revoke a token; it stops working at once."""
    token = ApiToken.objects.filter(pk=token_id).first()
    if token is None:
        raise NotFound(_("token %(token)s does not exist") % {"token": token_id})
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
        audit_record(
            actor=actor,
            action="token.revoke",
            target=token,
            before={"revoked": False},
            after={"revoked": True},
        )
        transaction.on_commit(lambda: _close_sockets_of(token.pk))
    return token


def _close_sockets_of(token_id: int) -> None:
    """Tell the token's open WebSockets to close now (each re-checks anyway)."""
    layer = get_channel_layer()
    if layer is None:
        return
    try:
        async_to_sync(layer.group_send)(
            token_group(token_id), {"type": "token.revoked"}
        )
    except Exception:
        log.warning(
            "could not tell token %s's sockets to close", token_id, exc_info=True
        )


@transaction.atomic
def token_rotate(*, token_id: int, actor: AbstractBaseUser) -> IssuedToken:
    """Replace a live token by a new one with the same user, name, queues and expiry.

    The old token is revoked in the same transaction, so exactly one of the two
    works at any moment; the new plaintext is returned once. A revoked or
    expired token cannot be rotated (issue a new one instead).

    Raises:
        NotFound: No such token.
        Conflict: The token is revoked or expired.
    """
    # Locked: two concurrent rotations of one token must not both succeed.
    old = ApiToken.objects.select_for_update().filter(pk=token_id).first()
    if old is None:
        raise NotFound(_("token %(token)s does not exist") % {"token": token_id})
    now = timezone.now()
    if old.revoked_at is not None or (old.expires_at and old.expires_at <= now):
        raise TokenNotLive(
            _("token %(token)s is revoked or expired; issue a new one instead")
            % {"token": old.prefix}
        )
    prefix, secret = _new_secret()
    new = ApiToken.objects.create(
        user=old.user,
        name=old.name,
        prefix=prefix,
        key_hash=_hash(secret),
        queue_ids=old.queue_ids,
        expires_at=old.expires_at,
    )
    old.revoked_at = now
    old.save(update_fields=["revoked_at"])
    audit_record(
        actor=actor,
        action="token.rotate",
        target=new,
        before={"token_id": old.pk, "prefix": old.prefix},
        after={
            "token_id": new.pk,
            "prefix": new.prefix,
            "queues": queue_labels_of(new.queue_ids),
        },
    )
    return IssuedToken(token=new, plaintext=f"{TOKEN_PREFIX}_{prefix}_{secret}")
