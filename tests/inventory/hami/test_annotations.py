"""Node and pod annotations: parsed leniently, rendered byte for byte."""

from __future__ import annotations

import json
import re
import string
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apps.inventory.hami import annotations as ann
from apps.inventory.hami.annotations import (
    AnnotationError,
    ContainerDevice,
    DeviceInfo,
    HandshakeState,
    encode_pod_devices,
    parse_handshake,
    parse_node_register,
    parse_pod_devices,
    pod_slices,
    registrations,
    render_handshake_reported,
    render_handshake_requesting,
    render_node_register,
)
from apps.inventory.hami.runtime_info import (
    RuntimeInfo,
    parse_runtime_info,
    render_runtime_info,
)

FIXTURES = Path(__file__).resolve().parents[3] / "tests" / "fixtures"


def _annotations(name: str) -> dict[str, str]:
    data = json.loads((FIXTURES / name).read_text())
    return dict(data["metadata"]["annotations"])


# --- keys -------------------------------------------------------------------


def test_keys():
    assert ann.register_key("Ascend310P") == "hami.io/node-register-Ascend310P"
    assert ann.handshake_key("Ascend310P") == "hami.io/node-handshake-Ascend310P"
    assert ann.allocated_key("Ascend310P") == "hami.io/Ascend310P-devices-allocated"
    assert ann.to_allocate_key("Ascend310P") == "hami.io/Ascend310P-devices-to-allocate"
    assert ann.runtime_key("Ascend310P") == "huawei.com/Ascend310P"
    assert ann.use_uuid_key("Ascend310P") == "hami.io/use-Ascend310P-uuid"
    assert ann.no_use_uuid_key("Ascend310P") == "hami.io/no-use-Ascend310P-uuid"
    assert (
        ann.allocated_common_word("hami.io/Ascend910B4-devices-allocated")
        == "Ascend910B4"
    )
    assert ann.allocated_common_word("hami.io/Ascend910B4-devices-to-allocate") is None
    assert ann.allocated_common_word("hami.io/-devices-allocated") is None
    pod = _annotations("pod-310p-vir01.json")
    for key in (
        ann.VGPU_NODE,
        ann.VGPU_TIME,
        ann.PREDICATE_TIME,
        ann.BIND_PHASE,
        ann.BIND_TIME,
    ):
        assert key in pod
    assert pod[ann.BIND_PHASE] == ann.BindPhase.SUCCESS
    assert ann.HAMI_VNPU_CORE in _annotations("node-310p3.json")


# --- node registration ----------------------------------------------------------


def test_310p3_node_registration():
    annotations = _annotations("node-310p3.json")
    devices = registrations(annotations)["Ascend310P"]
    assert [d.index for d in devices] == [0, 1, 2, 3]  # index 0 is omitted in JSON
    first = devices[0]
    assert first == DeviceInfo(
        id="52E6B438-F2A74DE4-269E0D37-6513270E-A6A3A450",
        count=7,
        devmem=21527,
        devcore=8,
        type="Ascend310P",
        health=True,
    )
    assert first.network_id is None
    assert render_node_register(devices) == annotations[ann.register_key("Ascend310P")]


def test_910b4_node_registration():
    annotations = _annotations("node-910b4.json")
    (word,) = registrations(annotations)
    devices = registrations(annotations)[word]
    assert word == "Ascend910B4"
    assert len(devices) == 8
    assert [d.index for d in devices if not d.health] == [5]  # no "health" key
    assert [d.network_id for d in devices] == [0, 0, 0, 0, 1, 1, 1, 1]
    assert render_node_register(devices) == annotations[ann.register_key(word)]


def test_capitalised_keys_parse_as_go_does():
    value = (
        '[{"ID":"GPU-0","Index":2,"Count":7,"Devmem":100,"DevCore":8,'
        '"Type":"Ascend310P","Numa":1,"Mode":"x","Health":true,'
        '"CustomInfo":{"networkID":3},"migProfiles":[1]}]'
    )
    (device,) = parse_node_register(value)
    assert device == DeviceInfo(
        "GPU-0", 2, 7, 100, 8, "Ascend310P", 1, "x", True, {"networkID": 3}
    )
    assert device.network_id == 3
    assert parse_node_register('[{"id":"a","ID":"b"}]')[0].id == "b"  # last wins
    assert parse_node_register("null") == []
    assert parse_node_register('[{"id":"a","count":null}]')[0].count == 0


