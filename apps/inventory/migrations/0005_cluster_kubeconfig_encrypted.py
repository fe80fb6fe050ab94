# Kubeconfig content stored encrypted; paths only inside KUBECONFIG_DIR (issue 20).

from pathlib import Path

from django.db import migrations, models


def copy_kubeconfig_files(apps, schema_editor):
    """Existing clusters keep working: a kubeconfig file outside KUBECONFIG_DIR
    (registered with `cluster add --kubeconfig` before) is read now, at migrate
    time on the server, with the files it names inlined, and stored encrypted.
    A file that cannot be read is left as it is; the cluster then shows the
    refusal until an admin stores its kubeconfig again."""
    import yaml

    from apps.common.crypto import encrypt
    from apps.common.exceptions import ValidationFailed
    from apps.inventory.kubeconfig import (
        kubeconfig_flatten,
        kubeconfig_parse,
        path_inside_dir,
    )

    Cluster = apps.get_model("inventory", "Cluster")
    rows = Cluster.objects.filter(connection="kubeconfig", kubeconfig_encrypted="")
    for cluster in rows.exclude(kubeconfig_path=""):
        try:
            path_inside_dir(cluster.kubeconfig_path, field="kubeconfig_path")
            continue  # inside the folder: the path stays allowed
        except ValidationFailed:
            pass
        path = Path(cluster.kubeconfig_path)
        try:
            config = kubeconfig_parse(path.read_text())
            flat = kubeconfig_flatten(config, base_dir=path.parent)
        except (OSError, ValueError, ValidationFailed):
            continue
        cluster.kubeconfig_encrypted = encrypt(yaml.safe_dump(flat, sort_keys=False))
        cluster.kubeconfig_path = ""
        cluster.save(update_fields=["kubeconfig_encrypted", "kubeconfig_path"])


class Migration(migrations.Migration):

    dependencies = [
        ('inventory', '0004_synccursor_skipped_objects'),
    ]

    operations = [
        migrations.AddField(
            model_name='cluster',
            name='kubeconfig_encrypted',
            field=models.TextField(blank=True),
        ),
        migrations.RunPython(copy_kubeconfig_files, migrations.RunPython.noop),
    ]
