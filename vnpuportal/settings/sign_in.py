"""How people sign in: local passwords and OpenID Connect (docs/security.md).

Imported by ``base`` (``from vnpuportal.settings.sign_in import *``). OpenID
Connect is on when ``OIDC_ISSUER`` is set; ``apps.accounts.oidc_config`` reads
these settings and refuses an incomplete set at start-up (``check``).
"""

from __future__ import annotations

from vnpuportal.env import env

__all__ = [
    "LOCAL_LOGIN_ENABLED",
    "OIDC_CLIENT_ID",
    "OIDC_CLIENT_SECRET",
    "OIDC_DEFAULT_ROLE",
    "OIDC_GROUPS_CLAIM",
    "OIDC_ISSUER",
    "OIDC_PROVIDER_NAME",
    "OIDC_ROLE_GROUPS",
    "OIDC_SCOPES",
    "OIDC_TIMEOUT_SECONDS",
    "OIDC_USERNAME_CLAIM",
]

# Local accounts (username and password, the Django admin's login too): the
# break-glass way in when the identity provider is down. Turned off, only
# OpenID Connect signs people in (API tokens still work for pipelines).
LOCAL_LOGIN_ENABLED = env.bool("LOCAL_LOGIN_ENABLED", default=True)

# The issuer's URL, exactly as its discovery document
# (<issuer>/.well-known/openid-configuration) names itself. Empty: off.
OIDC_ISSUER = env("OIDC_ISSUER", default="")
OIDC_CLIENT_ID = env("OIDC_CLIENT_ID", default="")
OIDC_CLIENT_SECRET = env("OIDC_CLIENT_SECRET", default="")
OIDC_SCOPES = env.list("OIDC_SCOPES", default=["openid", "profile", "email"])
# What the login page's button says: "Sign in with <OIDC_PROVIDER_NAME>".
OIDC_PROVIDER_NAME = env("OIDC_PROVIDER_NAME", default="single sign-on")
# The ID token's (or userinfo's) claim that lists the user's groups; a dotted
# path reaches into an object (Keycloak's realm_access.roles).
OIDC_GROUPS_CLAIM = env("OIDC_GROUPS_CLAIM", default="groups")
# The claim that names a new user (falls back to email, then the subject).
OIDC_USERNAME_CLAIM = env("OIDC_USERNAME_CLAIM", default="preferred_username")
# Group to role: a member of any group of a role's list gets that role; of
# several, the highest (viewer < ci < operator < admin).
OIDC_ROLE_GROUPS = {
    "admin": env.list("OIDC_ADMIN_GROUPS", default=[]),
    "operator": env.list("OIDC_OPERATOR_GROUPS", default=[]),
    "ci": env.list("OIDC_CI_GROUPS", default=[]),
    "viewer": env.list("OIDC_VIEWER_GROUPS", default=[]),
}
# The role of a user whose tokens carry no groups claim at all: a role, or
# "none" to refuse them. (A claim that lists no mapped group always refuses:
# a user removed from every mapped group loses access at the next sign-in.)
OIDC_DEFAULT_ROLE = env("OIDC_DEFAULT_ROLE", default="viewer")
# Each call to the provider (discovery, token, keys) gives up after this long.
OIDC_TIMEOUT_SECONDS = env.float("OIDC_TIMEOUT_SECONDS", default=5.0)