@pytest.mark.parametrize(
    "value",
    [
        "",
        "not json",
        "{}",
        "[1]",
        "[null]",
        '[{"count":"7"}]',
        '[{"count":7.0}]',
        '[{"count":true}]',
        '[{"health":"true"}]',
        '[{"id":5}]',
        '[{"custominfo":[1]}]',
        '[{"count":NaN}]',
    ],
)
def test_garbage_registrations_are_refused(value):
    with pytest.raises(AnnotationError):
        parse_node_register(value)
    with pytest.raises(AnnotationError, match=re.escape("hami.io/node-register-X")):
        registrations({"hami.io/node-register-X": value})


@pytest.mark.parametrize(
    ("custominfo", "expected"),
    [
        ({"NetworkID": 1.0}, 1),
        ({"NetworkID": True}, None),
        ({"NetworkID": "1"}, None),
        ({}, None),
    ],
)
def test_network_id(custominfo, expected):
    assert DeviceInfo("a", custominfo=custominfo).network_id == expected


def test_render_follows_go_json():
    device = DeviceInfo(
        "<a&b>", index=1, custominfo={"b": 1.5, "a": {"z": 1, "y": 2.0}, "c": 1e21}
    )
    assert render_node_register([device]) == (
        '[{"id":"\\u003ca\\u0026b\\u003e","index":1,'
        '"custominfo":{"a":{"y":2,"z":1},"b":1.5,"c":1e+21}}]'
    )
    assert render_node_register([]) == "[]"
    assert render_node_register([DeviceInfo("é\u2028")]) == '[{"id":"é\\u2028"}]'


def test_registrations_ignore_other_keys():
    annotations = {
        "hami.io/node-register-A": '[{"id":"x"}]',
        "hami.io/node-register-": "garbage",
        "hami.io/node-handshake-A": "Reported_2026.11.30 08:15:02",
        "other": "1",
    }
    assert registrations(annotations) == {"A": [DeviceInfo("x")]}


# --- handshake ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "state", "moment"),
    [
        (
            "Reported_2026.11.30 08:15:02",
            HandshakeState.REPORTED,
            datetime(2026, 11, 30, 8, 15, 2),
        ),
        (
            "Requesting_2026-11-30 08:15:02",
            "Requesting",
            datetime(2026, 11, 30, 8, 15, 2),
        ),
        ("Deleted_2026.11.30 08:15:02", "Deleted", datetime(2026, 11, 30, 8, 15, 2)),
        ("Reported_yesterday", "Reported", None),
        ("Other_2026.11.30 08:15:02", "Other", datetime(2026, 11, 30, 8, 15, 2)),
        ("garbage", "garbage", None),
    ],
)
def test_parse_handshake(value, state, moment):
    parsed_state, parsed_moment = parse_handshake(value)
    assert parsed_state == state
    assert parsed_moment == (moment.replace(tzinfo=UTC) if moment else None)


def test_render_handshake():
    value = _annotations("node-310p3.json")[ann.handshake_key("Ascend310P")]
    assert render_handshake_reported(datetime(2026, 11, 30, 8, 15, 2)) == value
    assert parse_handshake(
        render_handshake_reported(parse_handshake(value)[1])
    ) == parse_handshake(value)
    east = timezone(timedelta(hours=8))
    assert render_handshake_requesting(
        datetime(2026, 11, 30, 16, 15, 2, tzinfo=east)
    ) == ("Requesting_2026-11-30 08:15:02")


# --- pod devices ----------------------------------------------------------------


@pytest.mark.parametrize("name", ["pod-310p-vir01.json", "pod-910b4-vir05.json"])
def test_pod_fixture_devices(name):
    annotations = _annotations(name)
    ((word, device),) = pod_slices(annotations)
    allocated = annotations[ann.allocated_key(word)]
    assert parse_pod_devices(allocated) == [[device]]
    assert encode_pod_devices([[device]]) == allocated
    assert parse_pod_devices(annotations[ann.to_allocate_key(word)]) == [[]]
    assert encode_pod_devices([[]]) == ";"
    assert device.usedmem == (3072 if word == "Ascend310P" else 8192)
    assert device.usedcores == 0


A = ContainerDevice("A", "Ascend310P", 3072, 0)
B = ContainerDevice("B", "Ascend310P", 6144, 0)


@pytest.mark.parametrize(
    ("value", "containers"),
    [
        ("", []),
        (";", [[]]),
        (";;", [[], []]),
        ("A,Ascend310P,3072,0:;", [[A]]),
        ("A,Ascend310P,3072,0:", [[A]]),  # missing final ";"
        ("A,Ascend310P,3072,0", [[A]]),
        ("A,Ascend310P,3072,0:B,Ascend310P,6144,0:;", [[A, B]]),
        # an init container first, then two containers, the last without devices
        ("A,Ascend310P,3072,0:;B,Ascend310P,6144,0:;;", [[A], [B], []]),
        (";B,Ascend310P,6144,0:;", [[], [B]]),
        ("A,Ascend310P,3072,0,extra:;", [[A]]),  # Go ignores further fields
    ],
)
def test_pod_device_encoding(value, containers):
    assert parse_pod_devices(value) == containers
    if not value or (value.endswith(";") and ",extra" not in value):
        assert encode_pod_devices(containers) == value


