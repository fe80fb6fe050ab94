"""Messages a person reads, kept as a template and its values until shown.

The validators of this package import no Django, yet their messages are
shown in the portal's pages in the reader's language. So a message is made
with :func:`N_`: the English template (marked: ``manage.py compile_locale``
extracts ``N_``) and its values by name. The result is a :class:`Message`,
a ``str`` whose value is the English text, so every caller that compares,
joins or prints it keeps working, in English. Where the answer is built for
a request (the portal's exception handler and serializers,
``apps.common.messages``), :meth:`Message.translated` renders it again with
Django's ``gettext``: the template is translated, then the values filled in
(a value that is itself a :class:`Message` is translated the same way).

Identifiers (field paths, keys, names, UUIDs, versions) are values, never
part of the template, so they read the same in every language.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["N_", "Message", "english"]


def english(text: str) -> str:
    """The translation of the source language: the template itself."""
    return text


def _render(
    text: str, params: Mapping[str, object], translate: Callable[[str], str]
) -> str:
    template = translate(text)
    if not params:
        return template
    values = {
        name: value.translated(translate) if isinstance(value, Message) else value
        for name, value in params.items()
    }
    return template % values


class Message(str):
    """A message's English text, with its template and values for translation.

    Attributes:
        text: The English template, with named %-placeholders
            (``"%(key)s must be greater than 0"``).
        params: The values of its placeholders.
    """

    text: str
    params: Mapping[str, object]

    def __new__(cls, text: str, params: Mapping[str, object] | None = None) -> Message:
        values = dict(params or {})
        self = super().__new__(cls, _render(text, values, english))
        self.text = text
        self.params = values
        return self

    def translated(self, translate: Callable[[str], str]) -> str:
        """The message with its template (and those of its values) through ``translate``."""
        return _render(self.text, self.params, translate)

    # Immutable like a str: copies (dataclasses.asdict) are the message itself.
    def __copy__(self) -> Message:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Message:
        return self

    def __reduce__(self) -> tuple[type[Message], tuple[str, dict[str, object]]]:
        return (Message, (self.text, dict(self.params)))


def N_(text: str, /, **params: object) -> Message:
    """A message to translate where it is shown: ``text`` with ``params`` filled in.

    ``text`` must be a string literal, so that ``compile_locale`` extracts it.
    """
    return Message(text, params)
