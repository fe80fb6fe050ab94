"""A chip's state: the Python rules and the SQL expression agree, the chip
filter answers by it, and the live chip rows carry it (and follow it when an
isolation is proved)."""

from __future__ import annotations

import itertools
import json

import pytest

from apps.inventory.chipstate import chip_state, chip_state_expression
from apps.inventory.choices import ChipIsolation, ChipState
from apps.inventory.models import Chip, Cluster, Node
from apps.inventory.selectors import chip_usage
from apps.live.events import CHIP_COLUMNS, Event

pytestmark = pytest.mark.django_db

#: Every combination of the facts the rules read.
FACTS = list(
    itertools.product(
        [c.value for c in ChipIsolation],  # isolation
        [None, 7],  # active_drain
        [0, 2],  # slots_used
        [False, True],  # cordoned
        [True, False],  # healthy
    )
)


@pytest.fixture
def every_kind(guide_cluster: Cluster) -> list[Chip]:
    """One chip per combination of the facts, on two nodes."""
    nodes = [
        Node.objects.create(cluster=guide_cluster, name=f"state-node-{n}")
        for n in range(2)
    ]
    return [
        Chip.objects.create(
            cluster=guide_cluster,
            node=nodes[i % 2],
            common_word="Ascend910B4",
            uuid=f"state-chip-{i}",
            index=i // 2,
            slots=4,
            memory=32768,
            isolation=isolation,
            active_drain=drain,
            slots_used=slots_used,
            cordoned=cordoned,
            healthy=healthy,
        )
        for i, (isolation, drain, slots_used, cordoned, healthy) in enumerate(FACTS)
    ]


def test_the_sql_expression_names_the_state_the_python_rules_name(every_kind):
    by_sql = dict(
        Chip.objects.filter(pk__in=[c.pk for c in every_kind])
        .annotate(state=chip_state_expression())
        .values_list("pk", "state")
    )
    expected = {c.pk: chip_state(c).value for c in every_kind}
    assert by_sql == expected
    # every state is reached, so no rule is left untried
    assert set(expected.values()) == {s.value for s in ChipState}


def test_the_chip_filter_answers_by_state(viewer_client, every_kind, guide_cluster):
    def ids(query: str) -> set[int]:
        answer = viewer_client.get(
            f"/api/chips/?cluster={guide_cluster.pk}&page_size=500&{query}"
        )
        assert answer.status_code == 200, answer.content
        return {c["id"] for c in answer.json()["results"]}

    wanted = {ChipState.DRAINING, ChipState.ISOLATED}
    assert ids("state=draining&state=isolated") == {
        c.pk for c in every_kind if chip_state(c) in wanted
    }
    answer = viewer_client.get(f"/api/chips/?cluster={guide_cluster.pk}&state=healthy")
    assert all(c["state"] == "healthy" for c in answer.json()["results"])
    assert answer.json()["count"] == sum(
        1 for c in every_kind if chip_state(c) == ChipState.HEALTHY
    )


def test_an_unknown_state_is_a_400_naming_the_filter(viewer_client, guide_cluster):
    answer = viewer_client.get(f"/api/chips/?cluster={guide_cluster.pk}&state=broken")
    assert answer.status_code == 400
    assert "state" in answer.json()["errors"]


def test_the_live_chip_rows_carry_the_state(every_kind, guide_cluster):
    usage = chip_usage(guide_cluster)
    column = list(CHIP_COLUMNS).index("state")
    shown = {row[0]: row[column] for row in usage["rows"]}
    assert shown == {c.pk: chip_state(c).value for c in every_kind}


def test_a_proved_isolation_is_broadcast_with_its_new_state(
    guide_cluster, every_kind, monkeypatch
):
    from apps.inventory.nodeconfig import proof
    from apps.inventory.services import cordon

    sent: list[tuple[str, dict]] = []
    monkeypatch.setattr(
        cordon,
        "broadcast_on_commit",
        lambda group, event, payload: sent.append(
            (event.value, json.loads(json.dumps(payload)))
        ),
    )
    chip = next(c for c in every_kind if c.isolation == ChipIsolation.ISOLATING)
    proof._record(chip, proof.Verdict(ChipIsolation.ISOLATED, "proved"))
    column = list(CHIP_COLUMNS).index("state")
    assert [(e, [(r[0], r[column]) for r in p["rows"]]) for e, p in sent] == [
        (Event.CHIPS.value, [(chip.pk, "isolated")])
    ]
