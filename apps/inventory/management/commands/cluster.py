"""``manage.py cluster add|list|remove``: register the clusters the portal manages."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from django.core.management.base import CommandError, CommandParser
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from kubernetes import config as kube_config

from apps.common.exceptions import DomainError
from apps.common.management.base import PortalCommand
from apps.inventory import services
from apps.inventory.choices import ConnectionKind
from apps.inventory.kubeconfig import kubeconfig_flatten, kubeconfig_parse
from apps.inventory.models import Cluster


class Command(PortalCommand):
    help = gettext_lazy(
        "Register (add), list or remove clusters. Credentials stay on the server."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(
            dest="verb", required=True, parser_class=CommandParser
        )
        add = sub.add_parser("add", help=_("register a cluster"))
        add.add_argument("name")
        how = add.add_mutually_exclusive_group(required=True)
        how.add_argument("--kubeconfig", help=_("path to a kubeconfig file"))
        how.add_argument(
            "--in-cluster",
            action="store_true",
            help=_("use the pod's service account"),
        )
        how.add_argument("--url", help=_("API server URL (with --token-file)"))
        add.add_argument(
            "--context", default="", help=_("kubeconfig context (default: current)")
        )
        add.add_argument(
            "--token-file", help=_("file holding a bearer token (with --url)")
        )
        add.add_argument(
            "--device-config",
            default="kube-system/hami-scheduler-device",
            help=_("NAMESPACE/NAME of the device-config ConfigMap"),
        )
        sub.add_parser("list", help=_("list clusters and their sync state"))
        remove = sub.add_parser(
            "remove", help=_("forget a cluster (the cluster itself is untouched)")
        )
        remove.add_argument("name")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            getattr(self, f"_{options['verb']}")(options)
        except DomainError as exc:
            detail = getattr(exc, "detail", None)
            raise CommandError(f"{exc.message} {detail or ''}".strip()) from exc

    def _add(self, options: dict[str, Any]) -> None:
        namespace, _slash, name = options["device_config"].partition("/")
        if not name:
            raise CommandError(_("--device-config must be NAMESPACE/NAME"))
        fields: dict[str, Any] = {
            "name": options["name"],
            "device_config_namespace": namespace,
            "device_config_name": name,
        }
        token = ""
        kubeconfig: str | None = None
        if options["kubeconfig"]:
            path = Path(options["kubeconfig"]).expanduser().resolve()
            # The operator at the server's shell may read this file and those it
            # names; the portal keeps the content (encrypted), not the path.
            try:
                contexts, _current = kube_config.list_kube_config_contexts(
                    config_file=str(path)
                )
                flat = kubeconfig_flatten(
                    kubeconfig_parse(path.read_text()), base_dir=path.parent
                )
            except Exception as exc:
                raise CommandError(
                    _("--kubeconfig %(path)s: not a readable kubeconfig (%(error)s)")
                    % {"path": path, "error": exc}
                ) from exc
            names = [c["name"] for c in contexts]
            if options["context"] and options["context"] not in names:
                raise CommandError(
                    _("--context %(context)r not in %(path)s (has: %(names)s)")
                    % {
                        "context": options["context"],
                        "path": path,
                        "names": ", ".join(names),
                    }
                )
            kubeconfig = yaml.safe_dump(flat, sort_keys=False)
            fields.update(
                connection=ConnectionKind.KUBECONFIG,
                kubeconfig_path="",
                kubeconfig_context=options["context"],
            )
        elif options["in_cluster"]:
            fields.update(connection=ConnectionKind.IN_CLUSTER)
        else:
            if not options["token_file"]:
                raise CommandError(_("--url needs --token-file"))
            token = Path(options["token_file"]).read_text().strip()
            fields.update(connection=ConnectionKind.TOKEN, api_url=options["url"])
        existing = Cluster.objects.filter(name=options["name"]).first()
        if existing is not None:
            services.cluster_update(
                cluster=existing,
                actor=None,
                token=token or None,
                kubeconfig=kubeconfig,
                **fields,
            )
            self.stdout.write(_("updated cluster %(name)s") % {"name": options["name"]})
        else:
            services.cluster_create(
                actor=None, token=token, kubeconfig=kubeconfig, **fields
            )
            self.stdout.write(_("added cluster %(name)s") % {"name": options["name"]})

    def _list(self, options: dict[str, Any]) -> None:
        for cluster in Cluster.objects.all():
            self.stdout.write(
                f"{cluster.name}\t{cluster.connection}\t{cluster.sync_state}\t{cluster.last_sync_at or '-'}"
            )

    def _remove(self, options: dict[str, Any]) -> None:
        cluster = Cluster.objects.filter(name=options["name"]).first()
        if cluster is None:
            raise CommandError(
                _("no cluster %(cluster)r") % {"cluster": options["name"]}
            )
        services.cluster_delete(cluster=cluster, actor=None)
        self.stdout.write(_("removed cluster %(name)s") % {"name": options["name"]})
