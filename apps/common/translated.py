"""Messages made in code without Django, translated where the answer is built.

The HAMi validators (``apps.inventory.hami``) import no Django: a message of
theirs is a ``str`` whose value is the English text and which carries its
template and values (``apps.inventory.hami.messages.Message``). An answer to a
request renders it again in the request's language: the exception handler for
every error body (``apps.common.api``, ``apps.common.http_errors``), and
:class:`TranslatedCharField` where a serializer shows one (a warning). Any
other value passes unchanged. This module names no app's class: it knows such
a message by its ``translated`` method (:class:`Translatable`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol, runtime_checkable

from django.utils.translation import gettext
from rest_framework import serializers

__all__ = ["Translatable", "TranslatedCharField", "translated"]


@runtime_checkable
class Translatable(Protocol):
    """A message that renders itself with a translation function."""

    def translated(self, translate: Callable[[str], str]) -> str: ...


def translated(value: Any) -> Any:
    """``value`` with each :class:`Translatable` in it (at any depth of dicts,
    lists and tuples) in the active language; everything else as it is."""
    if isinstance(value, Translatable):
        return value.translated(gettext)
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        return {key: translated(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [translated(item) for item in value]
    return value


class TranslatedCharField(serializers.CharField):
    """A read-only text shown in the request's language when it is a
    :class:`Translatable` (a validator's message), as it is otherwise."""

    def to_representation(self, value: Any) -> str:
        return super().to_representation(translated(value))
