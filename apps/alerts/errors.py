"""The alerts' named errors; codes and HTTP statuses are in
``apps.common.exceptions.ERRORS``."""

from __future__ import annotations

from apps.common.exceptions import Conflict, DomainError, ErrorCode


class NotificationsNotConfigured(Conflict):
    """No Alertmanager (``ALERTMANAGER_URL``): the portal shows alerts it
    evaluates itself, but nothing notifies and nothing can be silenced."""

    code = ErrorCode.NOTIFICATIONS_NOT_CONFIGURED


class AlertmanagerUnavailable(DomainError):
    """Alertmanager could not be reached, or did not answer in time."""

    code = ErrorCode.ALERTMANAGER_UNAVAILABLE


class AlertmanagerRefused(DomainError):
    """Alertmanager answered, with an error status or an unreadable body."""

    code = ErrorCode.ALERTMANAGER_REFUSED
