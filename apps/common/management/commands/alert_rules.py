"""``manage.py alert_rules``: the alert definitions as Prometheus rules.

Without a flag it prints a plain rules file for this site: ``portal_url``
annotations start with ``--portal-url`` or the ``PORTAL_URL`` setting;
``--for 30s`` sets every alert's ``for`` and ``--threshold NAME=VALUE`` one
alert's threshold (a demo or a test that cannot wait minutes).
``--write`` updates the two generated files in the repository (the plain file,
with a placeholder address, and the chart's PrometheusRule template);
``--check`` fails (exit 1) when either is stale. The definitions are
``apps.common.alerting.definitions.ALERTS``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import CommandError

from apps.common.alerting.rules import (
    PLACEHOLDER_PORTAL_URL,
    helm_template,
    plain_rules,
)
from apps.common.generated import GeneratedFileCommand

ROOT = Path(settings.BASE_DIR)
PLAIN = ROOT / "deploy" / "prometheus" / "vnpu-alerts.rules.yml"
CHART = ROOT / "deploy" / "helm" / "vnpu-portal" / "templates" / "prometheusrule.yaml"


class Command(GeneratedFileCommand):
    help = (
        "Print this site's Prometheus alert rules (or --write, or --check, the "
        "generated rules file and chart template)."
    )
    command_name = "alert_rules"

    def add_arguments(self, parser: Any) -> None:
        super().add_arguments(parser)
        parser.add_argument(
            "--portal-url",
            default="",
            help="the portal's address (default: PORTAL_URL)",
        )
        parser.add_argument(
            "--for",
            dest="for_",
            default=None,
            help="every alert's `for` instead of its own (e.g. 30s)",
        )
        parser.add_argument(
            "--threshold",
            action="append",
            default=[],
            metavar="NAME=VALUE",
            help="an alert's threshold instead of its default (repeatable)",
        )

    def files(self) -> dict[Path, str]:
        return {PLAIN: plain_rules(PLACEHOLDER_PORTAL_URL), CHART: helm_template()}

    def print_file(self, **options: Any) -> None:
        url = options["portal_url"] or settings.PORTAL_URL
        if not url:
            raise CommandError("set PORTAL_URL or pass --portal-url https://...")
        thresholds: dict[str, float] = {}
        for pair in options["threshold"]:
            name, _, value = pair.partition("=")
            try:
                thresholds[name] = float(value)
            except ValueError:
                raise CommandError(f"--threshold NAME=NUMBER, not {pair!r}") from None
        try:
            text = plain_rules(url, for_=options["for_"], thresholds=thresholds)
        except ValueError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(text, ending="")
