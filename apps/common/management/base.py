"""The base of the portal's ``manage.py`` commands: they speak the shell's language.

Django runs a command with no language activated, so its messages come out in
``LANGUAGE_CODE`` (English) whatever the terminal's locale. A
:class:`PortalCommand` activates the language the environment asks for, as
GNU gettext reads it: the first of ``LANGUAGE`` (a colon-separated list),
``LC_ALL``, ``LC_MESSAGES`` and ``LANG`` that is set, e.g. ``zh_CN.UTF-8``
gives Chinese and ``C`` or ``en_US.UTF-8`` English (docs/languages.md). The
help (``--help``), the messages and the errors of the command follow it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand
from django.utils import translation

#: Where the shell says its language, in GNU gettext's order.
LANGUAGE_VARIABLES = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")


def _candidates(value: str) -> list[str]:
    """``zh_CN.UTF-8@x`` -> ``["zh-cn"]``; ``zh_CN:en`` -> ``["zh-cn", "en"]``."""
    codes = []
    for item in value.split(":"):
        code = item.split(".")[0].split("@")[0].strip()
        if code and code not in {"C", "POSIX"}:
            codes.append(code.replace("_", "-").lower())
        elif code:
            codes.append(settings.LANGUAGE_CODE)
    return codes


def cli_language(environ: Mapping[str, str] | None = None) -> str:
    """The portal language (``"en"``, ``"zh-hans"``) the environment asks for."""
    environ = os.environ if environ is None else environ
    for variable in LANGUAGE_VARIABLES:
        value = environ.get(variable, "")
        if not value:
            continue
        for code in _candidates(value):
            try:
                return translation.get_supported_language_variant(code)
            except LookupError:
                continue
        # GNU gettext stops at the first variable set; so do we.
        break
    return settings.LANGUAGE_CODE


class PortalCommand(BaseCommand):
    """A command whose help, output and errors are in the shell's language.

    Its class-level ``help`` is a ``gettext_lazy`` string; argument help is
    ``gettext`` in ``add_arguments`` (the parser is built with the language
    active). Tags a script matches (``error:``, ``warning:``, ``ok:``) and
    machine output (names, YAML, JSON, the ``fit`` line) stay as they are.
    """

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> Any:
        # argparse wraps the description with re and textwrap: a real str.
        self.help = str(self.help)
        return super().create_parser(prog_name, subcommand, **kwargs)

    def run_from_argv(self, argv: list[str]) -> None:
        # The parser (and --help) is built here, before execute().
        with translation.override(cli_language()):
            super().run_from_argv(argv)

    def execute(self, *args: Any, **options: Any) -> str | None:
        # call_command() comes here without run_from_argv().
        with translation.override(cli_language()):
            return super().execute(*args, **options)
