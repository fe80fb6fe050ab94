"""``vnpu``'s own messages in the shell's language (docs/languages.md).

``vnpu`` has no Django: its catalog is the standard library's gettext, read
from ``vnpucli/locale/<locale>/LC_MESSAGES/vnpu.mo`` (compiled by the
portal's ``manage.py compile_locale`` from the ``.po`` beside it). The
language is the shell's, read as GNU gettext reads it: the first of
``LANGUAGE`` (a list), ``LC_ALL``, ``LC_MESSAGES`` and ``LANG`` that is set;
``zh_CN.UTF-8`` (any ``zh``) gives Chinese, anything else English. Without
a compiled catalog ``vnpu`` speaks English.

Texts are marked with :func:`_` where they are made, and with :func:`N_`
where they are defined before the language is known (module constants); those
go through :func:`_` where they are shown.
"""

from __future__ import annotations

import gettext
import os
from collections.abc import Mapping
from pathlib import Path

DOMAIN = "vnpu"
LOCALE_DIR = Path(__file__).resolve().parent / "locale"
LANGUAGE_VARIABLES = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")
#: The catalogs there are, by the language prefix that picks them.
CATALOGS = {"zh": "zh_Hans"}


def shell_languages(environ: Mapping[str, str] | None = None) -> list[str]:
    """The languages the shell asks for, best first (``["zh_CN", "en"]``); none
    for ``C``/``POSIX`` or when nothing is set."""
    environ = os.environ if environ is None else environ
    for variable in LANGUAGE_VARIABLES:
        value = environ.get(variable, "")
        if value:
            return [
                code
                for item in value.split(":")
                if (code := item.split(".")[0].split("@")[0].strip())
                and code not in {"C", "POSIX"}
            ]
    return []


def catalog_locale(environ: Mapping[str, str] | None = None) -> str | None:
    """The catalog the shell's languages pick (``"zh_Hans"``); None: English."""
    for code in shell_languages(environ):
        prefix = code.replace("-", "_").split("_")[0].lower()
        if prefix == "en":
            return None
        if prefix in CATALOGS:
            return CATALOGS[prefix]
    return None


_translation: gettext.NullTranslations = gettext.NullTranslations()


def activate(environ: Mapping[str, str] | None = None) -> None:
    """Speak the language ``environ`` (default: this process's) asks for."""
    global _translation
    locale = catalog_locale(environ)
    _translation = (
        gettext.translation(DOMAIN, LOCALE_DIR, languages=[locale], fallback=True)
        if locale
        else gettext.NullTranslations()
    )


def _(message: str) -> str:
    """``message`` in the active language."""
    return _translation.gettext(message)


def N_(message: str) -> str:
    """Mark ``message`` for translation where it is shown (with :func:`_`)."""
    return message


activate()
