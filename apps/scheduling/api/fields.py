"""Serializer fields of the scheduling API."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from apps.scheduling.caveats import caveat_shown
from apps.scheduling.texts import text_shown


class ShownTextField(serializers.CharField):
    """A text stored with its message (apps.scheduling.texts), in the request's
    language: its stored English text when the row keeps no message to render
    again."""

    def __init__(self, field: str, **kwargs: Any) -> None:
        self.field = field
        super().__init__(source="*", read_only=True, **kwargs)

    def to_representation(self, value: Any) -> str:
        return text_shown(value, self.field)


class ProgressField(ShownTextField):
    """A proposal's or a drain's ``progress`` in the request's language."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault(
            "help_text",
            "how carrying it out goes, in the request's language "
            "(Accept-Language); free text, never parse it",
        )
        super().__init__("progress", **kwargs)


class ReasonField(ShownTextField):
    """A request's ``reason`` in the request's language."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault(
            "help_text",
            "why it waits, or how it ended, in the request's language "
            "(Accept-Language); free text, never parse it",
        )
        super().__init__("reason", **kwargs)


class CaveatField(serializers.CharField):
    """A placement's caveat (what is not guaranteed where the scheduler picks
    the chip) in the request's language."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault(
            "help_text",
            "what is not guaranteed where the scheduler picks the chip (empty: "
            "nothing), in the request's language (Accept-Language); free text",
        )
        super().__init__(read_only=True, **kwargs)

    def to_representation(self, value: Any) -> str:
        return caveat_shown(str(value))
