"""A stored text a person reads, kept with its message to show it in their language.

Some texts are written where no reader's language is known: the workers
(the allocator's passes, admission, reconciliation, evictions) write a
request's ``reason`` and a proposal's or a drain's ``progress``. Each such
text is stored twice, with :func:`set_text` (or :func:`text_fields` for an
``update()``), so no writer can set one without the other:

- the field itself (``reason``, ``progress``) gets the English text, which API
  clients and the rows written before keep reading;
- ``<field>_message`` gets the English template and its values
  (``{"text": ..., "params": {...}}``; a value that is itself a message is
  stored the same way), or ``{}`` when the text is no
  :class:`~apps.inventory.hami.messages.Message` (a value from Kubernetes,
  a person's own words).

:func:`text_shown` renders it again in the active language where an answer
is built. A row with no message, or whose message no longer says what its
text says (a writer that set only the text), shows its text.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.utils.translation import gettext

from apps.inventory.hami.messages import Message

__all__ = ["message_of", "set_text", "stored_message", "text_fields", "text_shown"]


def stored_message(text: str) -> dict[str, Any]:
    """What ``<field>_message`` keeps for ``text``: ``{}`` if it is no message."""
    if not isinstance(text, Message):
        return {}
    return {
        "text": text.text,
        "params": {
            name: stored_message(value) if isinstance(value, Message) else value
            for name, value in text.params.items()
        },
    }


def _loaded(data: Mapping[str, Any]) -> Message:
    params = data.get("params") or {}
    return Message(
        str(data["text"]),
        {
            name: _loaded(value) if isinstance(value, Mapping) else value
            for name, value in params.items()
        },
    )


def text_fields(field: str, text: str) -> dict[str, Any]:
    """The columns to save for ``text`` in ``field``: the English text and its message."""
    return {field: str(text), f"{field}_message": stored_message(text)}


def set_text(obj: Any, field: str, text: str) -> None:
    """Set ``field`` and ``<field>_message`` of ``obj`` (not saved)."""
    for name, value in text_fields(field, text).items():
        setattr(obj, name, value)


def message_of(obj: Any, field: str) -> Message | None:
    """The message kept for ``obj``'s ``field``, if it still says what the text says."""
    data = getattr(obj, f"{field}_message", None)
    if not isinstance(data, Mapping) or not data.get("text"):
        return None
    try:
        message = _loaded(data)
        english = str(message)
    except (KeyError, TypeError, ValueError):
        return None
    return message if english == getattr(obj, field) else None


def text_shown(obj: Any, field: str) -> str:
    """``obj``'s ``field`` in the active language; the stored text itself when
    it has no message (a row written before, a value from Kubernetes) or one
    that cannot be rendered again."""
    message = message_of(obj, field)
    if message is None:
        return str(getattr(obj, field))
    try:
        return message.translated(gettext)
    except (KeyError, TypeError, ValueError):
        return str(getattr(obj, field))