def test_a_signed_number_reads_as_go_reads_it():
    assert parse_pod_devices("A,Ascend310P,+3072,-0:;") == parse_pod_devices(
        "A,Ascend310P,3072,0:;"
    )


@pytest.mark.parametrize(
    "value",
    [
        "garbage:;",
        "A,T,1:;",
        "A,T,x,0:;",
        "A,T,1,0.5:;",
        "A,T,,0:;",
        # as Go's strconv.Atoi: ASCII digits after one optional sign, nothing else
        "A,T,+,0:;",
        "A,T,12\n,0:;",
        "A,T,\u0661\u0662,0:;",  # Arabic-Indic digits: int() reads them, Go does not
        "A,T,\u00b2,0:;",
        "A,T,+-1,0:;",
    ],
)
def test_malformed_pod_devices(value):
    with pytest.raises(AnnotationError):
        parse_pod_devices(value)
    with pytest.raises(AnnotationError, match=re.escape("hami.io/X-devices-allocated")):
        pod_slices({"hami.io/X-devices-allocated": value})


@pytest.mark.parametrize(
    ("value", "field", "text"),
    [("A,T,x,0:;", "memory", "x"), ("A,T,1,0.5:;", "cores", "0.5")],
)
def test_a_bad_number_is_named_with_its_entry_and_field(value, field, text):
    entry = value.split(":")[0]
    with pytest.raises(AnnotationError) as raised:
        parse_pod_devices(value)
    assert (
        str(raised.value)
        == f"device entry {entry!r} {field}: {text!r} is not an integer"
    )


def test_encode_refuses_separators():
    with pytest.raises(AnnotationError):
        encode_pod_devices([[ContainerDevice("a:b", "T", 1, 0)]])


def test_pod_slices_filter():
    annotations = {
        "hami.io/Ascend310P-devices-allocated": "A,Ascend310P,3072,0:;",
        "hami.io/vgpu-devices-allocated": "GPU-1,NVIDIA,1000,10:;",
        "hami.io/Ascend310P-devices-to-allocate": "A,Ascend310P,3072,0:;",
    }
    assert pod_slices(annotations) == [
        ("Ascend310P", A),
        ("vgpu", ContainerDevice("GPU-1", "NVIDIA", 1000, 10)),
    ]
    assert pod_slices(annotations, common_words={"Ascend310P"}) == [("Ascend310P", A)]


# --- runtime info ---------------------------------------------------------------


@pytest.mark.parametrize("name", ["pod-310p-vir01.json", "pod-910b4-vir05.json"])
def test_runtime_info_fixture(name):
    annotations = _annotations(name)
    ((word, device),) = pod_slices(annotations)
    value = annotations[ann.runtime_key(word)]
    (info,) = parse_runtime_info(value)
    assert info.uuid == device.uuid
    assert info.temp in ("vir01", "vir05_1c_8g")
    assert info.memory == device.usedmem
    assert render_runtime_info([info]) == value


def test_runtime_info_variants():
    assert parse_runtime_info('[{"uuid":"a","TEMP":"vir02"}]') == [
        RuntimeInfo("a", "vir02")
    ]
    assert render_runtime_info([RuntimeInfo("a", memory=6144, core=50)]) == (
        '[{"UUID":"a","memory":6144,"core":50}]'
    )
    assert render_runtime_info([RuntimeInfo("a")]) == '[{"UUID":"a"}]'
    for garbage in ("x", '{"UUID":"a"}', '[{"memory":"1"}]'):
        with pytest.raises(AnnotationError):
            parse_runtime_info(garbage)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        # as HAMi writes it (read without folding the keys)
        (
            '[{"UUID":"a","temp":"vir01","memory":3072}]',
            RuntimeInfo("a", "vir01", 3072),
        ),
        ('[{"UUID":"a","temp":null,"memory":null,"core":null}]', RuntimeInfo("a")),
        # anything else as Go reads it: keys matched case-insensitively, the last wins
        ('[{"UUID":"a","uuid":"b"}]', RuntimeInfo("b")),
        ('[{"uuid":"a","Memory":5}]', RuntimeInfo("a", memory=5)),
        ('[{"UUID":"a","other":[1]}]', RuntimeInfo("a")),
    ],
)
def test_runtime_info_entries_read_as_go_reads_them(value, expected):
    assert parse_runtime_info(value) == [expected]


