"""The node config's what-if on built data (pure): stranded slices, requests, room.

The chip types are the guide's: Ascend910B4 (32768 MB, 20 AICore, 7 AICPU;
vir05_1c_8g 8192 MB/5/1 and vir10_3c_16g 16384 MB/10/3, so 4 slots) and
Ascend310P (21527 MB; vir01/vir02/vir04, 7 slots).
"""

from __future__ import annotations

from apps.inventory.hami.deviceconfig import parse_device_config
from apps.inventory.hami.nodeconfig import FilterDevices, NodeEntry
from apps.inventory.nodeconfig import whatif
from apps.inventory.room import ChipLoad
from simcluster import guide_data

SPECS = {
    s.common_word: s
    for s in parse_device_config(guide_data.DEVICE_CONFIG_YAML).chip_types()
}
B4, P3 = "Ascend910B4", "Ascend310P"
V14, V13 = (1, 4, 0), (1, 3, 0)


def _chip(node, index, word=B4, vir05=0, healthy=True, aicore=20):
    """A chip holding ``vir05`` slices of vir05_1c_8g."""
    memory = 32768 if word == B4 else 21527
    load = ChipLoad(
        common_word=word,
        memory=memory,
        memory_used=8192 * vir05,
        slots=4 if word == B4 else 7,
        slots_used=vir05,
        aicore=aicore,
        aicore_used=5 * vir05,
        aicpu=7,
        aicpu_used=vir05,
        eligible=healthy,
    )
    return whatif.ChipFact(uuid=f"{node}-{index}", index=index, node=node, load=load)


def _slices(chip, n):
    return [
        whatif.SliceFact("team", f"pod-{chip.uuid}-{i}", chip.uuid, "vir05_1c_8g", 8192)
        for i in range(n)
    ]


def _cluster(demands=(), core_node_slices=1):
    """Node b (template, v1.4.0): chip 0 with 3 slices, chip 1 full, chip 2
    unhealthy. Node h (hami-core, v1.4.0): chip 0 empty, chip 1 with slices."""
    b0, b1, b2 = (
        _chip("b", 0, vir05=3),
        _chip("b", 1, vir05=4),
        _chip("b", 2, healthy=False),
    )
    h0, h1 = (
        _chip("h", 0, aicore=100),
        _chip("h", 1, vir05=core_node_slices, aicore=100),
    )
    return whatif.WhatIfInput(
        nodes=(
            whatif.NodeFact("b", hami_vnpu_core=False, plugin_version=V14),
            whatif.NodeFact("h", hami_vnpu_core=True, plugin_version=V14),
        ),
        chips=(b0, b1, b2, h0, h1),
        slices=(*_slices(b0, 3), *_slices(b1, 4), *_slices(h1, core_node_slices)),
        demands=tuple(demands),
        chip_types=SPECS,
    )


def _node(answer, name):
    return next(row for row in answer["nodes"] if row["name"] == name)


def _room(row, word=B4):
    return next(r for r in row["room"] if r["common_word"] == word)


def test_no_change_changes_nothing():
    data = _cluster()
    entries = [NodeEntry("b"), NodeEntry("h", hami_vnpu_core=True)]
    answer = whatif.node_config_what_if(data, entries)
    assert all(not row["changed"] for row in answer["nodes"])
    assert all(row["stranded_slices"] == [] for row in answer["nodes"])
    assert answer["unblocked"] == answer["blocked"] == []
    room = _room(_node(answer, "b"))
    assert room["before"] == room["after"]


def test_a_filtered_chip_strands_its_slices_and_leaves_the_room():
    data = _cluster()
    entry = NodeEntry("b", filter_devices=FilterDevices(uuids=("b-0",)))
    row = _node(whatif.node_config_what_if(data, [entry, NodeEntry("h", True)]), "b")
    assert row["changes"] == ["1 chip filtered"]
    stranded = row["stranded_slices"]
    assert sorted(s["pod"] for s in stranded) == [f"pod-b-0-{i}" for i in range(3)]
    assert all(s["chip_index"] == 0 for s in stranded)
    assert stranded[0]["reasons"] == [
        "filterDevices.uuid names b-0: the chip leaves the registration while the "
        "slice runs on it"
    ]
    room = _room(row)
    # the unhealthy chip counts as a chip but not in the room
    assert (room["before"]["chips"], room["after"]["chips"]) == (3, 2)
    assert (room["before"]["slots"], room["after"]["slots"]) == (8, 4)
    assert (room["before"]["slots_free"], room["after"]["slots_free"]) == (1, 0)
    assert room["before"]["memory_free"] == 8192
    assert room["after"]["memory_free"] == 0
    assert room["before"]["largest_template"] == "vir05_1c_8g"
    assert room["after"]["largest_template"] is None


