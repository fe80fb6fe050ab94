"""``manage.py createtoken USERNAME --role ROLE [--queue Q ...]``: a token, printed once."""

from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError, CommandParser
from django.db import transaction
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from apps.accounts import services
from apps.accounts.choices import Role
from apps.common.exceptions import DomainError
from apps.common.management.base import PortalCommand


class Command(PortalCommand):
    help = gettext_lazy(
        "Create (or reuse) a user or service account and print a new API token for it, once."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--role", choices=Role.values, required=True)
        parser.add_argument(
            "--queue",
            action="append",
            dest="queues",
            default=[],
            help=_(
                "limit the token to a queue, as cluster/queue or a name one "
                "cluster has (repeatable; required unless --role admin)"
            ),
        )
        parser.add_argument("--name", default="", help=_("a label for the token"))

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            # One transaction: a refused token leaves no new account behind.
            with transaction.atomic():
                user = services.user_ensure(
                    username=options["username"],
                    role=options["role"],
                    is_service_account=True,
                )
                issued = services.token_create(
                    user=user, name=options["name"], queues=options["queues"]
                )
        except DomainError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(issued.plaintext)
