"""The device config read and written as HAMi reads it: Go's yaml.v2, YAML 1.1.

HAMi, the Ascend device plugin and Volcano parse ``device-config.yaml`` with
gopkg.in/yaml.v2. The portal must show what they parse, and quote on write
whatever YAML 1.1 would read as something other than the string it is.
The differential tests run the real yaml.v2 (``yamlv2.py`` builds it).
"""

from __future__ import annotations

import math
import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from apps.inventory.hami._yamlv2 import Kind, resolve_plain
from apps.inventory.hami.catalog import RUNTIME_TEMPLATES
from apps.inventory.hami.deviceconfig import (
    ChipTypeSpec,
    Shape,
    TemplateSpec,
    config_to_raw,
    parse_device_config,
    render_device_config,
)
from apps.inventory.hami.validation import validate_configs
from tests.inventory.hami.yamlv2 import yaml_v2_parse

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"

# Plain scalars whose YAML 1.1 (yaml.v2) reading differs from YAML 1.2 or
# from the string they look like.
TRICKY = [
    *("y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO"),
    *("on", "On", "ON", "off", "Off", "OFF", "true", "True", "TRUE", "false"),
    *("yEs", "oN", "t", "f", "o", "nO", "False", "FALSE", "tRUE"),
    *("~", "null", "Null", "NULL", "nULL", ".nan", ".NaN", ".inf", "-.Inf", "+.INF"),
    *("0", "-0", "+12", "0755", "08", "09.5", "0x1F", "0X1f", "-0x10", "0o17"),
    *("0O17", "0b101", "-0b101", "0B11", "0b2", "0x", "1_000", "1__0", "_1", "1_"),
    *("1e3", "1E3", "1.", "1.5", "+.5", "-.5", ".5", ".5e3", ".5_5", "._5"),
    *("1e400", "-1e400", "1e-400", "9223372036854775807", "9223372036854775808"),
    *("18446744073709551615", "18446744073709551616", "-9223372036854775809"),
    *("2001-12-14", "2001-12-14t21:59:43.10-05:00", "2001-1-2", "1999-13-40"),
    *("12:30", "1:20:30", "190:20:30.15", "0:1", "-1:30", "1e", "e3", ".e3"),
    *("vir01", "Ascend310P", "310P3", "910B4", "1.2.3", "0.5.0", "inf", "nan"),
]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("yes", (Kind.BOOL, True)),
        ("Y", (Kind.BOOL, True)),
        ("off", (Kind.BOOL, False)),
        ("yEs", (Kind.STR, "yEs")),
        ("~", (Kind.NULL, None)),
        ("0755", (Kind.INT, 493)),
        ("0o17", (Kind.INT, 15)),
        ("0x1F", (Kind.INT, 31)),
        ("-0b101", (Kind.INT, -5)),
        ("1_000", (Kind.INT, 1000)),
        ("08", (Kind.FLOAT, 8.0)),
        ("1e3", (Kind.FLOAT, 1000.0)),
        (".5", (Kind.FLOAT, 0.5)),
        ("1e400", (Kind.STR, "1e400")),
        ("18446744073709551615", (Kind.INT, 2**64 - 1)),
        ("18446744073709551616", (Kind.FLOAT, 2.0**64)),
        ("2001-12-14", (Kind.STR, "2001-12-14")),
        ("1:20:30", (Kind.STR, "1:20:30")),  # no base 60 in yaml.v2
        ("310P3", (Kind.STR, "310P3")),
    ],
)
def test_plain_scalars_are_typed_as_yaml_v2_types_them(text, expected):
    assert resolve_plain(text) == expected


def test_hami_vnpu_core_yes_is_read_as_true_and_kept_as_written():
    # given a wrapper config that says yes the YAML 1.1 way
    text = (FIXTURES / "device-config-wrapper.yaml").read_text(encoding="utf-8")
    text = text.replace("hamiVnpuCore: false", "hamiVnpuCore: yes")
    # when the portal reads it
    document = parse_device_config(text)
    # then it is a boolean true, and an unedited render keeps the text as it was
    assert document.hami_vnpu_core is True
    assert render_device_config(document, document.chip_types()) == text


def test_strings_yaml_1_1_would_misread_are_quoted_on_write():
    document = parse_device_config(
        (FIXTURES / "device-config-list.yaml").read_text(encoding="utf-8")
    )
    chip = document.chip_types()[0]
    for word in ("on", "no", "y", "0x1F", "1e3", "08", "~"):
        text = render_device_config(
            document, [ChipTypeSpec(**{**chip.__dict__, "chip_name": word})]
        )
        assert f"chipName: '{word}'" in text or f'chipName: "{word}"' in text
        assert parse_device_config(text).chip_types()[0].chip_name == word


# --- against the real yaml.v2 ------------------------------------------------------


def _same(left: object, right: object) -> bool:
    """Equal with the same types (True is not 1, 1 is not 1.0); NaN equals NaN."""
    if isinstance(left, float) and isinstance(right, float):
        return (math.isnan(left) and math.isnan(right)) or left == right
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(
            _same(left[k], right[k]) for k in left
        )
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(
            _same(a, b) for a, b in zip(left, right, strict=True)
        )
    return type(left) is type(right) and left == right


