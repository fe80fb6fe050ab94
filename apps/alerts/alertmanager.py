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
from django.utils.translation import gettext as _

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
        answer = self._call(
            "GET", "/api/v2/alerts", params={"filter": f'alertname=~"{alternatives}"'}
        )
        return [_alert_entry(self.url, entry) for entry in _listed(self.url, answer)]

    def silences(self) -> list[dict[str, Any]]:
        """Every silence it holds, expired ones included."""
        answer = self._call("GET", "/api/v2/silences")
        return [
            _fields(
                self.url, entry, "silence", ("id", "createdBy", "comment", "endsAt")
            )
            for entry in _listed(self.url, answer)
        ]

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
                _("Alertmanager at %(url)s created a silence but sent no id.")
                % {"url": self.url}
            )
        return str(silence_id)

    def silence_expire(self, silence_id: str) -> None:
        """Expire a silence at once (``DELETE /api/v2/silence/<id>``)."""
        self._call("DELETE", f"/api/v2/silence/{silence_id}")

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
                _(
                    "Alertmanager at %(url)s did not answer within %(seconds)g s "
                    "(ALERTMANAGER_TIMEOUT_SECONDS)."
                )
                % {"url": self.url, "seconds": self.timeout}
            ) from None
        except requests.RequestException as error:
            raise AlertmanagerUnavailable(
                _("Alertmanager at %(url)s could not be reached: %(error)s.")
                % {"url": self.url, "error": type(error).__name__}
            ) from None
        if answer.status_code >= 300:
            detail = answer.text.strip()[:300] or answer.reason or "-"
            raise AlertmanagerRefused(
                _("Alertmanager at %(url)s answered %(status)s: %(detail)s")
                % {"url": self.url, "status": answer.status_code, "detail": detail}
            )
        if not answer.content:  # DELETE answers 200 with no body
            return None
        try:
            return answer.json()
        except ValueError:
            raise AlertmanagerRefused(
                _("Alertmanager at %(url)s answered %(status)s without JSON.")
                % {"url": self.url, "status": answer.status_code}
            ) from None


# --- what its answers must look like ------------------------------------------
# A proxy's error page, another API behind the URL or a newer Alertmanager must
# not reach the pages as a 500: an answer of the wrong shape is refused, with
# what was wrong, like an error status.


def _refused(url: str, what: str) -> AlertmanagerRefused:
    return AlertmanagerRefused(f"Alertmanager at {url} sent {what}.")


def _listed(url: str, answer: Any) -> list[dict[str, Any]]:
    if not isinstance(answer, list) or not all(isinstance(e, dict) for e in answer):
        raise _refused(url, "something other than a list of objects")
    return answer


def _strings(url: str, value: Any, what: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise _refused(url, f"{what} that are not text")
    return value


def _fields(
    url: str, entry: dict[str, Any], what: str, names: tuple[str, ...]
) -> dict[str, Any]:
    """``entry`` with each of ``names`` text (or absent)."""
    for name in names:
        if entry.get(name) is not None and not isinstance(entry[name], str):
            raise _refused(url, f"a {what} whose {name} is not text")
    return entry


def _alert_entry(url: str, entry: dict[str, Any]) -> dict[str, Any]:
    """One alert of ``GET /api/v2/alerts``, its shapes checked."""
    _fields(url, entry, "alert", ("startsAt", "endsAt"))
    status = entry.get("status") or {}
    if not isinstance(status, dict):
        raise _refused(url, "an alert whose status is not an object")
    for key in ("silencedBy", "inhibitedBy"):
        ids = status.get(key) or []
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            raise _refused(url, f"an alert whose {key} is not a list of ids")
    return {
        **entry,
        "labels": _strings(url, entry.get("labels"), "labels"),
        "annotations": _strings(url, entry.get("annotations"), "annotations"),
        "status": status,
    }


def configured() -> bool:
    """True when ``ALERTMANAGER_URL`` is set."""
    return bool(settings.ALERTMANAGER_URL)


def alertmanager() -> Alertmanager:
    """The configured Alertmanager; NotificationsNotConfigured without one."""
    if not configured():
        raise NotificationsNotConfigured(
            _(
                "Notifications are not configured: set ALERTMANAGER_URL to send and "
                "silence alerts."
            )
        )
    return Alertmanager(
        settings.ALERTMANAGER_URL,
        token=settings.ALERTMANAGER_TOKEN,
        timeout=settings.ALERTMANAGER_TIMEOUT_SECONDS,
    )
