"""The per-node config's format: reading, strict structure checks, canonical text."""

from __future__ import annotations

import json

import pytest

from apps.inventory.hami.nodeconfig import (
    FilterDevices,
    NodeConfigError,
    NodeEntry,
    parse_node_config,
    render_node_config,
)

UUID_A = "52E6B438-F2A74DE4-269E0D37-6513270E-A6A3A450"
UUID_B = "0C5C7FD0-128B2F33-D23F0824-892F902B-1818E811"

# The shape of the upstream manifest (ascend-device-node-configmap.yaml).
UPSTREAM = f"""\
nodes:
  - name: "npu-node-910b-01"
    hami-vnpu-core: true
    vDeviceCount: 8
    filterDevices:
      uuid: ["{UUID_A}"]
      index: [3]
  - name: npu-node-310p-01
    hami-vnpu-core: false
"""


def _errors(text: str) -> dict[str, str]:
    return {i.field: i.message for i in parse_node_config(text).report.errors}


def _warnings(text: str) -> dict[str, str]:
    return {i.field: i.message for i in parse_node_config(text).report.warnings}


def test_reads_the_upstream_shape():
    # given the manifest's YAML, when parsed, then every field is typed
    read = parse_node_config(UPSTREAM)
    assert read.ok, read.report.issues
    assert read.report.warnings == ()
    assert read.entries == (
        NodeEntry(
            "npu-node-910b-01", True, 8, FilterDevices((UUID_A,), (3,)), position=0
        ),
        NodeEntry("npu-node-310p-01", False, position=1),
    )
    assert read.entries[1].path == "nodes[1]"


def test_reads_json_and_a_whole_configmap_alike():
    # given the same content as JSON, and as a ConfigMap holding the YAML
    as_json = json.dumps(
        {
            "nodes": [
                {
                    "name": "npu-node-910b-01",
                    "hami-vnpu-core": True,
                    "vDeviceCount": 8,
                    "filterDevices": {"uuid": [UUID_A], "index": [3]},
                },
                {"name": "npu-node-310p-01", "hami-vnpu-core": False},
            ]
        }
    )
    configmap = json.dumps(
        {"kind": "ConfigMap", "data": {"node-config.yaml": UPSTREAM}}
    )
    # then both read as the YAML does
    expected = parse_node_config(UPSTREAM).entries
    assert parse_node_config(as_json).entries == expected
    assert parse_node_config(configmap).entries == expected


def test_yaml_1_1_scalars_as_the_plugin_reads_them():
    # given yes/no, as Go's yaml.v2 reads them
    read = parse_node_config("nodes:\n- {name: n1, hami-vnpu-core: yes}\n")
    # then yes is true
    assert read.ok
    assert read.entries[0].hami_vnpu_core is True


def test_round_trip_is_canonical():
    # given entries, when rendered and read back, then they are the same
    entries = parse_node_config(UPSTREAM).entries
    text = render_node_config(entries)
    assert parse_node_config(text).entries == entries
    assert render_node_config(parse_node_config(text).entries) == text
    # and keys come in a stable order, hami-vnpu-core always written
    first = json.loads(text)["nodes"][0]
    assert list(first) == ["name", "hami-vnpu-core", "vDeviceCount", "filterDevices"]
    assert list(first["filterDevices"]) == ["uuid", "index"]
    assert json.loads(text)["nodes"][1] == {
        "name": "npu-node-310p-01",
        "hami-vnpu-core": False,
    }
    assert render_node_config([]) == '{\n  "nodes": []\n}\n'