@pytest.mark.parametrize(
    "value",
    [
        '[{"UUID":"a","memory":true}]',  # a bool is not an int, in Go either
        '[{"UUID":"a","core":1.5}]',
        '[{"UUID":7}]',
        '[{"UUID":"a","temp":["vir01"]}]',
        '["a"]',
    ],
)
def test_runtime_info_entries_of_the_wrong_types_are_refused(value):
    with pytest.raises(AnnotationError, match=r"runtime info\[0\]"):
        parse_runtime_info(value)


# --- properties -------------------------------------------------------------------

_TEXT = st.text(max_size=20)
_INT32 = st.integers(-(2**31), 2**31 - 1)
_CUSTOM = st.dictionaries(
    _TEXT, st.one_of(st.integers(), _TEXT, st.booleans(), st.none()), max_size=3
)
_DEVICE = st.builds(
    DeviceInfo,
    id=_TEXT,
    index=_INT32,
    count=_INT32,
    devmem=_INT32,
    devcore=_INT32,
    type=_TEXT,
    numa=_INT32,
    mode=_TEXT,
    health=st.booleans(),
    custominfo=_CUSTOM,
)
_FIELD = st.text(
    st.characters(exclude_characters=",:;", exclude_categories=["Cs"]), max_size=12
)
_CONTAINER_DEVICE = st.builds(
    ContainerDevice, uuid=_FIELD, type=_FIELD, usedmem=_INT32, usedcores=_INT32
)
_RUNTIME = st.builds(
    RuntimeInfo, uuid=_TEXT, temp=_TEXT, memory=st.integers(), core=_INT32
)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(devices=st.lists(_DEVICE, max_size=4))
def test_node_register_round_trip(devices):
    rendered = render_node_register(devices)
    assert parse_node_register(rendered) == devices
    assert json.loads(rendered) == json.loads(
        json.dumps([_go_dict(d) for d in devices])
    )


def _go_dict(device: DeviceInfo) -> dict[str, object]:
    fields = {
        "id": device.id,
        "index": device.index,
        "count": device.count,
        "devmem": device.devmem,
        "devcore": device.devcore,
        "type": device.type,
        "numa": device.numa,
        "mode": device.mode,
        "health": device.health,
        "custominfo": dict(device.custominfo),
    }
    return {key: value for key, value in fields.items() if value}


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(
    floats=st.dictionaries(
        st.text(string.ascii_letters, max_size=3),
        st.floats(allow_nan=False, allow_infinity=False),
    )
)
def test_float_custominfo_renders_stably(floats):
    once = render_node_register([DeviceInfo("a", custominfo=floats)])
    assert render_node_register(parse_node_register(once)) == once
    # Go prints integral floats without a fraction; the values stay the same
    assert json.loads(once)[0].get("custominfo", {}) == floats


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(containers=st.lists(st.lists(_CONTAINER_DEVICE, max_size=3), max_size=4))
def test_pod_devices_round_trip(containers):
    encoded = encode_pod_devices(containers)
    assert parse_pod_devices(encoded) == containers
    assert encoded.count(";") == len(containers)


@settings(max_examples=200, deadline=None)
@given(items=st.lists(_RUNTIME, max_size=4))
def test_runtime_info_round_trip(items):
    assert parse_runtime_info(render_runtime_info(items)) == items


def test_node_locks_reads_hamis_lock_and_volcanos_per_registered_chip_type():
    registered = render_node_register([DeviceInfo("a", type="Ascend310P")])
    annotations = {
        "hami.io/node-register-Ascend310P": registered,
        # Volcano: the common word is the key, the value an RFC 3339 time
        "Ascend310P": "2026-12-05T06:51:41Z",
        # HAMi: time, namespace, pod
        ann.NODE_LOCK: "2026-12-05T06:50:00+08:00,default,p",
        # a chip type the node does not register is not Volcano's lock
        "Ascend910B4": "2026-12-05T06:51:41Z",
        "unrelated": "2026-12-05T06:51:41Z",
    }
    assert ann.node_locks(annotations) == {
        "Ascend310P": datetime(2026, 12, 5, 6, 51, 41, tzinfo=UTC),
        ann.NODE_LOCK: datetime(2026, 12, 4, 22, 50, tzinfo=UTC),
    }


@pytest.mark.parametrize("value", ["", "true", "locked,default,p", "06:51"])
def test_node_locks_leaves_out_values_that_are_not_a_time(value):
    annotations = {
        "hami.io/node-register-Ascend310P": "[]",
        "Ascend310P": value,
        ann.NODE_LOCK: value,
    }
    assert ann.node_locks(annotations) == {}
