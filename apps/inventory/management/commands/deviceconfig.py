"""``manage.py deviceconfig check|import|export|fit``: the device-config on the command line.

Scripts rely on these names and exit codes (see the README):
  check FILE                    exit 0 when valid (warnings printed), 1 with one line per error
  import FILE --cluster NAME    create the cluster if missing, store a version, set chip types
  export --cluster NAME         print the YAML the portal would publish
  fit --cluster NAME --chip-type CW --memory MB
                                print the template name first, or "whole card", or exit 1
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.common.exceptions import DomainError
from apps.inventory import selectors, services
from apps.inventory.hami.deviceconfig import DeviceConfigError, parse_device_config
from apps.inventory.hami.fit import FitKind
from apps.inventory.hami.validation import validate_configs


def _read(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise CommandError(f"cannot read {path}: {exc.strerror or exc}") from exc


class Command(BaseCommand):
    help = "Check, import, export a HAMi device-config.yaml, and ask which template a request gets."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(
            dest="verb", required=True, parser_class=CommandParser
        )
        check = sub.add_parser("check", help="validate a device-config.yaml")
        check.add_argument("file")
        imp = sub.add_parser(
            "import", help="make a file the portal's config of a cluster"
        )
        imp.add_argument("file")
        imp.add_argument("--cluster", required=True)
        imp.add_argument("--reason", default="")
        exp = sub.add_parser("export", help="print the YAML the portal would publish")
        exp.add_argument("--cluster", required=True)
        fit = sub.add_parser("fit", help="which template a request of MEMORY MB gets")
        fit.add_argument("--cluster", required=True)
        fit.add_argument("--chip-type", required=True, dest="chip_type")
        fit.add_argument(
            "--memory", type=int, default=None, help="MB; omit for a whole card"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            getattr(self, f"_{options['verb']}")(options)
        except DomainError as exc:
            raise CommandError(exc.message) from exc

    def _check(self, options: dict[str, Any]) -> None:
        try:
            document = parse_device_config(_read(options["file"]))
        except DeviceConfigError as exc:
            raise CommandError(f"{getattr(exc, 'field', '') or 'file'}: {exc}") from exc
        report = validate_configs(document.raw_configs)
        for warning in report.warnings:
            self.stdout.write(f"warning: {warning.message}")
        if not report.ok:
            for error in report.errors:
                self.stderr.write(f"error: {error.field}: {error.message}")
            raise SystemExit(1)
        self.stdout.write(
            f"ok: {len(document.raw_configs)} chip types, shape {document.shape.value}"
        )

    def _import(self, options: dict[str, Any]) -> None:
        version = services.deviceconfig_import(
            cluster_name=options["cluster"],
            text=_read(options["file"]),
            reason=options["reason"],
            actor=None,
        )
        self.stdout.write(
            f"imported {options['file']} as version {version.number} of cluster {options['cluster']}"
        )

    def _export(self, options: dict[str, Any]) -> None:
        cluster = selectors.cluster_get(options["cluster"])
        self.stdout.write(selectors.deviceconfig_render(cluster), ending="")

    def _fit(self, options: dict[str, Any]) -> None:
        cluster = selectors.cluster_get(options["cluster"])
        result = selectors.template_fit(
            cluster, common_word=options["chip_type"], memory=options["memory"]
        )
        if result.kind == FitKind.INVALID:
            raise CommandError(result.reason)
        if result.kind == FitKind.WHOLE_CARD:
            self.stdout.write(f"whole card ({result.memory} MB): {result.reason}")
        else:
            self.stdout.write(f"{result.template} ({result.memory} MB)")
