"""``manage.py deviceconfig check|import|export|fit``: the device-config on the command line.

Scripts rely on these names and exit codes (docs/command-line.md):
  check FILE                    exit 0 when valid (warnings printed), 1 with one line per error
  import FILE --cluster NAME    create the cluster if missing, store a version, set chip types
  export --cluster NAME         print the YAML the portal would publish
  fit --cluster NAME --chip-type CW --memory MB [--scheduler hami|volcano]
                                print the template name first, or "whole card", or exit 1
  publish --cluster NAME --reason TEXT [--force]
                                write the portal's config to the cluster; exit 1 with the
                                diff on a conflict or unadopted drift, 0 when nothing changes
  drift --cluster NAME          exit 0 when the live ConfigMap equals the last published or
                                adopted version, 1 with the diff otherwise
  adopt --cluster NAME [--reason TEXT]
                                take the live content as the portal's
  rollback --cluster NAME --version N --reason TEXT [--force]
                                publish version N's text again (exit codes as publish)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from apps.common.exceptions import Conflict, DomainError
from apps.common.management.base import PortalCommand
from apps.common.translated import translated
from apps.inventory import selectors
from apps.inventory.deviceconfig import publishing
from apps.inventory.deviceconfig.liveconfig import deviceconfig_drift
from apps.inventory.deviceconfig.publishing import PublishResult
from apps.inventory.deviceconfig.selectors import (
    deviceconfig_render,
    template_fit_answer,
)
from apps.inventory.deviceconfig.services import deviceconfig_import
from apps.inventory.hami.deviceconfig import DeviceConfigError, parse_device_config
from apps.inventory.hami.template_rule import FitKind, Scheduler
from apps.inventory.hami.validation import validate_configs
from apps.inventory.management.textfile import read_text_file


class Command(PortalCommand):
    help = gettext_lazy(
        "Check, import, export, publish, adopt or roll back a HAMi device-config.yaml, and ask which template a request gets."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(
            dest="verb", required=True, parser_class=CommandParser
        )
        check = sub.add_parser("check", help=_("validate a device-config.yaml"))
        check.add_argument("file")
        imp = sub.add_parser(
            "import", help=_("make a file the portal's config of a cluster")
        )
        imp.add_argument("file")
        imp.add_argument("--cluster", required=True)
        imp.add_argument("--reason", default="")
        exp = sub.add_parser(
            "export", help=_("print the YAML the portal would publish")
        )
        exp.add_argument("--cluster", required=True)
        fit = sub.add_parser(
            "fit", help=_("which template a request of MEMORY MB gets")
        )
        fit.add_argument("--cluster", required=True)
        fit.add_argument("--chip-type", required=True, dest="chip_type")
        fit.add_argument(
            "--memory", type=int, default=None, help=_("MB; omit for a whole card")
        )
        fit.add_argument(
            "--scheduler",
            choices=[s.value for s in Scheduler],
            default=Scheduler.HAMI.value,
            help=_("whose reading of 0 MB and of requests over memoryCapacity applies"),
        )
        pub = sub.add_parser(
            "publish", help=_("write the portal's config to the cluster")
        )
        pub.add_argument("--cluster", required=True)
        pub.add_argument("--reason", required=True)
        pub.add_argument(
            "--force", action="store_true", help=_("publish over a hand edit")
        )
        pub.add_argument(
            "--confirm-shape",
            action="store_true",
            help=_("write a vnpus shape a running component cannot parse"),
        )
        pub.add_argument(
            "--confirm-breaking",
            action="append",
            default=[],
            metavar="NAMESPACE/POD",
            help=_("a running slice you accept this publish breaks (repeat for each)"),
        )
        pub.add_argument(
            "--confirm-breaking-template",
            action="append",
            default=[],
            metavar="COMMONWORD/TEMPLATE",
            help=_(
                "a template whose running slices you accept this publish breaks, "
                "whichever pods run them when it lands (repeat for each)"
            ),
        )
        drift = sub.add_parser(
            "drift", help=_("compare the live ConfigMap with the portal's version")
        )
        drift.add_argument("--cluster", required=True)
        adopt = sub.add_parser("adopt", help=_("take the live content as the portal's"))
        adopt.add_argument("--cluster", required=True)
        adopt.add_argument("--reason", default="")
        back = sub.add_parser("rollback", help=_("publish an earlier version's text"))
        back.add_argument("--cluster", required=True)
        back.add_argument("--version", type=int, required=True, dest="number")
        back.add_argument("--reason", required=True)
        back.add_argument(
            "--force", action="store_true", help=_("publish over a hand edit")
        )
        back.add_argument(
            "--confirm-shape",
            action="store_true",
            help=_("write a vnpus shape a running component cannot parse"),
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            getattr(self, f"_{options['verb']}")(options)
        except DomainError as exc:
            raise CommandError(translated(exc.message)) from exc

    def _check(self, options: dict[str, Any]) -> None:
        try:
            document = parse_device_config(read_text_file(options["file"]))
        except DeviceConfigError as exc:
            field = exc.field or "file"
            raise CommandError(f"{field}: {translated(exc.described)}") from exc
        report = validate_configs(document.raw_configs)
        for warning in report.warnings:
            self.stdout.write(f"warning: {translated(warning.message)}")
        if not report.ok:
            for error in report.errors:
                self.stderr.write(f"error: {error.field}: {translated(error.message)}")
            raise SystemExit(1)
        self.stdout.write(
            "ok: "
            + _("%(count)d chip types, shape %(shape)s")
            % {"count": len(document.raw_configs), "shape": document.shape.value}
        )

    def _import(self, options: dict[str, Any]) -> None:
        version = deviceconfig_import(
            cluster_name=options["cluster"],
            text=read_text_file(options["file"]),
            reason=options["reason"],
            actor=None,
        )
        self.stdout.write(
            _("imported %(file)s as version %(version)s of cluster %(cluster)s")
            % {
                "file": options["file"],
                "version": version.number,
                "cluster": options["cluster"],
            }
        )

    def _export(self, options: dict[str, Any]) -> None:
        cluster = selectors.cluster_get(options["cluster"])
        self.stdout.write(deviceconfig_render(cluster), ending="")

    def _fit(self, options: dict[str, Any]) -> None:
        cluster = selectors.cluster_get(options["cluster"])
        answer = template_fit_answer(
            cluster,
            common_word=options["chip_type"],
            memory=options["memory"],
            scheduler=Scheduler(options["scheduler"]),
        )
        if answer["kind"] == FitKind.INVALID:
            raise CommandError(translated(answer["reason"]))
        self.stdout.write(_fit_line(answer))
        after = answer["after_restart"]
        if after:
            self.stdout.write(
                "  "
                + _(
                    "by v%(loaded)s, which the scheduler loaded; after it restarts "
                    "(v%(published)s): %(fit)s"
                )
                % {
                    "loaded": answer["config_version"],
                    "published": answer["published_version"],
                    "fit": _fit_line(after),
                }
            )

    # --- publishing (talks to the cluster) ------------------------------------------

    def _publish(self, options: dict[str, Any]) -> None:
        cluster = selectors.cluster_get(options["cluster"])
        self._published(
            lambda: publishing.deviceconfig_publish(
                cluster=cluster,
                actor=None,
                actor_name="manage.py",
                reason=options["reason"],
                force=options["force"],
                confirm_shape=options["confirm_shape"],
                confirm_breaking=options["confirm_breaking"],
                confirm_breaking_templates=options["confirm_breaking_template"],
            )
        )

    def _rollback(self, options: dict[str, Any]) -> None:
        cluster = selectors.cluster_get(options["cluster"])
        self._published(
            lambda: publishing.deviceconfig_rollback(
                cluster=cluster,
                actor=None,
                actor_name="manage.py",
                number=options["number"],
                reason=options["reason"],
                force=options["force"],
                confirm_shape=options["confirm_shape"],
            )
        )

    def _published(self, publish: Callable[[], PublishResult]) -> None:
        report_publish(self, publish)

    def _drift(self, options: dict[str, Any]) -> None:
        drift = deviceconfig_drift(selectors.cluster_get(options["cluster"]))
        if drift["in_sync"]:
            self.stdout.write(in_sync_line(drift))
            return
        self.stdout.write(drift["diff"], ending="")
        raise SystemExit(1)

    def _adopt(self, options: dict[str, Any]) -> None:
        version = publishing.deviceconfig_adopt(
            cluster=selectors.cluster_get(options["cluster"]),
            actor=None,
            actor_name="manage.py",
            reason=options["reason"],
        )
        self.stdout.write(
            _(
                "adopted the live device config as version %(version)s "
                "(resourceVersion %(resource_version)s)"
            )
            % {"version": version.number, "resource_version": version.resource_version}
        )


def report_publish(command: BaseCommand, publish: Callable[[], PublishResult]) -> None:
    """Run a publish (device or node config) and print what a script needs.

    Exit 1 with the three-way diff on a conflict, with each slice on a
    refusal to break running slices, with each warning on unconfirmed
    warnings; exit 0 with a line when there is nothing to change.
    """
    try:
        result = publish()
    except Conflict as exc:
        # Scripts get the three-way picture on stderr, and exit 1.
        command.stderr.write(f"conflict: {translated(exc.message)}")
        detail = exc.detail or {}
        for key in ("diff_live", "diff_proposed"):
            if detail.get(key):
                command.stderr.write(detail[key], ending="")
        raise SystemExit(1) from exc
    except DomainError as exc:
        if exc.code == "breaks_running_slices":
            # Each slice is named so a script can decide, then repeat
            # --confirm-breaking NAMESPACE/POD for each one it accepts.
            command.stderr.write(f"refused: {translated(exc.message)}")
            command.stderr.write(
                _(
                    "name each one with --confirm-breaking NAMESPACE/POD, or their "
                    "templates with --confirm-breaking-template COMMONWORD/TEMPLATE, "
                    "to publish anyway"
                )
            )
            raise SystemExit(1) from exc
        if exc.code == "unconfirmed_warnings":
            for line in (exc.detail or {}).get("confirm_warnings", [])[:-1]:
                command.stderr.write(f"warning: {line}")
            command.stderr.write(
                "refused: " + _("warnings; add --yes to publish anyway")
            )
            raise SystemExit(1) from exc
        if exc.code != "no_change":
            raise
        # Publishing what is already live is not a failure for a script.
        command.stdout.write(translated(exc.message))
        return
    for warning in result.warnings:
        command.stdout.write(f"warning: {translated(warning.message)}")
    for reader in result.shape_warnings:
        command.stdout.write(f"warning: {reader.message}")
    command.stdout.write(result.diff, ending="")
    command.stdout.write(
        _("published version %(version)s (resourceVersion %(resource_version)s)")
        % {
            "version": result.version.number,
            "resource_version": result.version.resource_version,
        }
    )


def in_sync_line(drift: dict[str, Any]) -> str:
    """``drift``'s line when the live ConfigMap holds the portal's version."""
    return _(
        "in sync with version %(version)s (resourceVersion %(resource_version)s)"
    ) % {
        "version": drift["baseline_version"],
        "resource_version": drift["live_resource_version"],
    }


def _fit_line(fit: dict[str, Any]) -> str:
    if fit["kind"] == FitKind.WHOLE_CARD:
        return f"whole card ({fit['memory']} MB): {fit['reason']}"
    if fit["kind"] == FitKind.INVALID:
        return f"refused: {fit['reason']}"
    return f"{fit['template']} ({fit['memory']} MB)"