@pytest.mark.parametrize(
    ("text", "path", "says"),
    [
        # a misspelt key the plugin would drop silently, with a suggestion
        (
            "nodes:\n- {name: n1, hami-vnpu-core: true, filterDevice: {uuid: [x]}}\n",
            "nodes[0].filterDevice",
            "did you mean filterDevices?",
        ),
        (
            "nodes:\n- {name: n1, hami-vnpu-core: true, vDevCount: 4}\n",
            "nodes[0].vDevCount",
            "did you mean vDeviceCount?",
        ),
        (
            "nodes:\n- {name: n1, hami-vnpu-core: true, filterDevices: {uuids: [x]}}\n",
            "nodes[0].filterDevices.uuids",
            "did you mean uuid?",
        ),
        ("node:\n- {name: n1}\n", "node", "did you mean nodes?"),
        ("node:\n- {name: n1}\n", "nodes", "is required"),
        # wrong types: each one fails the whole file in the plugin
        (
            'nodes:\n- {name: n1, hami-vnpu-core: "true"}\n',
            "nodes[0].hami-vnpu-core",
            "must be true or false, not the string 'true'",
        ),
        (
            'nodes:\n- {name: n1, hami-vnpu-core: true, vDeviceCount: "8"}\n',
            "nodes[0].vDeviceCount",
            "must be an integer, not the string '8'",
        ),
        (
            "nodes:\n- {name: n1, hami-vnpu-core: true, vDeviceCount: 8.5}\n",
            "nodes[0].vDeviceCount",
            "must be an integer",
        ),
        (
            "nodes:\n- {name: n1, hami-vnpu-core: true, vDeviceCount: -2}\n",
            "nodes[0].vDeviceCount",
            "greater than 0",
        ),
        (
            "nodes:\n- {name: n1, hami-vnpu-core: true, filterDevices: [x]}\n",
            "nodes[0].filterDevices",
            "must be a mapping",
        ),
        (
            "nodes:\n- {name: n1, hami-vnpu-core: true, filterDevices: {uuid: x}}\n",
            "nodes[0].filterDevices.uuid",
            "must be a list",
        ),
        (
            "nodes:\n- {name: n1, hami-vnpu-core: true, filterDevices: {uuid: [7]}}\n",
            "nodes[0].filterDevices.uuid[0]",
            "must be a string",
        ),
        (
            "nodes:\n- {name: n1, hami-vnpu-core: true, filterDevices: {index: [a]}}\n",
            "nodes[0].filterDevices.index[0]",
            "must be an integer",
        ),
        (
            "nodes:\n- {name: n1, hami-vnpu-core: true, filterDevices: {index: [-1]}}\n",
            "nodes[0].filterDevices.index[0]",
            "card id from 0",
        ),
        (
            "nodes:\n- {name: n1, hami-vnpu-core: true, filterDevices: {index: [3000000000]}}\n",
            "nodes[0].filterDevices.index[0]",
            "card id from 0",
        ),
        ("nodes: {name: n1}\n", "nodes", "must be a list"),
        ("nodes:\n- just-a-name\n", "nodes[0]", "must be a mapping"),
        ("- {name: n1}\n", "", "must be a mapping with nodes"),
        ("", "nodes", "empty"),
        # names
        ("nodes:\n- {hami-vnpu-core: true}\n", "nodes[0].name", "is required"),
        ('nodes:\n- {name: "", hami-vnpu-core: true}\n', "nodes[0].name", "empty"),
        ("nodes:\n- {name: 12, hami-vnpu-core: true}\n", "nodes[0].name", "string"),
        (
            "nodes:\n- {name: NPU_Node, hami-vnpu-core: true}\n",
            "nodes[0].name",
            "no Kubernetes node name",
        ),
        # duplicates
        (
            "nodes:\n- {name: n1, hami-vnpu-core: true}\n- {name: n1, hami-vnpu-core: false}\n",
            "nodes[1].name",
            "already named by nodes[0]",
        ),
        (
            "nodes:\n- {name: n1, hami-vnpu-core: true, filterDevices: {uuid: [a, a]}}\n",
            "nodes[0].filterDevices.uuid[1]",
            "already listed at nodes[0].filterDevices.uuid[0]",
        ),
        (
            "nodes:\n- {name: n1, hami-vnpu-core: true, filterDevices: {index: [2, 2]}}\n",
            "nodes[0].filterDevices.index[1]",
            "already listed",
        ),
        (
            "nodes:\n- {name: n1, hami-vnpu-core: true, vDeviceCount: 2, vdevicecount: 3}\n",
            "nodes[0].vdevicecount",
            "same key to the plugin",
        ),
    ],
)
def test_each_structural_error_names_its_path(text, path, says):
    errors = _errors(text)
    assert path in errors, errors
    assert says in errors[path]


def test_collects_every_problem_at_once():
    # given a file with problems in three entries
    text = (
        "nodes:\n"
        "- {name: n1, hami-vnpu-core: true, filterDevice: {uuid: [x]}}\n"
        '- {name: n2, hami-vnpu-core: "no", vDeviceCount: "4"}\n'
        "- {name: n3, hami-vnpu-core: true, filterDevices: {index: [1, 1]}}\n"
    )
    # then each is reported
    assert set(_errors(text)) == {
        "nodes[0].filterDevice",
        "nodes[1].hami-vnpu-core",
        "nodes[1].vDeviceCount",
        "nodes[2].filterDevices.index[1]",
    }
    # and the entries keep only what is certain (a repeated index once)
    read = parse_node_config(text)
    assert [e.name for e in read.entries] == ["n1", "n2", "n3"]
    assert read.entries[1].v_device_count is None
    assert read.entries[2].filter_devices.indexes == (1,)


@pytest.mark.parametrize(
    ("text", "path", "says"),
    [
        (
            "nodes:\n- {name: n1}\n",
            "nodes[0].hami-vnpu-core",
            "reads hami-vnpu-core false",
        ),
        (
            "nodes:\n- {name: n1, hami-vnpu-core: true, vDeviceCount: 0}\n",
            "nodes[0].vDeviceCount",
            "leave the key out",
        ),
        (
            "nodes:\n- {name: n1, Hami-Vnpu-Core: true}\n",
            "nodes[0].Hami-Vnpu-Core",
            "ignoring case",
        ),
    ],
)
def test_warnings(text, path, says):
    read = parse_node_config(text)
    assert read.ok, read.report.errors
    assert says in _warnings(text)[path]


def test_an_empty_list_is_valid():
    for text in ("nodes: []\n", "nodes:\n"):
        read = parse_node_config(text)
        assert read.ok
        assert read.entries == ()


@pytest.mark.parametrize(
    "text",
    [
        "nodes: [\n  - {name: n1\n",
        "nodes: " + "[" * 5000 + "]" * 5000,
        "kind: ConfigMap\ndata: {other: x}\n",
    ],
)
def test_unreadable_text_raises_one_error(text):
    with pytest.raises(NodeConfigError):
        parse_node_config(text)
