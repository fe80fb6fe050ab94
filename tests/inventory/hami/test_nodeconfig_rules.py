"""The per-node config against what the portal knows: each rule fails and passes."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from apps.inventory.hami.deviceconfig import TemplateSpec, parse_device_config
from apps.inventory.hami.nodeconfig import parse_node_config
from apps.inventory.hami.nodeconfig_rules import (
    KnownChip,
    KnownNode,
    check_against_cluster,
)

P = [f"P{n:07d}-00000000-00000000-00000000-00000000" for n in range(4)]
B = [f"B{n:07d}-00000000-00000000-00000000-00000000" for n in range(8)]
V14 = (1, 4, 0)

# The guide's chip types: 310P3 21527 MB, smallest vir01 3072 MB (7 slots);
# 910B4 32768 MB, smallest vir05_1c_8g 8192 MB (4 slots).
CHIP_TYPES = {
    spec.common_word: spec
    for spec in parse_device_config(
        (Path(__file__).parents[2] / "fixtures" / "device-config-list.yaml").read_text()
    ).chip_types()
}


def _nodes(version=V14, *, core310=False):
    return [
        KnownNode(
            "npu-310p",
            tuple(KnownChip(u, i, "Ascend310P") for i, u in enumerate(P)),
            version,
            core310,
        ),
        KnownNode(
            "npu-910b",
            tuple(KnownChip(u, i, "Ascend910B4") for i, u in enumerate(B)),
            version,
        ),
    ]


def _check(body: str, nodes=None):
    read = parse_node_config("nodes:\n" + body)
    assert read.ok, read.report.errors
    report = check_against_cluster(
        read.entries, _nodes() if nodes is None else nodes, CHIP_TYPES
    )
    return (
        {i.field: i.message for i in report.errors},
        {i.field: i.message for i in report.warnings},
    )


def test_a_good_file_is_clean():
    errors, warnings = _check(
        "- {name: npu-310p, hami-vnpu-core: false, vDeviceCount: 7,"
        f" filterDevices: {{uuid: [{P[1]}]}}}}\n"
        "- {name: npu-910b, hami-vnpu-core: false, vDeviceCount: 2}\n"
    )
    assert errors == {}
    assert warnings == {}


def test_a_node_that_does_not_exist():
    errors, _ = _check("- {name: npu-310q, hami-vnpu-core: false}\n")
    assert "no node npu-310q" in errors["nodes[0].name"]
    assert "did you mean npu-310p?" in errors["nodes[0].name"]


def test_a_uuid_not_on_that_node():
    errors, _ = _check(
        "- name: npu-310p\n  hami-vnpu-core: false\n  filterDevices:\n"
        f"    uuid: [{P[0]}, {B[0]}, {P[2].lower()}, NOPE]\n"
    )
    assert "nodes[0].filterDevices.uuid[0]" not in errors
    assert "a chip of npu-910b" in errors["nodes[0].filterDevices.uuid[1]"]
    assert f"write {P[2]}" in errors["nodes[0].filterDevices.uuid[2]"]
    assert "no chip of this cluster" in errors["nodes[0].filterDevices.uuid[3]"]


def test_an_index_on_a_two_chip_card_names_both_chips():
    errors, _ = _check(
        "- {name: npu-310p, hami-vnpu-core: false, filterDevices: {index: [1]}}\n"
    )
    message = errors["nodes[0].filterDevices.index[0]"]
    assert "Atlas 300I Duo" in message
    assert f"#2 {P[2]}" in message
    assert f"#3 {P[3]}" in message


def test_an_index_on_a_one_chip_card_is_a_warning():
    errors, warnings = _check(
        "- {name: npu-910b, hami-vnpu-core: false, filterDevices: {index: [3]}}\n"
    )
    assert errors == {}
    assert f"#3 {B[3]}" in warnings["nodes[0].filterDevices.index[0]"]


@pytest.mark.parametrize(
    ("body", "says"),
    [
        # 21527 // 3072 = 7 slots on a 310P3
        ("- {name: npu-310p, hami-vnpu-core: false, vDeviceCount: 8}\n", "at most 7"),
        # 32768 // 8192 = 4 on a 910B4
        ("- {name: npu-910b, hami-vnpu-core: false, vDeviceCount: 5}\n", "at most 4"),
    ],
)
def test_a_slot_count_the_templates_cannot_fill(body, says):
    errors, _ = _check(body)
    assert says in errors["nodes[0].vDeviceCount"]


def test_a_slot_count_past_npu_smi_limit():
    tiny = dict(CHIP_TYPES)
    tiny["Ascend310P"] = replace(
        CHIP_TYPES["Ascend310P"], templates=(TemplateSpec("vir01", 1024),)
    )
    read = parse_node_config(
        "nodes:\n- {name: npu-310p, hami-vnpu-core: false, vDeviceCount: 9}\n"
    )
    report = check_against_cluster(read.entries, _nodes(), tiny)
    assert "npu-smi creates at most 8" in report.errors[0].message


def test_a_slot_count_in_hami_core_mode_only_warns():
    errors, warnings = _check(
        "- {name: npu-310p, hami-vnpu-core: true, vDeviceCount: 10}\n",
        _nodes(core310=True),
    )
    assert errors == {}
    assert "fill at most 7" in warnings["nodes[0].vDeviceCount"]


def test_plugin_versions():
    body = (
        "- {name: npu-310p, hami-vnpu-core: false, vDeviceCount: 7}\n"
        f"- {{name: npu-910b, hami-vnpu-core: false, filterDevices: {{uuid: [{B[0]}]}}}}\n"
    )
    # v1.2.0 reads no node config at all
    errors, _ = _check(body, _nodes((1, 2, 0)))
    assert "reads no node config" in errors["nodes[0]"]
    assert "reads no node config" in errors["nodes[1]"]
    # v1.3.0 applies the mode only: it parses vDeviceCount and ignores it,
    # and reads no filterDevices
    errors, _ = _check(body, _nodes((1, 3, 0)))
    assert set(errors) == {"nodes[0].vDeviceCount", "nodes[1].filterDevices"}
    assert "does not apply it (from v1.4.0)" in errors["nodes[0].vDeviceCount"]
    assert "reads no filterDevices" in errors["nodes[1].filterDevices"]
    # v1.4.0 reads it all
    assert _check(body, _nodes((1, 4, 0)))[0] == {}
    # unknown: a warning, not an error
    errors, warnings = _check(body, _nodes(None))
    assert errors == {}
    assert "version on npu-310p is unknown" in warnings["nodes[0]"]


def test_hami_core_on_plugin_1_3_warns_about_devcore():
    _, warnings = _check(
        "- {name: npu-310p, hami-vnpu-core: true}\n", _nodes((1, 3, 0), core310=True)
    )
    assert "devcore 100" in warnings["nodes[0].hami-vnpu-core"]


def test_switching_the_mode_warns_to_drain():
    _, warnings = _check("- {name: npu-310p, hami-vnpu-core: true}\n")
    assert "drain it first" in warnings["nodes[0].hami-vnpu-core"]


def test_filtering_every_chip_warns():
    uuids = ", ".join(P)
    _, warnings = _check(
        f"- {{name: npu-310p, hami-vnpu-core: false, filterDevices: {{uuid: [{uuids}]}}}}\n"
    )
    assert "every chip of npu-310p" in warnings["nodes[0].filterDevices"]
