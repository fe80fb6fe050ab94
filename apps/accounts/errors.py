"""Accounts' named errors; codes and HTTP statuses are in
``apps.common.exceptions.ERRORS``."""

from __future__ import annotations

from apps.common.exceptions import Conflict, DomainError, ErrorCode


class TokenNotLive(Conflict):
    """A revoked or expired token cannot be rotated."""

    code = ErrorCode.TOKEN_NOT_LIVE


class InvalidCredentials(DomainError):
    """A sign-in with a wrong username or password."""

    code = ErrorCode.INVALID_CREDENTIALS


class LocalLoginDisabled(DomainError):
    """A password sign-in while ``LOCAL_LOGIN_ENABLED`` is off."""

    code = ErrorCode.LOCAL_LOGIN_DISABLED
