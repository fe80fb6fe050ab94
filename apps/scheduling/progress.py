"""The progress of a preemption proposal or a drain, in the reader's language.

``progress`` is a text stored with its message (:mod:`apps.scheduling.texts`):
the workers that carry them out write it with :func:`set_progress` (or
:func:`progress_fields` for an ``update()``), and :func:`progress_shown`
renders it in the active language where an answer is built.
"""

from __future__ import annotations

from typing import Any

from apps.inventory.hami.messages import Message
from apps.scheduling.texts import set_text, text_fields, text_shown

__all__ = ["progress_fields", "progress_shown", "set_progress"]


def progress_fields(message: Message) -> dict[str, Any]:
    """The fields to save for ``message``: its English text and its template."""
    return text_fields("progress", message)


def set_progress(obj: Any, message: Message) -> None:
    """Set both ``progress`` and ``progress_message`` of ``obj`` (not saved)."""
    set_text(obj, "progress", message)


def progress_shown(obj: Any) -> str:
    """``obj``'s progress in the active language (its ``progress`` if it has no message)."""
    return text_shown(obj, "progress")
