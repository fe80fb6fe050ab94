"""``manage.py inventory chips --cluster NAME [--json]``: what sync knows, for scripts."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import CommandError, CommandParser
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from apps.common.exceptions import DomainError
from apps.common.management.base import PortalCommand
from apps.inventory.models import Chip
from apps.inventory.selectors import cluster_get


class Command(PortalCommand):
    help = gettext_lazy("Print the chips of a cluster with their usage (memory in MB).")

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(
            dest="verb", required=True, parser_class=CommandParser
        )
        chips = sub.add_parser("chips", help=_("one line (or JSON object) per chip"))
        chips.add_argument("--cluster", required=True)
        chips.add_argument("--json", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            cluster = cluster_get(options["cluster"])
        except DomainError as exc:
            raise CommandError(exc.message) from exc
        rows = [
            {
                "node": chip.node.name,
                "index": chip.index,
                "uuid": chip.uuid,
                "chip_type": chip.common_word,
                "healthy": chip.healthy,
                "slots_used": chip.slots_used,
                "slots_total": chip.slots,
                "memory_used": chip.memory_used,
                "memory_total": chip.memory,
                "aicore_used": chip.aicore_used,
                "aicore_total": chip.aicore,
                "aicpu_used": chip.aicpu_used,
                "aicpu_total": chip.aicpu,
            }
            for chip in Chip.objects.filter(cluster=cluster)
            .select_related("node")
            .order_by("node__name", "common_word", "index")
        ]
        if options["json"]:
            self.stdout.write(json.dumps(rows, indent=2))
            return
        for r in rows:
            self.stdout.write(
                f"{r['node']}\t{r['chip_type']}#{r['index']}\t{'ok' if r['healthy'] else 'UNHEALTHY'}\t"
                f"slots {r['slots_used']}/{r['slots_total']}\tmem {r['memory_used']}/{r['memory_total']} MB\t"
                f"aicore {r['aicore_used']}/{r['aicore_total']}\taicpu {r['aicpu_used']}/{r['aicpu_total']}"
            )
