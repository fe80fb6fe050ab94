"""Filters shared by every API: ids that cannot overflow the database, date-times
every database accepts."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import django_filters
from django import forms
from django_filters.fields import IsoDateTimeField

from apps.common.ids import MAX_ID

__all__ = ["DATETIME_HELP", "MAX_ID", "IdFilter", "UtcDateTimeFilter"]

DATETIME_HELP = (
    "an ISO 8601 date-time with its offset, e.g. 2026-01-31T16:00:00Z or "
    "2026-01-31T16:00:00+08:00 with the '+' URL-encoded (a bare '+' in a "
    "query string means a space)"
)


class IdFilter(django_filters.NumberFilter):
    """Filter on a row id given as a whole number (``?cluster=3``).

    Anything outside 1..MAX_ID (a float, 1e210) is a 400, not a database
    overflow turned into a 500.
    """

    field_class = forms.IntegerField

    def __init__(self, *args: object, **kwargs: object) -> None:
        kwargs.setdefault("min_value", 1)
        kwargs.setdefault("max_value", MAX_ID)
        super().__init__(*args, **kwargs)


class UtcDateTimeField(IsoDateTimeField):
    """An ISO 8601 date-time, converted to UTC before it reaches the database.

    PostgreSQL refuses a UTC offset beyond +-15:59 ("time zone displacement
    out of range") that Python parses happily; in UTC every value is valid.
    The message says how to write one, since a bare '+' in a query string is
    decoded as a space.
    """

    default_error_messages = {
        "invalid": DATETIME_HELP,
        "overflow": "out of range: the date-time in UTC must fall within years 1 to 9999",
    }

    def to_python(self, value: Any) -> datetime | None:
        try:
            parsed = super().to_python(value)
            return parsed.astimezone(UTC) if parsed is not None else None
        except OverflowError:
            # 9999-12-31T23:59:59-23:59 parses, but is in year 10000 in UTC
            # (and 0001-01-01T00:00:00+23:59 in year 0): Python's datetime
            # cannot hold it, so it is the caller's bad input, not a 500.
            raise forms.ValidationError(
                self.error_messages["overflow"], code="overflow"
            ) from None


class UtcDateTimeFilter(django_filters.IsoDateTimeFilter):
    """``?since=2026-01-31T16:00:00Z``: an ISO 8601 date-time (see ``DATETIME_HELP``)."""

    field_class = UtcDateTimeField

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("help_text", DATETIME_HELP)
        super().__init__(*args, **kwargs)
