"""sync's bulk insert: every row in, and on PostgreSQL fresh statistics for the
key columns that the statements after a big insert filter and join on."""

from __future__ import annotations

import pytest
from django.db import connection

from apps.inventory.models import Slice
from apps.inventory.sync.bulk import insert_rows
from tests.requires import missing

pytestmark = pytest.mark.django_db


def _rows(cluster, count: int) -> list[dict]:
    return [
        {
            "cluster_id": cluster.pk,
            "chip_uuid": f"UUID-{n % 400:04d}",
            "common_word": "Ascend310P",
            "namespace": f"team-{n % 7}",
            "pod_name": f"pod-{n}",
        }
        for n in range(count)
    ]


def test_every_row_goes_in_with_the_field_defaults(guide_cluster):
    insert_rows(Slice, _rows(guide_cluster, 1200))
    stored = Slice.objects.filter(cluster=guide_cluster)
    assert stored.count() == 1200
    assert set(stored.values_list("volcano_queue", "preemptable").distinct()) == {
        ("default", True)
    }
    assert stored.filter(pod_name="pod-1199", namespace="team-2").exists()


def test_a_big_insert_leaves_statistics_for_its_key_columns(guide_cluster):
    if connection.vendor != "postgresql":
        missing("needs PostgreSQL: statistics are PostgreSQL's")

    def analyzed() -> set[str]:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT attname FROM pg_stats WHERE tablename = %s",
                [Slice._meta.db_table],
            )
            return {row[0] for row in cursor.fetchall()}

    with connection.cursor() as cursor:  # none left from other tests
        cursor.execute(
            "DELETE FROM pg_statistic WHERE starelid = %s::regclass",
            [Slice._meta.db_table],
        )
    assert "cluster_id" not in analyzed()
    insert_rows(Slice, _rows(guide_cluster, 1000))
    assert {"cluster_id", "chip_id"} <= analyzed()
