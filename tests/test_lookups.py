"""``field__in_array``: the same rows as ``__in``, on SQLite and PostgreSQL alike."""

from __future__ import annotations

import pytest
from django.db import connection

from apps.inventory.models import Chip, Node

pytestmark = pytest.mark.django_db


@pytest.fixture
def chips(guide_cluster):
    nodes = [
        Node.objects.create(cluster=guide_cluster, name=f"node-{n}") for n in range(2)
    ]
    return [
        Chip.objects.create(
            cluster=guide_cluster,
            node=nodes[i % 2],
            common_word="Ascend310P",
            uuid=f"UUID-{i:04d}",
            index=i,
        )
        for i in range(6)
    ]


def test_strings_ints_and_relations_match_what_in_matches(chips):
    uuids = {"UUID-0001", "UUID-0004", "not-a-chip"}
    node_ids = [chips[0].node_id]
    for in_array, plain in (
        ({"uuid__in_array": uuids}, {"uuid__in": uuids}),
        (
            {"id__in_array": [c.pk for c in chips[:3]]},
            {"id__in": [c.pk for c in chips[:3]]},
        ),
        ({"node_id__in_array": node_ids}, {"node_id__in": node_ids}),
        ({"node__in_array": node_ids}, {"node__in": node_ids}),
    ):
        got = set(Chip.objects.filter(**in_array).values_list("uuid", flat=True))
        want = set(Chip.objects.filter(**plain).values_list("uuid", flat=True))
        assert got, in_array
        assert got == want, (in_array, got, want)


def test_an_empty_or_generated_set(chips):
    assert not Chip.objects.filter(uuid__in_array=[]).exists()
    assert Chip.objects.exclude(uuid__in_array=[]).count() == len(chips)
    generated = (c.uuid for c in chips if c.index % 2)
    assert Chip.objects.filter(uuid__in_array=generated).count() == 3
    assert Chip.objects.exclude(uuid__in_array={"UUID-0000"}).count() == len(chips) - 1


def test_postgresql_gets_one_array_parameter(chips):
    sql, params = Chip.objects.filter(
        uuid__in_array=[c.uuid for c in chips]
    ).query.sql_with_params()
    if connection.vendor == "postgresql":
        assert "= ANY(" in sql
        assert [c.uuid for c in chips] in list(params)
    else:
        assert " IN (" in sql
        assert len([p for p in params if str(p).startswith("UUID-")]) == len(chips)


def _slices(cluster, pairs):
    from apps.inventory.models import Slice

    for n, (namespace, name) in enumerate(pairs):
        Slice.objects.create(
            cluster=cluster,
            chip_uuid=f"UUID-{n}",
            common_word="Ascend310P",
            namespace=namespace,
            pod_name=name,
        )
    return Slice.objects.filter(cluster=cluster)


def test_pairs_match_exactly_the_named_pairs_not_their_twins(guide_cluster):
    """(namespace, name) pairs: a pod named in one namespace is not matched in
    another, though both columns' values appear among the pairs."""
    from apps.common.lookups import PairIn

    slices = _slices(
        guide_cluster, [(ns, name) for ns in ("team-a", "team-b") for name in "xy"]
    )
    named = {("team-a", "x"), ("team-b", "y"), ("team-c", "x")}
    got = set(
        slices.filter(PairIn("namespace", "pod_name", named)).values_list(
            "namespace", "pod_name"
        )
    )
    assert got == {("team-a", "x"), ("team-b", "y")}
    assert not slices.filter(PairIn("namespace", "pod_name", [])).exists()
    assert slices.exclude(PairIn("namespace", "pod_name", named)).count() == 2


def test_postgresql_gets_the_pairs_as_two_array_parameters(guide_cluster):
    from apps.common.lookups import PairIn

    pairs = [("team-a", "x"), ("team-b", "y")]
    slices = _slices(guide_cluster, pairs)
    sql, params = slices.filter(
        PairIn("namespace", "pod_name", pairs)
    ).query.sql_with_params()
    if connection.vendor == "postgresql":
        assert "unnest(" in sql
        assert ["team-a", "team-b"] in list(params)
        assert ["x", "y"] in list(params)
    else:
        assert "VALUES" in sql
        assert [p for p in params if p in {"team-a", "team-b", "x", "y"}] == [
            "team-a",
            "x",
            "team-b",
            "y",
        ]
    assert slices.filter(PairIn("namespace", "pod_name", pairs)).count() == 2


def test_a_longer_value_never_matches_the_stored_value_it_starts_with(guide_cluster):
    """A cast to the column's varchar(n) would cut the parameter to n
    characters; the arrays are cast to plain varchar."""
    from apps.common.lookups import PairIn
    from apps.inventory.models import Slice

    namespace = "n" * 63  # the column's whole length
    slices = _slices(guide_cluster, [(namespace, "pod")])
    chip = slices.get()
    assert slices.filter(PairIn("namespace", "pod_name", [(namespace, "pod")])).exists()
    assert not slices.filter(
        PairIn("namespace", "pod_name", [(namespace + "x", "pod")])
    ).exists()
    assert Slice.objects.filter(chip_uuid__in_array=[chip.chip_uuid]).exists()
    assert not Slice.objects.filter(namespace__in_array=[namespace + "x"]).exists()


def test_a_pair_with_a_null_matches_nothing_and_excludes_nothing(guide_cluster):
    from apps.common.lookups import PairIn

    slices = _slices(guide_cluster, [("team-a", "x"), ("team-a", "y")])
    assert not slices.filter(
        PairIn("namespace", "pod_name", [("team-a", None)])
    ).exists()
    assert (
        slices.exclude(PairIn("namespace", "pod_name", [("team-a", None)])).count() == 2
    )
    assert (
        slices.exclude(
            PairIn("namespace", "pod_name", [("team-a", None), ("team-a", "x")])
        )
        .get()
        .pod_name
        == "y"
    )
