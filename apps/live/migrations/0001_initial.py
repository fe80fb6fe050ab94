"""LiveEvent, moved here from apps.inventory with its table (inventory_liveevent)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [("inventory", "0012_liveevent_moved_to_live")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="LiveEvent",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        ("group", models.CharField(max_length=100)),
                        ("event", models.CharField(max_length=64)),
                        ("payload", models.JSONField()),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                    ],
                    options={"ordering": ["id"], "db_table": "inventory_liveevent"},
                )
            ],
            database_operations=[],
        )
    ]
