"""``manage.py compile_locale``: build the translations Django reads, in Python.

Without a flag it compiles each language's ``locale/<locale>/LC_MESSAGES/django.po``
into the ``.mo`` beside it (build output, not kept in git): scripts/run.sh,
scripts/test.sh and the image run it. ``--update`` first merges the messages
the code marks (``gettext``, ``gettext_lazy``, ``ngettext``, ``pgettext``...)
into the ``.po`` files, as Django's ``makemessages`` would without GNU gettext.
``--check`` writes nothing and fails (exit 1) when a catalog is incomplete:
an untranslated or fuzzy entry, a message of the code missing, an entry no
longer used, a placeholder lost, or a ``.mo`` older than its ``.po``
(``apps.common.catalogs``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import CommandError, CommandParser
from django.utils.translation import gettext as _
from django.utils.translation import to_locale

from apps.common.catalogs import (
    VNPU_DOMAIN,
    VNPU_LOCALE_DIR,
    VNPU_SOURCE_DIRS,
    LocaleFiles,
    catalog_problems,
    compile_catalog,
    locale_files,
    update,
)
from apps.common.management.base import PortalCommand


def portal_locale_files() -> list[LocaleFiles]:
    """The catalogs of each language of ``LANGUAGES`` but the source one: the
    portal's (``locale/``), and the ``vnpu`` command's (``vnpucli/locale/``)."""
    locales = [
        to_locale(code)
        for code, _name in settings.LANGUAGES
        if code != settings.LANGUAGE_CODE
    ]
    vnpu_dir = Path(settings.BASE_DIR) / VNPU_LOCALE_DIR
    return locale_files(Path(settings.LOCALE_PATHS[0]), locales) + locale_files(
        vnpu_dir, locales, domain=VNPU_DOMAIN, sources=VNPU_SOURCE_DIRS
    )


class Command(PortalCommand):
    help = "Compile locale/*/LC_MESSAGES/django.po to .mo (--update: merge the code's messages first; --check: fail when a catalog is incomplete or stale)."

    def add_arguments(self, parser: CommandParser) -> None:
        mode = parser.add_mutually_exclusive_group()
        mode.add_argument(
            "--update",
            action="store_true",
            help="merge the messages the code uses into the .po files, then compile",
        )
        mode.add_argument(
            "--check",
            action="store_true",
            help="write nothing; fail when a .po lacks a translation or a .mo is stale",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        root = Path(settings.BASE_DIR)
        files = portal_locale_files()
        if options["check"]:
            problems = [
                line
                for each in files
                for line in catalog_problems(root, each, check_mo=True)
            ]
            for line in problems:
                self.stderr.write(line)
            if problems:
                raise CommandError(
                    _("%(count)d problem(s) in the translations")
                    % {"count": len(problems)}
                )
            return
        for each in files:
            if not (options["update"] or each.po.exists()):
                continue  # the image has no vnpucli/: nothing of it to build
            if options["update"]:
                added, removed = update(root, each)
                self.stdout.write(
                    _("%(po)s: %(added)d new message(s), %(removed)d removed")
                    % {"po": each.po, "added": added, "removed": removed}
                )
            if compile_catalog(each):
                self.stdout.write(_("compiled %(mo)s") % {"mo": each.mo})
