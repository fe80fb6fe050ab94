"""OpenID Connect sign-in: its settings, read once per use, and groups to roles.

Pure: no network and no database. ``apps.accounts.oidc_client`` talks to the
provider; ``apps.accounts.oidc_users`` turns a verified sign-in into a user.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.core import checks
from django.core.exceptions import ImproperlyConfigured

from apps.accounts.choices import Role

NO_ROLE = "none"


@dataclass(frozen=True)
class OidcConfig:
    """The OIDC_* settings (vnpuportal/settings/sign_in.py), checked."""

    issuer: str
    client_id: str
    client_secret: str = field(repr=False)
    scopes: tuple[str, ...]
    provider_name: str
    groups_claim: str
    username_claim: str
    role_groups: Mapping[Role, frozenset[str]]
    default_role: Role | None
    timeout: float

    @property
    def discovery_url(self) -> str:
        return self.issuer.rstrip("/") + "/.well-known/openid-configuration"


def local_login_enabled() -> bool:
    """Whether usernames and passwords sign in (the break-glass accounts)."""
    return bool(getattr(settings, "LOCAL_LOGIN_ENABLED", True))


def oidc_config() -> OidcConfig | None:
    """The configuration, or None when ``OIDC_ISSUER`` is empty (OIDC off).

    Raises:
        ImproperlyConfigured: The issuer is set but the client, a role name or
            the scopes are not usable (said at start-up by the system check).
    """
    issuer = str(getattr(settings, "OIDC_ISSUER", "") or "").strip()
    if not issuer:
        return None
    if not issuer.startswith(("https://", "http://")):
        raise ImproperlyConfigured(f"OIDC_ISSUER must be an http(s) URL: {issuer!r}")
    client_id = str(getattr(settings, "OIDC_CLIENT_ID", "") or "")
    if not client_id:
        raise ImproperlyConfigured("OIDC_ISSUER is set but OIDC_CLIENT_ID is empty")
    scopes = tuple(str(s) for s in getattr(settings, "OIDC_SCOPES", ()) if str(s))
    if "openid" not in scopes:
        raise ImproperlyConfigured("OIDC_SCOPES must include openid")
    return OidcConfig(
        issuer=issuer,
        client_id=client_id,
        client_secret=str(getattr(settings, "OIDC_CLIENT_SECRET", "") or ""),
        scopes=scopes,
        provider_name=str(settings.OIDC_PROVIDER_NAME or "single sign-on"),
        groups_claim=str(settings.OIDC_GROUPS_CLAIM or "groups"),
        username_claim=str(settings.OIDC_USERNAME_CLAIM or "preferred_username"),
        role_groups=_role_groups(getattr(settings, "OIDC_ROLE_GROUPS", {})),
        default_role=_default_role(str(settings.OIDC_DEFAULT_ROLE)),
        timeout=float(settings.OIDC_TIMEOUT_SECONDS),
    )


def check_oidc_settings(**kwargs: Any) -> list[Any]:
    """Django system check: the OIDC_* settings are usable, and something
    signs people in."""
    try:
        config = oidc_config()
    except ImproperlyConfigured as error:
        return [checks.Error(str(error), id="accounts.E001")]
    if config is None and not local_login_enabled():
        return [
            checks.Error(
                "LOCAL_LOGIN_ENABLED is off and OIDC_ISSUER is empty: nobody can sign in",
                id="accounts.E002",
            )
        ]
    return []


def _role_groups(raw: Mapping[str, Sequence[str]]) -> dict[Role, frozenset[str]]:
    groups: dict[Role, frozenset[str]] = {}
    for name, members in raw.items():
        if name not in Role.values:
            raise ImproperlyConfigured(
                f"OIDC group mapping: no role {name!r} (roles: {Role.values})"
            )
        groups[Role(name)] = frozenset(str(g) for g in members if str(g))
    return groups


def _default_role(value: str) -> Role | None:
    value = value.strip().lower()
    if value == NO_ROLE:
        return None
    if value not in Role.values:
        raise ImproperlyConfigured(
            f"OIDC_DEFAULT_ROLE must be one of {[*Role.values, NO_ROLE]}, not {value!r}"
        )
    return Role(value)


def claimed_groups(claims: Mapping[str, Any], claim: str) -> list[str] | None:
    """The groups ``claims`` list under ``claim`` (a dotted path), or None
    when the claim is absent. A single string counts as one group; anything
    else that is not a list of strings counts as no group."""
    value: Any = claims
    for part in claim.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    if isinstance(value, list | tuple):
        return [item for item in value if isinstance(item, str)]
    return []


def role_for_groups(groups: list[str] | None, config: OidcConfig) -> Role | None:
    """The role a user with ``groups`` gets (None: no access).

    - No groups claim at all (``None``): ``OIDC_DEFAULT_ROLE`` (a role or none).
    - No group mapping configured: every user gets ``OIDC_DEFAULT_ROLE``.
    - Otherwise the highest role one of whose groups the user is in; a user
      in no mapped group gets none, whatever the default says: being removed
      from every mapped group must take access away.
    """
    mapped = {role: members for role, members in config.role_groups.items() if members}
    if groups is None or not mapped:
        return config.default_role
    found = [role for role, members in mapped.items() if members & set(groups)]
    return max(found, key=lambda role: role.rank) if found else None
