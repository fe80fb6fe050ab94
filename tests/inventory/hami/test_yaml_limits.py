"""The device-config reader refuses texts that would exhaust the stack or memory.

A ConfigMap is edited by hand and read by the sync watcher: a document nested
5,000 levels deep used to raise RecursionError there (not a DeviceConfigError),
which killed the watcher. Each limit is reported as a DeviceConfigLimitError,
and texts within the limits still read as before.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from apps.inventory.hami._yaml import MAX_BYTES, MAX_DEPTH, MAX_NODES
from apps.inventory.hami.deviceconfig import (
    DeviceConfigError,
    DeviceConfigLimitError,
    parse_device_config,
    semantic_equal,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def _block_nesting(levels: int) -> str:
    return "other:\n" + "".join("  " * i + "k:\n" for i in range(1, levels))


def _laughs(levels: int) -> str:
    # each anchor holds ten aliases of the one before: 10**levels leaves
    text = "l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n"
    for i in range(1, levels + 1):
        text += f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 10) + "]\n"
    return text


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("vnpus: " + "[" * 5000 + "]" * 5000, f"deeper than {MAX_DEPTH}"),
        ("vnpus: " + "{a: " * 5000 + "1" + "}" * 5000, f"deeper than {MAX_DEPTH}"),
        (_block_nesting(MAX_DEPTH + 5), f"deeper than {MAX_DEPTH}"),
        (_laughs(9), f"more than {MAX_NODES} nodes"),
        ("a: &a [*a]\n", "contains it"),
        ("a: &a {b: {c: *a}}\n", "contains it"),
        (
            "a0: &a0 [1]\n"
            + "".join(f"a{i}: &a{i} [*a{i - 1}]\n" for i in range(1, 200)),
            f"deeper than {MAX_DEPTH}",
        ),
        ("vnpus: []\nx: '" + "y" * MAX_BYTES + "'\n", f"at most {MAX_BYTES}"),
    ],
    ids=[
        "flow-5000",
        "flow-map-5000",
        "block",
        "laughs",
        "cycle",
        "cycle-2",
        "alias-chain",
        "size",
    ],
)
def test_texts_beyond_the_limits_are_refused_with_a_reason(text, says):
    with pytest.raises(DeviceConfigLimitError) as raised:
        parse_device_config(text)
    assert says in raised.value.message
    # a limit error is a device-config error: every caller already handles it
    assert isinstance(raised.value, DeviceConfigError)
    with pytest.raises(DeviceConfigLimitError):
        semantic_equal(text, "vnpus: []\n")


def test_deep_text_names_the_line_where_it_got_too_deep():
    with pytest.raises(DeviceConfigLimitError) as raised:
        parse_device_config(_block_nesting(200))
    assert raised.value.line == MAX_DEPTH


def test_texts_within_the_limits_still_read():
    # a real device config, some harmless aliases, and nesting just inside the limit
    for name in ("device-config-list.yaml", "device-config-wrapper.yaml"):
        assert parse_device_config((FIXTURES / name).read_text()).raw_configs
    shared = "t: &t {name: vir01, memory: 3072}\nvnpus: []\nothers: [*t, *t, *t]\n"
    assert parse_device_config(shared).raw_configs == []
    assert parse_device_config(_block_nesting(MAX_DEPTH - 1)).raw_configs == []
    assert parse_device_config(_laughs(3)).raw_configs == []  # 10**3 leaves
