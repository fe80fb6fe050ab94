"""``manage.py nodeconfig check|import|export|publish|drift|adopt|rollback``: the
device plugin's per-node config on the command line, as ``deviceconfig``.

Scripts rely on these names and exit codes (docs/command-line.md):
  check FILE [--cluster NAME] [--strict]
                          exit 0 when valid (warnings printed), 1 with one line per
                          error (path: message); --strict makes warnings fail too
  import FILE --cluster NAME [--reason TEXT]
                          create the cluster if missing, store the file as an
                          imported version (a draft); nothing is written to the cluster
  export --cluster NAME   print the live node config sync mirrored (or, before sync
                          has seen one, a file that changes nothing)
  publish FILE --cluster NAME --reason TEXT [--yes] [--force] [--expected-version N]
                          write the file to the cluster; exit 1 with the errors, the
                          warnings or a plugin that does not read the node config
                          (both without --yes) or the diff of a conflict; 0 when
                          nothing changes
  drift --cluster NAME    exit 0 when the live ConfigMap holds the portal's version,
                          1 with the diff otherwise
  adopt --cluster NAME [--reason TEXT]
                          take the live node config as the portal's
  rollback --cluster NAME --version N --reason TEXT [--yes] [--force]
                          publish version N's text again (exit codes as publish)
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError, CommandParser
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from apps.common.exceptions import DomainError, ValidationFailed
from apps.common.management.base import PortalCommand
from apps.common.translated import translated
from apps.inventory import selectors
from apps.inventory.hami.nodeconfig import NodeConfigError
from apps.inventory.management.commands.deviceconfig import (
    in_sync_line,
    report_publish,
)
from apps.inventory.management.textfile import read_text_file
from apps.inventory.nodeconfig import publishing
from apps.inventory.nodeconfig.selectors import (
    nodeconfig_check,
    nodeconfig_mirror,
    nodeconfig_starting_file,
)
from apps.inventory.nodeconfig.services import nodeconfig_import

EXPORT_HELP = gettext_lazy(
    "print the live node-config.yaml sync mirrored from the cluster; before sync "
    "has seen one (no ConfigMap, or not synced), a file that changes nothing: every "
    "node labelled ascend=on or registering chips, in the mode it reports now"
)


class Command(PortalCommand):
    help = gettext_lazy(
        "Check, import, export, publish, adopt or roll back the device plugin's node "
        "config (hami-device-node-config), as deviceconfig does for the device config."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(
            dest="verb", required=True, parser_class=CommandParser
        )
        check = sub.add_parser(
            "check",
            help=_(
                "validate a node-config.yaml (or a ConfigMap holding one); with "
                "--cluster, also against its nodes, chips, plugin version and templates"
            ),
        )
        check.add_argument("file")
        check.add_argument("--cluster", default=None)
        check.add_argument(
            "--strict", action="store_true", help=_("exit 1 on warnings too")
        )
        imp = sub.add_parser(
            "import",
            help=_(
                "store a file as a version of a cluster's node config (a draft: "
                "nothing is written to the cluster; rollback --version N publishes it)"
            ),
        )
        imp.add_argument("file")
        imp.add_argument("--cluster", required=True)
        imp.add_argument("--reason", default="")
        exp = sub.add_parser("export", help=str(EXPORT_HELP))
        exp.add_argument("--cluster", required=True)
        pub = sub.add_parser(
            "publish", help=_("write a file to the cluster's ConfigMap")
        )
        pub.add_argument("file")
        _publish_options(pub)
        pub.add_argument(
            "--expected-version",
            type=int,
            default=None,
            dest="expected_version",
            help=_(
                "refuse (exit 1) unless the portal's node config is at this version"
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
        back.add_argument("--version", type=int, required=True, dest="number")
        _publish_options(back)

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            getattr(self, f"_{options['verb']}")(options)
        except ValidationFailed as exc:
            for field, messages in (exc.detail or {}).items():
                for message in messages if isinstance(messages, list) else [messages]:
                    self.stderr.write(f"error: {field}: {translated(message)}")
            raise CommandError(translated(exc.message)) from exc
        except DomainError as exc:
            raise CommandError(translated(exc.message)) from exc

    def _check(self, options: dict[str, Any]) -> None:
        text = read_text_file(options["file"])
        cluster = (
            selectors.cluster_get(options["cluster"]) if options["cluster"] else None
        )
        try:
            read, report = nodeconfig_check(text, cluster)
        except NodeConfigError as exc:
            raise CommandError(f"{options['file']}: {translated(exc.message)}") from exc
        errors = read.report.errors + report.errors
        warnings = read.report.warnings + report.warnings
        for warning in warnings:
            self.stdout.write(
                f"warning: {warning.field}: {translated(warning.message)}"
            )
        for error in errors:
            self.stderr.write(f"error: {error.field}: {translated(error.message)}")
        if errors or (options["strict"] and warnings):
            raise SystemExit(1)
        against = (
            _("checked against cluster %(cluster)s") % {"cluster": cluster.name}
            if cluster is not None
            else _("format only (add --cluster NAME to check nodes and chips)")
        )
        self.stdout.write(
            "ok: "
            + _("%(count)d nodes, %(against)s")
            % {"count": len(read.entries), "against": against}
        )

    def _import(self, options: dict[str, Any]) -> None:
        version, warnings = nodeconfig_import(
            cluster_name=options["cluster"],
            text=read_text_file(options["file"]),
            reason=options["reason"],
            actor=None,
            actor_name="manage.py",
        )
        for warning in warnings:
            self.stdout.write(
                f"warning: {warning.field}: {translated(warning.message)}"
            )
        self.stdout.write(
            _(
                "imported %(file)s as version %(version)s of cluster %(cluster)s "
                "(nothing was written to the cluster)"
            )
            % {
                "file": options["file"],
                "version": version.number,
                "cluster": options["cluster"],
            }
        )

    def _export(self, options: dict[str, Any]) -> None:
        cluster = selectors.cluster_get(options["cluster"])
        mirror = nodeconfig_mirror(cluster)
        if mirror.text is not None:
            self.stdout.write(mirror.text, ending="")
            return
        self.stdout.write(nodeconfig_starting_file(cluster), ending="")
        self.stderr.write(
            "note: "
            + _(
                "ConfigMap %(configmap)s is %(state)s (or has no node-config.yaml): "
                "built from the inventory, every Ascend node in its current mode, "
                "no overrides"
            )
            % {"configmap": f"{mirror.namespace}/{mirror.name}", "state": mirror.state}
        )

    def _publish(self, options: dict[str, Any]) -> None:
        cluster = selectors.cluster_get(options["cluster"])
        expected = options["expected_version"]
        report_publish(
            self,
            lambda: publishing.nodeconfig_publish(
                cluster=cluster,
                actor=None,
                actor_name="manage.py",
                reason=options["reason"],
                text=read_text_file(options["file"]),
                expected_version=publishing.CURRENT if expected is None else expected,
                confirm_warnings=options["yes"],
                confirm_unread=options["yes"],
                force=options["force"],
            ),
        )

    def _rollback(self, options: dict[str, Any]) -> None:
        cluster = selectors.cluster_get(options["cluster"])
        report_publish(
            self,
            lambda: publishing.nodeconfig_rollback(
                cluster=cluster,
                actor=None,
                actor_name="manage.py",
                number=options["number"],
                reason=options["reason"],
                confirm_warnings=options["yes"],
                confirm_unread=options["yes"],
                force=options["force"],
            ),
        )

    def _drift(self, options: dict[str, Any]) -> None:
        drift = publishing.nodeconfig_drift(selectors.cluster_get(options["cluster"]))
        if drift["in_sync"]:
            self.stdout.write(in_sync_line(drift))
            return
        self.stdout.write(drift["diff"], ending="")
        raise SystemExit(1)

    def _adopt(self, options: dict[str, Any]) -> None:
        version = publishing.nodeconfig_adopt(
            cluster=selectors.cluster_get(options["cluster"]),
            actor=None,
            actor_name="manage.py",
            reason=options["reason"],
        )
        self.stdout.write(
            _(
                "adopted the live node config as version %(version)s "
                "(resourceVersion %(resource_version)s)"
            )
            % {"version": version.number, "resource_version": version.resource_version}
        )


def _publish_options(parser: CommandParser) -> None:
    parser.add_argument("--cluster", required=True)
    parser.add_argument("--reason", required=True)
    parser.add_argument(
        "--yes", action="store_true", help=_("publish even with validation warnings")
    )
    parser.add_argument(
        "--force", action="store_true", help=_("publish over a hand edit")
    )
