"""Filters shared by every API: ids that cannot overflow the database."""

from __future__ import annotations

import django_filters
from django import forms

from apps.common.ids import MAX_ID

# Row ids are 64-bit; anything outside (a float, 1e210) is a 400, not a
# database overflow turned into a 500.
__all__ = ["MAX_ID", "IdFilter"]


class IdFilter(django_filters.NumberFilter):
    """Filter on a row id given as a whole number (``?cluster=3``)."""

    field_class = forms.IntegerField

    def __init__(self, *args: object, **kwargs: object) -> None:
        kwargs.setdefault("min_value", 1)
        kwargs.setdefault("max_value", MAX_ID)
        super().__init__(*args, **kwargs)
