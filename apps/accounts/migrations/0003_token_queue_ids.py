"""API tokens name their queues by id: a name alone matched that name in every cluster."""

from django.db import migrations, models


def _names_to_ids(apps, schema_editor):
    token_model = apps.get_model("accounts", "ApiToken")
    queue_model = apps.get_model("scheduling", "Queue")
    for token in token_model.objects.exclude(queues=[]):
        ids = sorted(
            queue_model.objects.filter(name__in=token.queues).values_list(
                "pk", flat=True
            )
        )
        # A name no queue has any more still limits the token: to nothing.
        token.queue_ids = ids or [0]
        token.save(update_fields=["queue_ids"])


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0002_role_ci"),
        ("scheduling", "0008_queue_membership_and_priority"),
    ]

    operations = [
        migrations.AddField(
            model_name="apitoken",
            name="queue_ids",
            field=models.JSONField(blank=True, default=list),
        ),
        migrations.RunPython(_names_to_ids, migrations.RunPython.noop),
        migrations.RemoveField(model_name="apitoken", name="queues"),
    ]
