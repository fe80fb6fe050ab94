"""``manage.py cluster add|list|remove``: register the clusters the portal manages."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from django.core.management.base import BaseCommand, CommandError, CommandParser
from kubernetes import config as kube_config

from apps.common.exceptions import DomainError
from apps.inventory import services
from apps.inventory.choices import ConnectionKind
from apps.inventory.kubeconfig import kubeconfig_flatten, kubeconfig_parse
from apps.inventory.models import Cluster


class Command(BaseCommand):
    help = "Register (add), list or remove clusters. Credentials stay on the server."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(
            dest="verb", required=True, parser_class=CommandParser
        )
        add = sub.add_parser("add", help="register a cluster")
        add.add_argument("name")
        how = add.add_mutually_exclusive_group(required=True)
        how.add_argument("--kubeconfig", help="path to a kubeconfig file")
        how.add_argument(
            "--in-cluster", action="store_true", help="use the pod's service account"
        )
        how.add_argument("--url", help="API server URL (with --token-file)")
        add.add_argument(
            "--context", default="", help="kubeconfig context (default: current)"
        )
        add.add_argument(
            "--token-file", help="file holding a bearer token (with --url)"
        )
        add.add_argument(
            "--device-config",
            default="kube-system/hami-scheduler-device",
            help="NAMESPACE/NAME of the device-config ConfigMap",
        )
        sub.add_parser("list", help="list clusters and their sync state")
        remove = sub.add_parser(
            "remove", help="forget a cluster (the cluster itself is untouched)"
        )
        remove.add_argument("name")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            getattr(self, f"_{options['verb']}")(options)
        except DomainError as exc:
            detail = getattr(exc, "detail", None)
            raise CommandError(f"{exc.message} {detail or ''}".strip()) from exc

    def _add(self, options: dict[str, Any]) -> None:
        namespace, _, name = options["device_config"].partition("/")
        if not name:
            raise CommandError("--device-config must be NAMESPACE/NAME")
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
                    f"--kubeconfig {path}: not a readable kubeconfig ({exc})"
                ) from exc
            names = [c["name"] for c in contexts]
            if options["context"] and options["context"] not in names:
                raise CommandError(
                    f"--context {options['context']!r} not in {path} (has: {', '.join(names)})"
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
                raise CommandError("--url needs --token-file")
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
            self.stdout.write(f"updated cluster {options['name']}")
        else:
            services.cluster_create(
                actor=None, token=token, kubeconfig=kubeconfig, **fields
            )
            self.stdout.write(f"added cluster {options['name']}")

    def _list(self, options: dict[str, Any]) -> None:
        for cluster in Cluster.objects.all():
            self.stdout.write(
                f"{cluster.name}\t{cluster.connection}\t{cluster.sync_state}\t{cluster.last_sync_at or '-'}"
            )

    def _remove(self, options: dict[str, Any]) -> None:
        cluster = Cluster.objects.filter(name=options["name"]).first()
        if cluster is None:
            raise CommandError(f"no cluster {options['name']!r}")
        services.cluster_delete(cluster=cluster, actor=None)
        self.stdout.write(f"removed cluster {options['name']}")
