# Cluster names may no longer be all digits: `cluster` in the API and the
# commands takes an id or a name, and digits are read as the id. An existing
# all-digit name becomes "cluster-<name>" (with a suffix if that is taken);
# the rename is not reversed.

import django.core.validators
from django.db import migrations, models

import apps.inventory.models


def rename_numeric_clusters(apps, schema_editor):
    Cluster = apps.get_model("inventory", "Cluster")
    taken = set(Cluster.objects.values_list("name", flat=True))
    for cluster in Cluster.objects.order_by("pk"):
        if not (cluster.name.isascii() and cluster.name.isdigit()):
            continue
        base = f"cluster-{cluster.name}"[:60]
        new, n = base, 1
        while new in taken:
            n += 1
            new = f"{base}-{n}"
        taken.add(new)
        cluster.name = new
        cluster.save(update_fields=["name"])


class Migration(migrations.Migration):
    dependencies = [
        ("inventory", "0005_cluster_kubeconfig_encrypted"),
    ]

    operations = [
        migrations.RunPython(rename_numeric_clusters, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="cluster",
            name="name",
            field=models.CharField(
                max_length=63,
                unique=True,
                validators=[
                    django.core.validators.RegexValidator(
                        "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$",
                        "lowercase letters, digits and '-', starting and ending with a letter or digit",
                    ),
                    apps.inventory.models.cluster_name_not_numeric,
                ],
            ),
        ),
    ]
