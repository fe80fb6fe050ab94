"""sync's bulk insert: every row in, and on PostgreSQL fresh statistics for the
key columns that the statements after a big insert filter and join on."""

from __future__ import annotations

import pytest
from django.db import connection

from apps.inventory.models import Slice
from apps.inventory.sync.bulk import insert_rows
from tests.requires import missing

pytestmark = pytest.mark.django_db


def _rows(cluster, count: int, first: int = 0) -> list[dict]:
    return [
        {
            "cluster_id": cluster.pk,
            "chip_uuid": f"UUID-{n % 400:04d}",
            "common_word": "Ascend310P",
            "namespace": f"team-{n % 7}",
            "pod_name": f"pod-{n}",
        }
        for n in range(first, first + count)
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

    def query(sql: str) -> list:
        with connection.cursor() as cursor:
            cursor.execute(sql, [Slice._meta.db_table])
            return [row[0] for row in cursor.fetchall()]

    def estimated_rows() -> float:
        return query("SELECT reltuples FROM pg_class WHERE relname = %s")[0]

    insert_rows(Slice, _rows(guide_cluster, 999))  # too few to analyze
    assert estimated_rows() != Slice.objects.count()
    insert_rows(Slice, _rows(guide_cluster, 1000, first=999))
    # analyzed in this transaction: the estimate is the table as it now is
    assert estimated_rows() == Slice.objects.count() == 1999
    assert {"cluster_id", "chip_id"} <= set(
        query("SELECT attname FROM pg_stats WHERE tablename = %s")
    )
