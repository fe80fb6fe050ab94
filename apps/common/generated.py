"""Files generated from the code for the frontend, and the command shape that
prints, writes or checks one (``manage.py error_codes``, ``live_contract``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import CommandError
from django.utils.translation import gettext as _

from apps.common.management.base import PortalCommand


class GeneratedFileCommand(PortalCommand):
    """Print the file; ``--write`` updates it; ``--check`` fails when it is stale.

    Subclasses say which file (``target``, read at each call so that a test can
    point it elsewhere) and how to generate it.
    """

    command_name = ""

    def target(self) -> Path:
        raise NotImplementedError

    def generate(self) -> str:
        raise NotImplementedError

    def add_arguments(self, parser: Any) -> None:
        mode = parser.add_mutually_exclusive_group()
        mode.add_argument("--write", action="store_true", help=_("write the file"))
        mode.add_argument(
            "--check", action="store_true", help=_("fail when the file is stale")
        )

    def files(self) -> dict[Path, str]:
        """Every file kept, by path (one unless a subclass keeps several)."""
        return {self.target(): self.generate()}

    def print_file(self, **options: Any) -> None:
        """What the command prints without a flag: the file."""
        self.stdout.write(self.generate(), ending="")

    def handle(self, *args: Any, **options: Any) -> None:
        if not (options["write"] or options["check"]):
            self.print_file(**options)
            return
        for target, text in self.files().items():
            if options["write"]:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text)
                self.stdout.write(_("wrote %(file)s") % {"file": target})
                continue
            current = target.read_text() if target.exists() else ""
            if current != text:
                raise CommandError(
                    _("%(file)s is stale: run python manage.py %(command)s --write")
                    % {"file": target, "command": self.command_name}
                )
