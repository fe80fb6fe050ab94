"""``manage.py demo``: what the README's run command (scripts/run.sh) sets up for a newcomer.

Idempotent: an ``admin`` user (password ``admin``, for the local demo only),
the cluster ``demo``: connected to a simulated cluster when ``--kubeconfig`` is
given (its first sync adopts the cluster's device config), otherwise with the
guide's device config imported; and the queue ``ci`` whose pods may
run in namespace ``ci``, what the pipeline example of docs/pipelines.md uses (simcluster's
guide scenario has that namespace, its Volcano queue and the PriorityClasses).

It lives in scheduling, the floor that sees both the inventory (the cluster)
and the queues; the guide's device config stays with the inventory.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from apps.accounts.services import user_set_role
from apps.common.management.base import PortalCommand
from apps.inventory.deviceconfig.services import deviceconfig_import
from apps.inventory.models import Cluster
from apps.scheduling.models import Queue
from apps.scheduling.services.queues import queue_create

# The queue of the pipeline example (docs/pipelines.md), and the namespace its pods use.
CI_QUEUE = "ci"
CI_NAMESPACE = "ci"

GUIDE_CONFIG = (
    Path(__file__).resolve().parents[3]
    / "inventory"
    / "demo"
    / "guide-device-config.yaml"
)


class Command(PortalCommand):
    help = gettext_lazy(
        "Create the demo admin user and the demo cluster (safe to run again)."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--cluster", default="demo")
        parser.add_argument("--password", default="admin")
        parser.add_argument(
            "--kubeconfig",
            help=_(
                "register the cluster with this kubeconfig (a running simcluster); "
                "without it, import the guide's device config only"
            ),
        )

    def handle(self, *args: Any, **options: Any) -> None:
        user_model = get_user_model()
        admin = user_model.objects.filter(username="admin").first()
        if admin is None:
            admin = user_model.objects.create_superuser(
                "admin", "", options["password"]
            )
            self.stdout.write(_("created user admin"))
        user_set_role(user=admin, role="admin")
        if options["kubeconfig"]:
            call_command(
                "cluster",
                "add",
                options["cluster"],
                "--kubeconfig",
                options["kubeconfig"],
                stdout=self.stdout,
            )
        elif not Cluster.objects.filter(name=options["cluster"]).exists():
            deviceconfig_import(
                cluster_name=options["cluster"],
                text=GUIDE_CONFIG.read_text(),
                actor=admin,
                reason="demo: the guide's device config",
            )
            self.stdout.write(
                _("created cluster %(cluster)s with the guide's device config")
                % {"cluster": options["cluster"]}
            )
        cluster = Cluster.objects.get(name=options["cluster"])
        if not Queue.objects.filter(cluster=cluster, name=CI_QUEUE).exists():
            queue_create(
                actor=admin,
                cluster=cluster,
                name=CI_QUEUE,
                description="the pipeline example of the docs",
                allowed_namespaces=[CI_NAMESPACE],
                # Restricted pods with the default ServiceAccount: safe for all.
                access={"open_to_all": True},
            )
            self.stdout.write(
                _("created queue %(queue)s (pods in namespace %(namespace)s)")
                % {"queue": CI_QUEUE, "namespace": CI_NAMESPACE}
            )
