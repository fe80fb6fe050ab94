"""The node config's what-if weighs the portal's pending requests (registered by scheduling)."""

from __future__ import annotations

import pytest

from apps.inventory.nodeconfig.whatif_data import (
    nodeconfig_draft_read,
    nodeconfig_what_if,
)

pytestmark = pytest.mark.django_db


def test_a_filter_blocks_the_pending_request_that_only_that_chip_fits(
    world, operator, no_auto_pass
):
    (chip,) = world.chips("Ascend310P", 1, node="n1")
    waiting = world.request(operator, memory=5000)  # a vir02
    assert waiting.state == "pending"
    filtered = nodeconfig_draft_read(
        nodes=[
            {
                "name": "n1",
                "hami-vnpu-core": False,
                "filterDevices": {"uuid": [chip.uuid]},
            }
        ]
    )
    answer = nodeconfig_what_if(world.cluster, filtered)
    (blocked,) = answer["blocked"]
    assert blocked["id"] == str(waiting.pk)
    assert blocked["template"] == "vir02"
    assert (blocked["nodes_before"], blocked["nodes_after"]) == (["n1"], [])
    # the same node without a filter blocks nothing
    kept = nodeconfig_draft_read(nodes=[{"name": "n1", "hami-vnpu-core": False}])
    assert nodeconfig_what_if(world.cluster, kept)["blocked"] == []
