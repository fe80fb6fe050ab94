"""``manage.py nodeconfig check|export``: the device plugin's per-node config on the command line.

Scripts rely on these names and exit codes (docs/command-line.md):
  check FILE [--cluster NAME] [--strict]
                          exit 0 when valid (warnings printed), 1 with one line per
                          error (path: message); --strict makes warnings fail too
  export --cluster NAME   print a node-config.yaml to start from

import and publish come with the editor (docs/node-config.md).
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.common.exceptions import DomainError
from apps.inventory import selectors
from apps.inventory.hami.nodeconfig import NodeConfigError
from apps.inventory.management.textfile import read_text_file
from apps.inventory.nodeconfig.selectors import (
    nodeconfig_check,
    nodeconfig_starting_file,
)

EXPORT_HELP = (
    "print a node-config.yaml to start from. Sync does not read the "
    "hami-device-node-config ConfigMap yet, so this is built from the inventory: "
    "every node labelled ascend=on or registering chips, with the slicing mode it "
    "reports now, no vDeviceCount and no filterDevices (a file that changes nothing)"
)


class Command(BaseCommand):
    help = (
        "Check a device plugin node config (hami-device-node-config), or print one "
        "to start from. import and publish come with the editor."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(
            dest="verb", required=True, parser_class=CommandParser
        )
        check = sub.add_parser(
            "check",
            help="validate a node-config.yaml (or a ConfigMap holding one); with "
            "--cluster, also against its nodes, chips, plugin version and templates",
        )
        check.add_argument("file")
        check.add_argument("--cluster", default=None)
        check.add_argument(
            "--strict", action="store_true", help="exit 1 on warnings too"
        )
        exp = sub.add_parser("export", help=EXPORT_HELP)
        exp.add_argument("--cluster", required=True)

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            getattr(self, f"_{options['verb']}")(options)
        except DomainError as exc:
            raise CommandError(exc.message) from exc

    def _check(self, options: dict[str, Any]) -> None:
        text = read_text_file(options["file"])
        cluster = (
            selectors.cluster_get(options["cluster"]) if options["cluster"] else None
        )
        try:
            read, report = nodeconfig_check(text, cluster)
        except NodeConfigError as exc:
            raise CommandError(f"{options['file']}: {exc.message}") from exc
        errors = read.report.errors + report.errors
        warnings = read.report.warnings + report.warnings
        for warning in warnings:
            self.stdout.write(f"warning: {warning.field}: {warning.message}")
        for error in errors:
            self.stderr.write(f"error: {error.field}: {error.message}")
        if errors or (options["strict"] and warnings):
            raise SystemExit(1)
        against = (
            f"checked against cluster {cluster.name}"
            if cluster is not None
            else "format only (add --cluster NAME to check nodes and chips)"
        )
        self.stdout.write(f"ok: {len(read.entries)} nodes, {against}")

    def _export(self, options: dict[str, Any]) -> None:
        cluster = selectors.cluster_get(options["cluster"])
        self.stdout.write(nodeconfig_starting_file(cluster), ending="")
        self.stderr.write(
            "note: built from the inventory (sync does not read "
            "hami-device-node-config yet): every Ascend node, its current mode, "
            "no overrides"
        )
