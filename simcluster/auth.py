"""Bearer-token authentication: an admin token and a read-only token."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field

from simcluster import errors

READ_VERBS = frozenset({"get", "list", "watch"})


@dataclass(frozen=True)
class Tokens:
    """The two tokens the simulator accepts."""

    admin: str = field(default_factory=lambda: "admin-" + secrets.token_hex(16))
    readonly: str = field(default_factory=lambda: "readonly-" + secrets.token_hex(16))

    def user_for(self, authorization: str | None) -> str:
        """Map an ``Authorization`` header to a user name; 401 if unknown."""
        if not authorization or not authorization.lower().startswith("bearer "):
            raise errors.unauthorized()
        token = authorization[7:].strip()
        if secrets.compare_digest(token, self.admin):
            return "admin"
        if secrets.compare_digest(token, self.readonly):
            return "readonly"
        raise errors.unauthorized()


def check_write(
    user: str,
    verb: str,
    plural: str,
    group: str,
    namespace: str | None,
    name: str | None,
) -> None:
    """Raise 403 if ``user`` may not perform a write ``verb``."""
    if user == "admin" or verb in READ_VERBS:
        return
    what = f'{plural} "{name}"' if name else plural
    where = f' in the namespace "{namespace}"' if namespace else ""
    raise errors.forbidden(
        f'{what} is forbidden: User "{user}" cannot {verb} resource "{plural}" '
        f'in API group "{group}"{where}',
        {"name": name or "", "kind": plural, **({"group": group} if group else {})},
    )
