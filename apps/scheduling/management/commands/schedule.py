"""``manage.py schedule [--cluster NAME ...] [--loop SECONDS]``: run scheduling passes.

Without a broker (or to see what a pass does) this runs the same pass as
``allocate_cluster_task``: reconcile, reserve, admit. It prints one line per
cluster; "busy" means another process holds the cluster's pass lock.
"""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import CommandError, CommandParser
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from apps.common.management.base import PortalCommand
from apps.inventory.models import Cluster
from apps.scheduling.choices import CARRIED_OUT_STATES
from apps.scheduling.eviction import victims_evict
from apps.scheduling.models import PreemptionProposal
from apps.scheduling.passes import scheduling_pass


class Command(PortalCommand):
    help = gettext_lazy(
        "Run scheduling passes (reconcile, reserve, admit) and due evictions."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--cluster",
            action="append",
            default=[],
            help=_("name (repeatable; default: all)"),
        )
        parser.add_argument(
            "--loop",
            type=float,
            default=0.0,
            help=_("repeat every this many seconds until interrupted"),
        )

    def handle(self, *args: Any, **options: Any) -> None:
        clusters = Cluster.objects.order_by("name")
        if options["cluster"]:
            clusters = clusters.filter(name__in=options["cluster"])
            missing = set(options["cluster"]) - set(
                clusters.values_list("name", flat=True)
            )
            if missing:
                raise CommandError(
                    _("no cluster %(cluster)r") % {"cluster": sorted(missing)[0]}
                )
        while True:
            for cluster in clusters:
                self._once(cluster)
            if not options["loop"]:
                return
            time.sleep(options["loop"])

    def _once(self, cluster: Cluster) -> None:
        report = scheduling_pass(cluster.pk)
        if report is None:
            self.stdout.write(_("%(cluster)s: busy") % {"cluster": cluster.name})
            return
        for proposal_id in PreemptionProposal.objects.filter(
            cluster=cluster, state__in=CARRIED_OUT_STATES
        ).values_list("pk", flat=True):
            victims_evict(proposal_id)
        a = report.allocation
        self.stdout.write(
            _(
                "%(cluster)s: reserved %(reserved)d, proposed %(proposed)d, "
                "waiting %(waiting)d, failed %(failed)d, admitted %(admitted)d"
            )
            % {
                "cluster": cluster.name,
                "reserved": len(a.reserved),
                "proposed": len(a.proposed),
                "waiting": len(a.waiting),
                "failed": len(a.failed),
                "admitted": len(report.admitted),
            }
        )
