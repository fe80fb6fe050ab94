"""Translated text from pure code: the portal plugs Django's gettext in at start.

The HAMi format package (and the node config's pure what-if) imports no
Django, yet its warnings are read by people in the portal's pages, in the
request's language. So the text is marked here with ``_`` and ``ngettext``
(the names ``manage.py compile_locale`` and Babel extract), and translated
when it is produced: by the functions the inventory app registers in its
``AppConfig.ready`` (Django's ``gettext`` and ``ngettext``, which follow the
request's language), or, where nothing registered them (simcluster, the
command-line tools, plain Python), left in English.

A message keeps its values out of the text to translate: named placeholders
(``_("%(word)s: %(count)d slices") % {...}``), so a translation may reorder
them and identifiers (field paths, flags, names) are never translated.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["_", "ngettext", "use_translations"]


def _english(message: str) -> str:
    return message


def _english_plural(singular: str, plural: str, count: int) -> str:
    return singular if count == 1 else plural


_gettext: Callable[[str], str] = _english
_ngettext: Callable[[str, str, int], str] = _english_plural


def use_translations(
    gettext: Callable[[str], str], ngettext: Callable[[str, str, int], str]
) -> None:
    """Translate the messages of the pure code with these (the portal: Django's)."""
    global _gettext, _ngettext
    _gettext, _ngettext = gettext, ngettext


def _(message: str) -> str:
    """``message`` in the active language (English unless translations are plugged in)."""
    return _gettext(message)


def ngettext(singular: str, plural: str, count: int) -> str:
    """The form for ``count`` of a message with a number, in the active language."""
    return _ngettext(singular, plural, count)
