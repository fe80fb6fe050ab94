"""``manage.py sync --cluster NAME [--once]``: mirror a cluster from the command line.

``--once`` lists everything once into the database and exits (for scripts and
checks); without it the watches run in the foreground until Ctrl-C, as a
Celery worker would run them.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError, CommandParser
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from apps.common.exceptions import DomainError
from apps.common.management.base import PortalCommand
from apps.inventory.kube import TRANSPORT_ERRORS, KubeError, kube_error
from apps.inventory.selectors import cluster_get
from apps.inventory.sync.engine import sync_once, sync_run


class Command(PortalCommand):
    help = gettext_lazy(
        "Sync a cluster into the database: once (--once) or continuously."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--cluster", required=True)
        parser.add_argument(
            "--once", action="store_true", help=_("one full list, then exit")
        )
        parser.add_argument(
            "--seconds",
            type=float,
            default=10**9,
            help=_("stop after this long (continuous mode)"),
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            cluster = cluster_get(options["cluster"])
            if options["once"]:
                counts = sync_once(cluster)
                self.stdout.write(", ".join(f"{key}: {n}" for key, n in counts.items()))
                return
            stats = sync_run(cluster.pk, seconds=options["seconds"])
        except DomainError as exc:
            raise CommandError(exc.message) from exc
        except KubeError as exc:
            # The server's message too: it names the permission an RBAC refusal lacks.
            raise CommandError(
                f"{exc.described(options['cluster'])}: {exc.message}"
            ) from exc
        except TRANSPORT_ERRORS as exc:
            raise CommandError(kube_error(exc).described(options["cluster"])) from exc
        except KeyboardInterrupt:
            return
        if not stats:
            self.stdout.write(_("another worker already watches this cluster"))
        for key, stat in sorted(stats.items()):
            self.stdout.write(
                _(
                    "watched %(key)s: %(lists)d lists, %(events)d events, %(errors)d errors"
                )
                % {
                    "key": key,
                    "lists": stat.lists,
                    "events": stat.events,
                    "errors": stat.errors,
                }
            )
