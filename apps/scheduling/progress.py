"""The progress of a preemption proposal or a drain, in the reader's language.

The workers that carry them out (the allocator, the evictions, reconciliation)
write ``progress`` with no request, so with no reader's language. Each writes
it with :func:`set_progress` (or :func:`progress_fields` for an ``update()``):
``progress`` gets the English text, which API clients and old rows read as
before, and ``progress_message`` the English template and its values
(``{"text": ..., "params": {...}}``; a value that is itself a message is
stored the same way), so that :func:`progress_shown` renders it again in the
active language where an answer is built. A row written before it has no
message and shows its ``progress``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from django.utils.translation import gettext

from apps.inventory.hami.messages import Message

__all__ = ["progress_fields", "progress_shown", "set_progress"]


class _HasProgress(Protocol):
    progress: str
    progress_message: Any


def _stored(message: Message) -> dict[str, Any]:
    return {
        "text": message.text,
        "params": {
            name: _stored(value) if isinstance(value, Message) else value
            for name, value in message.params.items()
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


def progress_fields(message: Message) -> dict[str, Any]:
    """The fields to save for ``message``: its English text and its template."""
    return {"progress": str(message), "progress_message": _stored(message)}


def set_progress(obj: _HasProgress, message: Message) -> None:
    """Set both ``progress`` and ``progress_message`` of ``obj`` (not saved)."""
    for field, value in progress_fields(message).items():
        setattr(obj, field, value)


def progress_shown(obj: _HasProgress) -> str:
    """``obj``'s progress in the active language; its ``progress`` if it has no
    message (a row written before messages were kept) or one that cannot be
    rendered again."""
    data = obj.progress_message
    if not isinstance(data, Mapping) or not data.get("text"):
        return obj.progress
    try:
        return _loaded(data).translated(gettext)
    except (KeyError, TypeError, ValueError):
        return obj.progress