@pytest.mark.tools
def test_resolution_matches_the_real_yaml_v2_on_tricky_scalars():
    # given each tricky scalar as a plain mapping value
    parsed = yaml_v2_parse([f"k: {text}\n" for text in TRICKY])
    # then yaml.v2 gives exactly the type and value the portal resolves
    wrong = [
        (text, got["k"] if isinstance(got, dict) else got, resolve_plain(text)[1])
        for text, got in zip(TRICKY, parsed, strict=True)
        if not (isinstance(got, dict) and _same(got["k"], resolve_plain(text)[1]))
    ]
    assert wrong == []


_PLAIN_CHARS = string.ascii_letters + string.digits + "+-._~:"


@pytest.mark.tools
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    texts=st.lists(
        st.sampled_from(TRICKY)
        | st.text(_PLAIN_CHARS, min_size=1, max_size=10).filter(
            lambda t: t[0] not in "-:" and not t.endswith(":") and ": " not in t
        ),
        min_size=1,
        max_size=20,
    )
)
def test_resolution_matches_the_real_yaml_v2_on_generated_scalars(texts):
    parsed = yaml_v2_parse([f"k: {text}\n" for text in texts])
    for text, got in zip(texts, parsed, strict=True):
        if isinstance(got, Exception):
            continue  # not a plain scalar yaml.v2 accepts: nothing to compare
        assert _same(got["k"], resolve_plain(text)[1]), (text, got)


# Words the editor accepts where a string goes (chipName takes any text;
# commonWord and resource names are checked) that YAML 1.1 reads otherwise.
_AMBIGUOUS = st.sampled_from(
    [t for t in TRICKY if resolve_plain(t)[0] is not Kind.STR] + ["vir01", "Ascend"]
)
_WORD = _AMBIGUOUS | st.from_regex(
    r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,6}[A-Za-z0-9])?", fullmatch=True
)
_INT = st.integers(0, 2**31 - 1)


@st.composite
def _chips(draw: st.DrawFn) -> list[ChipTypeSpec]:
    chips = []
    for index in range(draw(st.integers(1, 2))):
        allocatable = draw(st.integers(1, 2**31 - 1))
        names = draw(
            st.lists(
                st.sampled_from(sorted(RUNTIME_TEMPLATES)), max_size=3, unique=True
            )
        )
        core_word = draw(st.none() | _WORD)
        chips.append(
            ChipTypeSpec(
                common_word=draw(_WORD),
                chip_name=draw(_WORD | st.text(min_size=1, max_size=8)),
                resource_name=f"huawei.com/r{index}-{draw(_WORD)}",
                resource_memory_name=f"huawei.com/m{index}-{draw(_WORD)}",
                memory_allocatable=allocatable,
                memory_capacity=draw(st.integers(allocatable, 2**31 - 1)),
                ai_core=draw(st.none() | _INT),
                ai_cpu=draw(st.none() | _INT),
                resource_core_name=(
                    None if core_word is None else f"huawei.com/c{index}-{core_word}"
                ),
                templates=tuple(
                    TemplateSpec(
                        name=name,
                        memory=draw(st.integers(1, allocatable)),
                        ai_core=draw(st.none() | st.integers(0, 8)),
                        ai_cpu=draw(st.none() | st.integers(0, 8)),
                    )
                    for name in names
                ),
            )
        )
    return chips


@pytest.mark.tools
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    chips=_chips(),
    fixture=st.sampled_from(["device-config-list.yaml", "device-config-wrapper.yaml"]),
    core=st.booleans(),
)
def test_what_yaml_v2_parses_from_the_published_text_is_what_the_portal_shows(
    chips, fixture, core
):
    # given chip types the editor accepts
    raw = config_to_raw(chips)
    report = validate_configs(raw)
    assume(report.ok)
    document = parse_device_config((FIXTURES / fixture).read_text(encoding="utf-8"))
    wrapper = document.shape is Shape.WRAPPER
    # when the portal renders the text it would publish
    text = render_device_config(
        document, chips, hami_vnpu_core=core if wrapper else None
    )
    shown = parse_device_config(text)
    assert shown.raw_configs == raw  # the portal shows what was edited
    # then yaml.v2 parses the very same values, with the same types...
    (generic,) = yaml_v2_parse([text])
    vnpus = generic["vnpus"]
    configs = vnpus["configs"] if wrapper else vnpus
    assert _same(configs, shown.raw_configs)
    if wrapper:
        assert _same(vnpus["hamiVnpuCore"], shown.hami_vnpu_core)
    # ...and HAMi's own structs get every field as the portal shows it
    (typed,) = yaml_v2_parse([text], mode="wrapper" if wrapper else "list")
    go_configs = typed["vnpus"]["configs"] if wrapper else typed["vnpus"]
    assert [_hami_view(c) for c in shown.chip_types()] == go_configs
    if wrapper:
        assert typed["vnpus"]["hamiVnpuCore"] is core


def _hami_view(chip: ChipTypeSpec) -> dict[str, object]:
    """A chip type as HAMi's Go structs hold it (absent numbers are 0, strings "")."""
    return {
        "commonWord": chip.common_word,
        "chipName": chip.chip_name,
        "resourceName": chip.resource_name,
        "resourceMemoryName": chip.resource_memory_name,
        "resourceCoreName": chip.resource_core_name or "",
        "memoryAllocatable": chip.memory_allocatable,
        "memoryCapacity": chip.memory_capacity,
        "aiCore": chip.ai_core or 0,
        "aiCPU": chip.ai_cpu or 0,
        "templates": [
            {
                "name": t.name,
                "memory": t.memory,
                "aiCore": t.ai_core or 0,
                "aiCPU": t.ai_cpu or 0,
            }
            for t in chip.templates
        ]
        or None,
    }
