"""LiveEvent moved to apps.live; its table stays (apps/live/migrations/0001)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("inventory", "0011_cluster_config_loaded")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="LiveEvent")],
            database_operations=[],
        )
    ]
