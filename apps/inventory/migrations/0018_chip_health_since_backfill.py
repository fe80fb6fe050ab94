"""Chips synced before ``health_since`` existed get it now.

Sync sets it when a chip appears or its health flag flips; a chip already
sick at the upgrade would otherwise never get one, and the isolation
suggestion (sick for longer than ISOLATION_SUGGEST_AFTER_SECONDS) would never
be offered for it. Its health has been what it is since at least now.
"""

from django.db import migrations
from django.utils import timezone


def backfill(apps, schema_editor):
    Chip = apps.get_model("inventory", "Chip")
    Chip.objects.filter(health_since__isnull=True).update(health_since=timezone.now())


class Migration(migrations.Migration):
    dependencies = [
        ("inventory", "0017_chip_isolation"),
    ]

    operations = [
        migrations.RunPython(backfill, migrations.RunPython.noop),
    ]
