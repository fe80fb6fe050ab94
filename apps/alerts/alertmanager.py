"""The site's Alertmanager over its v2 API: the portal's alerts and silences.

Every failure (refused, slow, an error answer) becomes one domain error with a
reason an admin can act on: :class:`AlertmanagerUnavailable` when it could
not be reached in time, :class:`AlertmanagerRefused` when it answered with an
error. Calls are short (``ALERTMANAGER_TIMEOUT_SECONDS``): a page waits that
long at most, then shows why its alerts are missing.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import requests
from django.conf import settings

from apps.alerts.errors import (
    AlertmanagerRefused,
    AlertmanagerUnavailable,
    NotificationsNotConfigured,
)

Matchers = list[dict[str, Any]]


class Alertmanager:
    """A client for one Alertmanager (``ALERTMANAGER_URL``)."""

    def __init__(self, url: str, *, token: str = "", timeout: float = 3.0) -> None:
        self.url = url.rstrip("/")
        self.timeout = timeout
        self.headers = {"Authorization": f"Bearer {token}"} if token else {}

    def alerts(self, names: list[str]) -> list[dict[str, Any]]:
        """The alerts it holds named one of ``names`` (active, silenced and
        inhibited alike; resolved ones are gone from its API)."""
        alternatives = "|".join(sorted(names))
        found: list[dict[str, Any]] = self._call(
            "GET", "/api/v2/alerts", params={"filter": f'alertname=~"{alternatives}"'}
        )
        return found

    def silences(self) -> list[dict[str, Any]]:
        """Every silence it holds, expired ones included."""
        found: list[dict[str, Any]] = self._call("GET", "/api/v2/silences")
        return found

    def silence_create(
        self,
        *,
        matchers: Matchers,
        starts_at: datetime,
        ends_at: datetime,
        created_by: str,
        comment: str,
    ) -> str:
        """Create a silence; its id."""
        body = {
            "matchers": matchers,
            "startsAt": starts_at.isoformat(),
            "endsAt": ends_at.isoformat(),
            "createdBy": created_by,
            "comment": comment,
        }
        answer = self._call("POST", "/api/v2/silences", json=body)
        silence_id = answer.get("silenceID") if isinstance(answer, dict) else None
        if not silence_id:
            raise AlertmanagerRefused(
                f"Alertmanager at {self.url} created a silence but sent no id."
            )
        return str(silence_id)

    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        try:
            answer = requests.request(
                method,
                self.url + path,
                headers=self.headers,
                timeout=self.timeout,
                **kwargs,
            )
        except requests.Timeout:
            raise AlertmanagerUnavailable(
                f"Alertmanager at {self.url} did not answer within "
                f"{self.timeout:g} s (ALERTMANAGER_TIMEOUT_SECONDS)."
            ) from None
        except requests.RequestException as error:
            raise AlertmanagerUnavailable(
                f"Alertmanager at {self.url} could not be reached: "
                f"{type(error).__name__}."
            ) from None
        if answer.status_code >= 300:
            detail = answer.text.strip()[:300] or answer.reason or "no reason given"
            raise AlertmanagerRefused(
                f"Alertmanager at {self.url} answered {answer.status_code}: {detail}"
            )
        try:
            return answer.json()
        except ValueError:
            raise AlertmanagerRefused(
                f"Alertmanager at {self.url} answered {answer.status_code} "
                "without JSON."
            ) from None


def configured() -> bool:
    """True when ``ALERTMANAGER_URL`` is set."""
    return bool(settings.ALERTMANAGER_URL)


def alertmanager() -> Alertmanager:
    """The configured Alertmanager; NotificationsNotConfigured without one."""
    if not configured():
        raise NotificationsNotConfigured(
            "Notifications are not configured: set ALERTMANAGER_URL to send and "
            "silence alerts."
        )
    return Alertmanager(
        settings.ALERTMANAGER_URL,
        token=settings.ALERTMANAGER_TOKEN,
        timeout=settings.ALERTMANAGER_TIMEOUT_SECONDS,
    )