def test_a_slot_count_below_the_slices_running_strands_them():
    data = _cluster()
    entry = NodeEntry("b", v_device_count=2)
    row = _node(whatif.node_config_what_if(data, [entry, NodeEntry("h", True)]), "b")
    assert row["changes"] == ["vDeviceCount default -> 2"]
    reasons = {s["chip_uuid"]: s["reasons"] for s in row["stranded_slices"]}
    assert set(reasons) == {"b-0", "b-1"}
    assert reasons["b-0"] == ["3 slices run on chip #0, which would have 2 slots"]
    room = _room(row)
    assert room["after"]["slots"] == 4  # two eligible chips of 2
    assert room["after"]["slots_free"] == 0


def test_a_mode_switch_under_slices_says_drain_first_and_unblocks_a_request():
    # a vir10 (16384 MB, 10 AICore) fits no template node now: b's chips are
    # too full, and h is hami-core (the portal's pods carry no vnpu-mode)
    vir10 = whatif.DemandFact("7", "request 7", B4, 16384)
    data = _cluster(demands=[vir10])
    answer = whatif.node_config_what_if(data, [NodeEntry("b"), NodeEntry("h", False)])
    row = _node(answer, "h")
    assert (row["mode_before"], row["mode_after"]) == ("hami-core", "template")
    assert row["drain_first"] is True
    assert answer["drain_first"] == ["h"]
    (stranded,) = row["stranded_slices"]
    assert stranded["chip_uuid"] == "h-1"
    assert (
        "switches from hami-core to template slicing under it: drain first"
        in (stranded["reasons"][0])
    )
    # template mode on v1.4.0 registers the chip type's AICore, not 100
    room = _room(row)
    assert room["before"]["aicore"] == 200
    assert room["after"]["aicore"] == 40
    (unblocked,) = answer["unblocked"]
    assert unblocked["id"] == "7"
    assert unblocked["template"] == "vir10_3c_16g"
    assert (unblocked["nodes_before"], unblocked["nodes_after"]) == ([], ["h"])
    assert answer["blocked"] == []


def test_an_empty_node_switches_without_drain_and_filters_block_a_whole_card():
    whole = whatif.DemandFact("9", "request 9", B4, None)
    data = _cluster(demands=[whole], core_node_slices=0)
    # h goes to template mode: its empty chips take a whole card
    opened = whatif.node_config_what_if(data, [NodeEntry("b"), NodeEntry("h", False)])
    assert _node(opened, "h")["drain_first"] is False
    assert [r["id"] for r in opened["unblocked"]] == ["9"]
    # and filtering both of them as well leaves it nowhere to go
    both = FilterDevices(uuids=("h-0", "h-1"))
    closed = whatif.node_config_what_if(
        data, [NodeEntry("b"), NodeEntry("h", False, filter_devices=both)]
    )
    assert closed["unblocked"] == []
    # a chip on a hami-core node counted for nothing before: nothing is blocked
    assert closed["blocked"] == []


def test_a_filter_blocks_a_request_that_fits_only_on_that_chip():
    vir05 = whatif.DemandFact("3", "request 3", B4, 8000)
    data = _cluster(demands=[vir05])
    entry = NodeEntry("b", filter_devices=FilterDevices(uuids=("b-0",)))
    answer = whatif.node_config_what_if(data, [entry, NodeEntry("h", True)])
    (blocked,) = answer["blocked"]
    assert blocked["template"] == "vir05_1c_8g"
    assert (blocked["nodes_before"], blocked["nodes_after"]) == (["b"], [])


def test_what_an_older_plugin_ignores_and_an_index_on_a_duo_card():
    p = [_chip("p", i, word=P3, aicore=8) for i in range(4)]
    data = whatif.WhatIfInput(
        nodes=(whatif.NodeFact("p", False, V13),), chips=tuple(p), chip_types=SPECS
    )
    entry = NodeEntry("p", v_device_count=3, filter_devices=FilterDevices(indexes=(1,)))
    row = _node(whatif.node_config_what_if(data, [entry]), "p")
    assert row["changes"] == []
    assert row["ignored"] == [
        "vDeviceCount default -> 3: plugin v1.3.0 does not apply it",
        "2 chips filtered: plugin v1.3.0 does not apply filterDevices",
    ]
    # on v1.4.0 card 1 of a 310P3 Duo node takes chips 2 and 3
    newer = whatif.WhatIfInput(
        nodes=(whatif.NodeFact("p", False, V14),), chips=tuple(p), chip_types=SPECS
    )
    room = _room(_node(whatif.node_config_what_if(newer, [entry]), "p"), P3)
    assert (room["before"]["chips"], room["after"]["chips"]) == (4, 2)
    assert room["after"]["slots"] == 6


def test_an_entry_for_an_unknown_node_is_named():
    answer = whatif.node_config_what_if(_cluster(), [NodeEntry("nope")])
    assert answer["unknown_nodes"] == ["nope"]
