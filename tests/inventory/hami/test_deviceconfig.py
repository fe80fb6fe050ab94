"""Reading and rewriting device-config.yaml without losing what people wrote."""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import io
import json
import string
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from apps.inventory.hami.deviceconfig import (
    CHIP_TYPE_KEYS,
    TEMPLATE_KEYS,
    ChipTypeSpec,
    DeviceConfigDocument,
    DeviceConfigError,
    Shape,
    TemplateSpec,
    chip_type_from_raw,
    config_to_raw,
    parse_device_config,
    render_device_config,
    semantic_equal,
)

REPO = Path(__file__).resolve().parents[3]
FIXTURES = REPO / "tests" / "fixtures"
SHAPES = {
    "device-config-list.yaml": Shape.LIST,
    "device-config-wrapper.yaml": Shape.WRAPPER,
}


def _text(name: str) -> str:
    return (FIXTURES / name).read_text()


def _doc(name: str) -> DeviceConfigDocument:
    return parse_device_config(_text(name))


def _by_word(chips: list[ChipTypeSpec]) -> dict[str, ChipTypeSpec]:
    return {chip.common_word: chip for chip in chips}


def _changed_lines(before: str, after: str) -> list[str]:
    return [
        line
        for line in difflib.unified_diff(before.splitlines(), after.splitlines(), n=0)
        if line[:1] in "+-" and line[:3] not in ("+++", "---")
    ]


def _compact(lines: list[str]) -> list[str]:
    """Changed lines without their indentation: "-    memory: 1" -> "-memory: 1"."""
    return [line[0] + line[1:].strip() for line in lines]


def _configmap_text() -> str:
    data = yaml.safe_load(
        (FIXTURES / "configmap-hami-scheduler-device.yaml").read_text()
    )
    return str(data["data"]["device-config.yaml"])


# --- fixtures ---------------------------------------------------------------


def _recorded_sums() -> dict[str, str]:
    """SHA256SUMS: the data files' checksums, taken when they were copied in."""
    lines = (FIXTURES / "SHA256SUMS").read_text().splitlines()
    return {name: digest for digest, name in (line.split() for line in lines)}


@pytest.mark.parametrize("name", sorted(_recorded_sums()))
def test_repo_fixtures_are_unchanged_copies_of_the_shared_ones(name):
    """The data files in tests/fixtures are byte for byte the ones copied in
    (the sums were recorded with ``sha256sum`` from the originals). Their
    README is the repository's own description of them and is not summed."""
    digest = hashlib.sha256((FIXTURES / name).read_bytes()).hexdigest()
    assert digest == _recorded_sums()[name]


@pytest.mark.parametrize(("name", "shape"), SHAPES.items())
def test_parse_fixture(name, shape):
    # given a fixture, when parsed, then shape and chip types are read
    document = _doc(name)
    assert document.shape is shape
    assert document.hami_vnpu_core is (False if shape is Shape.WRAPPER else None)
    chips = _by_word(document.chip_types())
    assert list(chips) == ["Ascend910B4", "Ascend310P"]
    p310 = chips["Ascend310P"]
    assert (p310.chip_name, p310.memory_allocatable, p310.memory_capacity) == (
        "310P3",
        21527,
        24576,
    )
    assert (p310.ai_core, p310.ai_cpu) == (8, 7)
    assert [(t.name, t.memory, t.ai_core, t.ai_cpu) for t in p310.templates] == [
        ("vir01", 3072, 1, 1),
        ("vir02", 6144, 2, 2),
        ("vir04", 12288, 4, 4),
    ]
    expected_core = "huawei.com/Ascend310P-core" if shape is Shape.WRAPPER else None
    assert p310.resource_core_name == expected_core
    assert p310.extra == {}


@pytest.mark.parametrize("name", SHAPES)
def test_raw_configs_are_plain_json(name):
    document = _doc(name)
    assert type(document.raw_configs[0]) is dict
    assert type(document.raw_configs[0]["templates"][0]) is dict
    assert json.loads(json.dumps(document.raw_configs)) == document.raw_configs


@pytest.mark.parametrize("name", SHAPES)
def test_round_trip_without_edit_is_byte_identical(name):
    text = _text(name)
    document = parse_device_config(text)
    assert render_device_config(document) == text
    # a no-op edit goes through ruamel and must still change nothing
    assert render_device_config(document, document.chip_types()) == text


def test_configmap_fixture_round_trips_with_its_comments():
    # given the device-config.yaml held in the ConfigMap object
    text = _configmap_text()
    assert text == _text("device-config-list.yaml")
    document = parse_device_config(text)
    assert render_device_config(document, document.chip_types()) == text
    # when a chip type is edited, then both "# Ascend ..." comments survive
    chips = document.chip_types()
    chips[0] = dataclasses.replace(chips[0], memory_allocatable=32000)
    out = render_device_config(document, chips)
    assert "# Ascend 910B4\n- chipName: 910B4" in out
    assert "# Ascend 310P3\n- chipName: 310P3" in out
    assert _changed_lines(text, out) == [
        "-  memoryAllocatable: 32768",
        "+  memoryAllocatable: 32000",
    ]


# --- edits ------------------------------------------------------------------


def _edit_template(chip: ChipTypeSpec, name: str, **changes: Any) -> ChipTypeSpec:
    templates = tuple(
        dataclasses.replace(t, **changes) if t.name == name else t
        for t in chip.templates
    )
    return dataclasses.replace(chip, templates=templates)


def _check_untouched_parts(name: str, out: str) -> None:
    original = yaml.safe_load(_text(name))
    edited = yaml.safe_load(out)
    assert {k: v for k, v in edited.items() if k != "vnpus"} == {
        k: v for k, v in original.items() if k != "vnpus"
    }
    if SHAPES[name] is Shape.WRAPPER:
        assert edited["vnpus"]["hamiVnpuCore"] is False
        assert set(edited["vnpus"]) == {"hamiVnpuCore", "configs"}
    assert parse_device_config(out).shape is SHAPES[name]


@pytest.mark.parametrize("name", SHAPES)
def test_change_template_memory_changes_one_line(name):
    document = _doc(name)
    chips = document.chip_types()
    chips[1] = _edit_template(chips[1], "vir02", memory=5120)
    out = render_device_config(document, chips)
    assert _compact(_changed_lines(_text(name), out)) == [
        "-memory: 6144",
        "+memory: 5120",
    ]
    assert parse_device_config(out).chip_types() == chips
    _check_untouched_parts(name, out)


@pytest.mark.parametrize("name", SHAPES)
def test_add_template_appends_it(name):
    document = _doc(name)
    chips = document.chip_types()
    new = TemplateSpec("vir02_1c", 6144, ai_core=2, ai_cpu=1)
    chips[1] = dataclasses.replace(chips[1], templates=(*chips[1].templates, new))
    out = render_device_config(document, chips)
    assert parse_device_config(out).chip_types() == chips
    assert _compact(_changed_lines(_text(name), out)) == [
        "+- name: vir02_1c",
        "+memory: 6144",
        "+aiCore: 2",
        "+aiCPU: 1",
    ]
    _check_untouched_parts(name, out)


@pytest.mark.parametrize("name", SHAPES)
def test_remove_last_template_keeps_the_next_entrys_comment(name):
    document = _doc(name)
    chips = document.chip_types()
    chips[0] = dataclasses.replace(chips[0], templates=chips[0].templates[:1])
    out = render_device_config(document, chips)
    assert "vir10_3c_16g" not in out
    assert parse_device_config(out).chip_types() == chips
    if SHAPES[name] is Shape.LIST:
        # the comment sat on the removed template's last line in ruamel's tree
        assert "    aiCPU: 1\n# Ascend 310P3\n- chipName: 310P3" in out
    _check_untouched_parts(name, out)


@pytest.mark.parametrize("name", SHAPES)
def test_add_chip_type_appends_it(name):
    document = _doc(name)
    chips = document.chip_types()
    new = ChipTypeSpec(
        common_word="Ascend910B3",
        chip_name="910B3",
        resource_name="huawei.com/Ascend910B3",
        resource_memory_name="huawei.com/Ascend910B3-memory",
        memory_allocatable=65536,
        memory_capacity=65536,
        ai_core=20,
        ai_cpu=7,
        templates=(TemplateSpec("vir05_1c_16g", 16384, 5, 1),),
        extra={"superPod": False},
    )
    out = render_device_config(document, [*chips, new])
    assert parse_device_config(out).chip_types() == [*chips, new]
    assert out.startswith(_text(name))  # everything before is untouched
    _check_untouched_parts(name, out)


@pytest.mark.parametrize("name", SHAPES)
def test_remove_first_chip_type_takes_its_comment_along(name):
    document = _doc(name)
    chips = document.chip_types()
    out = render_device_config(document, chips[1:])
    assert parse_device_config(out).chip_types() == chips[1:]
    assert "910B4" not in out
    if SHAPES[name] is Shape.LIST:
        assert out.startswith("vnpus:\n# Ascend 310P3\n- chipName: 310P3\n")
        assert "# Ascend 910B4" not in out
    _check_untouched_parts(name, out)


@pytest.mark.parametrize("name", SHAPES)
def test_remove_last_chip_type(name):
    document = _doc(name)
    chips = document.chip_types()
    out = render_device_config(document, chips[:1])
    assert parse_device_config(out).chip_types() == chips[:1]
    assert "310P" not in out
    _check_untouched_parts(name, out)


@pytest.mark.parametrize("name", SHAPES)
def test_none_deletes_optional_keys(name):
    document = _doc(name)
    chips = document.chip_types()
    chips[1] = dataclasses.replace(chips[1], ai_core=None, resource_core_name=None)
    chips[1] = _edit_template(chips[1], "vir01", ai_cpu=None)
    out = render_device_config(document, chips)
    raw = parse_device_config(out).raw_configs[1]
    assert "aiCore" not in raw
    assert "resourceCoreName" not in raw
    assert raw["templates"][0] == {"name": "vir01", "memory": 3072, "aiCore": 1}


def test_templates_are_published_in_the_order_given():
    # Equal memories are handed out by file order, so the file follows the
    # portal's order (a re-added template must not go back to its old place).
    document = _doc("device-config-list.yaml")
    chips = document.chip_types()
    reversed_templates = tuple(reversed(chips[1].templates))
    chips[1] = dataclasses.replace(chips[1], templates=reversed_templates)
    out = render_device_config(document, chips)
    assert parse_device_config(out).chip_types()[1].templates == reversed_templates
    # Distinct memories: the same config for the schedulers.
    assert semantic_equal(out, _text("device-config-list.yaml"))


def test_equal_memories_in_another_order_are_a_different_config():
    text = _text("device-config-list.yaml")
    tied = text.replace("memory: 6144", "memory: 12288")
    document = _doc("device-config-list.yaml")
    chips = parse_device_config(tied).chip_types()
    chips[1] = dataclasses.replace(
        chips[1], templates=tuple(reversed(chips[1].templates))
    )
    swapped = render_device_config(document, chips)
    assert not semantic_equal(tied, swapped)


CUSTOM = """\
# Managed by hand and by the portal.
foo: bar  # unknown top-level key
vnpus:
  hamiVnpuCore: true
  someFutureKey: [1, 2]
  configs:
  # Ascend 310P3, inference cards
  - chipName: 310P3
    commonWord: Ascend310P
    resourceName: "huawei.com/Ascend310P"
    resourceMemoryName: huawei.com/Ascend310P-memory
    memoryFactor: 1
    runtimeClassName: ascend  # needs the runtime class
    memoryAllocatable: 21527
    memoryCapacity: 24576
    unknownKey: {a: 1}
    templates:
    - name: vir01
      memory: 3072
      futureTemplateKey: x  # eol comment
    # the big one
    - name: vir04
      memory: 12288
    overwriteEnv: false
kunlun:
  resourceCountName: kunlunxin.com/xpu
"""


def test_unknown_keys_and_comments_survive_an_edit():
    document = parse_device_config(CUSTOM)
    (chip,) = document.chip_types()
    assert chip.extra == {
        "memoryFactor": 1,
        "runtimeClassName": "ascend",
        "unknownKey": {"a": 1},
        "overwriteEnv": False,
    }
    assert chip.templates[0].extra == {"futureTemplateKey": "x"}
    edited = dataclasses.replace(
        _edit_template(chip, "vir04", memory=12000),
        resource_name="huawei.com/Ascend310P3",
        ai_core=8,
    )
    out = render_device_config(document, [edited])
    assert _changed_lines(CUSTOM, out) == [
        '-    resourceName: "huawei.com/Ascend310P"',
        '+    resourceName: "huawei.com/Ascend310P3"',
        "+    aiCore: 8",
        "-      memory: 12288",
        "+      memory: 12000",
    ]
    assert parse_device_config(out).chip_types() == [edited]


def test_extra_is_merged_never_deleted():
    document = parse_device_config(CUSTOM)
    (chip,) = document.chip_types()
    out = render_device_config(
        document,
        [dataclasses.replace(chip, extra={"superPod": True, "memoryFactor": 2})],
    )
    (after,) = parse_device_config(out).chip_types()
    assert after.extra == {
        "memoryFactor": 2,
        "runtimeClassName": "ascend",
        "unknownKey": {"a": 1},
        "overwriteEnv": False,
        "superPod": True,
    }


def test_remove_template_with_a_comment_before_the_next_one():
    document = parse_device_config(CUSTOM)
    (chip,) = document.chip_types()
    out = render_device_config(
        document, [dataclasses.replace(chip, templates=chip.templates[1:])]
    )
    assert "    templates:\n    # the big one\n    - name: vir04\n" in out
    assert "futureTemplateKey" not in out


@pytest.mark.parametrize("value", [True, False])
def test_hami_vnpu_core_is_set_in_the_wrapper(value):
    document = parse_device_config(CUSTOM)
    out = render_device_config(document, hami_vnpu_core=value)
    assert parse_device_config(out).hami_vnpu_core is value
    assert semantic_equal(
        out.replace(f"hamiVnpuCore: {str(value).lower()}", "hamiVnpuCore: true"), CUSTOM
    )


def test_hami_vnpu_core_is_added_to_a_wrapper_without_it():
    document = parse_device_config("vnpus:\n  configs: []\n")
    out = render_device_config(document, hami_vnpu_core=True)
    assert out == "vnpus:\n  hamiVnpuCore: true\n  configs: []\n"


def test_hami_vnpu_core_needs_the_wrapper_shape():
    with pytest.raises(DeviceConfigError) as caught:
        render_device_config(_doc("device-config-list.yaml"), hami_vnpu_core=True)
    assert caught.value.field == "vnpus.hamiVnpuCore"


def test_duplicate_chip_types_or_templates_are_refused():
    chips = _doc("device-config-list.yaml").chip_types()
    with pytest.raises(DeviceConfigError, match="duplicate commonWord") as caught:
        render_device_config(_doc("device-config-list.yaml"), [chips[0], chips[0]])
    assert caught.value.field == "vnpus[1].commonWord"
    doubled = dataclasses.replace(
        chips[1], templates=(chips[1].templates[0], chips[1].templates[0])
    )
    with pytest.raises(DeviceConfigError) as caught:
        render_device_config(_doc("device-config-list.yaml"), [doubled])
    assert caught.value.field == "vnpus[0].templates[1].name"


def test_document_without_vnpus_keeps_other_vendors():
    text = "nvidia:\n  resourceCountName: nvidia.com/gpu\n"
    document = parse_device_config(text)
    assert (document.shape, document.raw_configs) == (Shape.LIST, [])
    assert render_device_config(document, []) == text
    chip = _doc("device-config-list.yaml").chip_types()[1]
    out = render_device_config(document, [chip])
    assert out.startswith(text + "vnpus:\n- chipName: 310P3\n")
    assert parse_device_config(out).chip_types() == [chip]


@pytest.mark.parametrize(
    ("text", "prefix"),
    [
        ("vnpus: []\n", "vnpus:\n- chipName: 310P3\n"),
        ("vnpus:\n", "vnpus:\n- chipName: 310P3\n"),
        ("vnpus:\n  configs: []\n", "vnpus:\n  configs:\n  - chipName: 310P3\n"),
    ],
)
def test_empty_lists_become_block_lists(text, prefix):
    chip = _doc("device-config-list.yaml").chip_types()[1]
    out = render_device_config(parse_device_config(text), [chip])
    assert out.startswith(prefix)
    assert parse_device_config(out).chip_types() == [chip]


def test_indented_sequences_keep_their_style():
    # given the wrapper fixture written with indented lists ("  - name: ...")
    source = YAML(typ="rt")
    source.indent(mapping=2, sequence=4, offset=2)
    stream = io.StringIO()
    source.dump(source.load(_text("device-config-wrapper.yaml")), stream)
    text = stream.getvalue()
    assert "\n    - chipName: 910B4\n" in text
    document = parse_device_config(text)
    # when edited, then only the edited line changes
    chips = document.chip_types()
    chips[1] = _edit_template(chips[1], "vir04", memory=12000)
    out = render_device_config(document, chips)
    assert _changed_lines(text, out) == [
        "-          memory: 12288",
        "+          memory: 12000",
    ]


# --- errors -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("vnpus: [\n  - {chipName: 310P3\n", ""),
        ("a: 1\na: 2\n", ""),
        ("", ""),
        ("- a\n- b\n", ""),
        ("vnpus: 3\n", "vnpus"),
        ("vnpus: {foo: 1}\n", "vnpus"),
        ("vnpus: {configs: 3}\n", "vnpus.configs"),
        ("vnpus: {hamiVnpuCore: maybe, configs: []}\n", "vnpus.hamiVnpuCore"),
        ("vnpus: [3]\n", "vnpus[0]"),
        ("vnpus: [{chipName: a}, 5]\n", "vnpus[1]"),
        ("vnpus:\n  configs: [{chipName: a}, [1]]\n", "vnpus[1]"),
        ("vnpus: [{templates: 3}]\n", "vnpus[0].templates"),
        ("vnpus: [{templates: [{name: a}, 3]}]\n", "vnpus[0].templates[1]"),
    ],
)
def test_structure_errors_name_the_field(text, field):
    with pytest.raises(DeviceConfigError) as caught:
        parse_device_config(text)
    assert caught.value.field == field
    assert caught.value.message
    assert isinstance(caught.value, ValueError)


def test_syntax_error_reports_the_line():
    with pytest.raises(DeviceConfigError, match="line") as caught:
        parse_device_config("vnpus:\n- chipName: a\n  templates: [\n")
    assert caught.value.line is not None


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda raw: raw["templates"][0].update(memory="3072"), "templates[0].memory"),
        (lambda raw: raw["templates"][0].update(memory=3072.0), "templates[0].memory"),
        (lambda raw: raw.update(memoryAllocatable=True), "memoryAllocatable"),
        (lambda raw: raw.pop("commonWord"), "commonWord"),
        (lambda raw: raw.update(resourceCoreName=5), "resourceCoreName"),
        (lambda raw: raw["templates"][1].pop("name"), "templates[1].name"),
        (lambda raw: raw.update(aiCPU="7"), "aiCPU"),
    ],
)
def test_typed_view_names_the_bad_field(change, field):
    raw = json.loads(json.dumps(_doc("device-config-list.yaml").raw_configs[1]))
    change(raw)
    with pytest.raises(DeviceConfigError) as caught:
        chip_type_from_raw(raw, 1)
    assert caught.value.field == f"vnpus[1].{field}"


def test_parse_keeps_wrong_types_for_the_validator():
    document = parse_device_config(
        _text("device-config-list.yaml").replace("memory: 3072", 'memory: "3072"')
    )
    assert document.raw_configs[1]["templates"][0]["memory"] == "3072"
    with pytest.raises(DeviceConfigError):
        document.chip_types()


def test_specs_refuse_managed_keys_in_extra():
    with pytest.raises(ValueError, match="memory"):
        TemplateSpec("vir01", 1, extra={"memory": 2})
    with pytest.raises(ValueError, match="aiCore"):
        dataclasses.replace(
            _doc("device-config-list.yaml").chip_types()[0], extra={"aiCore": 1}
        )


def test_specs_are_hashable_and_take_lists():
    chip = _doc("device-config-list.yaml").chip_types()[1]
    as_list = dataclasses.replace(chip, templates=list(chip.templates))  # type: ignore[arg-type]
    assert as_list == chip
    assert hash(as_list) == hash(chip)


# --- conversion and comparison ------------------------------------------------


def test_config_to_raw_uses_the_file_keys():
    chips = _doc("device-config-wrapper.yaml").chip_types()
    raw = config_to_raw(chips)
    assert raw == parse_device_config(_text("device-config-wrapper.yaml")).raw_configs
    assert list(raw[0]) == [
        "chipName",
        "commonWord",
        "resourceName",
        "resourceMemoryName",
        "resourceCoreName",
        "memoryAllocatable",
        "memoryCapacity",
        "aiCore",
        "aiCPU",
        "templates",
    ]
    bare = dataclasses.replace(
        chips[0], ai_core=None, ai_cpu=None, templates=(), extra={"superPod": True}
    )
    assert config_to_raw([bare])[0] == {
        "chipName": "910B4",
        "commonWord": "Ascend910B4",
        "resourceName": "huawei.com/Ascend910B4",
        "resourceMemoryName": "huawei.com/Ascend910B4-memory",
        "resourceCoreName": "huawei.com/Ascend910B4-core",
        "memoryAllocatable": 32768,
        "memoryCapacity": 32768,
        "superPod": True,
    }


def test_semantic_equal():
    text = _text("device-config-list.yaml")
    plain = yaml.safe_load(text)
    for entry in plain["vnpus"]:
        entry["templates"].reverse()
    reordered = json.dumps(plain, indent=1, sort_keys=True)  # JSON is YAML too
    assert semantic_equal(text, reordered)
    assert not semantic_equal(text, text.replace("memory: 6144", "memory: 6145"))
    assert not semantic_equal(text, text.replace("aiCore: 1\n", "aiCore: true\n"))
    wrapper_only = _text("device-config-wrapper.yaml")
    assert not semantic_equal(text, wrapper_only)
    with pytest.raises(DeviceConfigError):
        semantic_equal(text, "vnpus: [")


# --- properties -------------------------------------------------------------

_KEY = st.text(string.ascii_letters + string.digits + "-_./ ", min_size=1, max_size=10)
_SCALAR = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**63), 2**63),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
)
_JSON = st.recursive(
    _SCALAR,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(_KEY, inner, max_size=3)
    ),
    max_leaves=6,
)


def _extra(managed: tuple[str, ...]) -> st.SearchStrategy[dict[str, Any]]:
    return st.dictionaries(_KEY.filter(lambda k: k not in managed), _JSON, max_size=3)


_NAME = st.text(string.ascii_letters + string.digits + "-_.", min_size=1, max_size=14)
_OPTIONAL_INT = st.none() | st.integers(0, 2**31 - 1)
_TEMPLATE = st.builds(
    TemplateSpec,
    name=_NAME,
    memory=st.integers(1, 2**31 - 1),
    ai_core=_OPTIONAL_INT,
    ai_cpu=_OPTIONAL_INT,
    extra=_extra(TEMPLATE_KEYS),
)
_CHIP = st.builds(
    ChipTypeSpec,
    common_word=_NAME,
    chip_name=_NAME,
    resource_name=_NAME.map(lambda n: f"huawei.com/{n}"),
    resource_memory_name=_NAME,
    memory_allocatable=st.integers(1, 2**31 - 1),
    memory_capacity=st.integers(1, 2**31 - 1),
    ai_core=_OPTIONAL_INT,
    ai_cpu=_OPTIONAL_INT,
    resource_core_name=st.none() | _NAME,
    templates=st.lists(_TEMPLATE, max_size=4, unique_by=lambda t: t.name).map(tuple),
    extra=_extra(CHIP_TYPE_KEYS),
)
_CHIPS = st.lists(_CHIP, max_size=4, unique_by=lambda c: c.common_word)


@st.composite
def _skeletons(draw: st.DrawFn) -> str:
    """A device-config.yaml with other vendors and an empty vnpus section."""
    vendors = draw(
        st.dictionaries(_KEY.filter(lambda k: k != "vnpus"), _JSON, max_size=3)
    )
    shape = draw(st.sampled_from(Shape))
    if shape is Shape.LIST:
        vnpus: Any = []
    else:
        vnpus = {"configs": []}
        core = draw(st.none() | st.booleans())
        if core is not None:
            vnpus = {"hamiVnpuCore": core, **vnpus}
    items = list(vendors.items())
    items.insert(draw(st.integers(0, len(items))), ("vnpus", vnpus))
    stream = io.StringIO()
    YAML(typ="rt").dump(dict(items), stream)
    return stream.getvalue()


def _published(chip: ChipTypeSpec) -> ChipTypeSpec:
    """``chip`` as it reads back once rendered: an extra key set to None is removed."""

    def kept(extra: Any) -> dict[str, Any]:
        return {k: v for k, v in extra.items() if v is not None}

    return dataclasses.replace(
        chip,
        templates=tuple(
            dataclasses.replace(t, extra=kept(t.extra)) for t in chip.templates
        ),
        extra=kept(chip.extra),
    )


def _merged(old: list[ChipTypeSpec], new: list[ChipTypeSpec]) -> list[ChipTypeSpec]:
    """What render promises: kept chip types stay in place, extras are merged
    (a key set to None is removed)."""
    before = _by_word(old)
    wanted = _by_word(new)
    result = []
    for chip in old:
        if chip.common_word in wanted:
            result.append(_merge_chip(chip, wanted[chip.common_word]))
    result += [chip for chip in new if chip.common_word not in before]
    return [_published(chip) for chip in result]


def _merge_chip(old: ChipTypeSpec, new: ChipTypeSpec) -> ChipTypeSpec:
    # Templates come out in the order given (the template rule needs it).
    old_templates = {t.name: t for t in old.templates}
    templates = [
        dataclasses.replace(t, extra={**old_templates[t.name].extra, **t.extra})
        if t.name in old_templates
        else t
        for t in new.templates
    ]
    return dataclasses.replace(
        new, templates=tuple(templates), extra={**old.extra, **new.extra}
    )


_SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@pytest.mark.slow
@_SETTINGS
@given(skeleton=_skeletons(), chips=_CHIPS)
def test_render_then_parse_gives_the_chip_types_back(skeleton, chips):
    # given any document and chip types, when rendered and parsed again
    document = parse_device_config(skeleton)
    out = render_device_config(document, chips)
    again = parse_device_config(out)
    # then the chip types, the shape and the other keys are what was given
    # (extra keys set to None are removed: the editor's way to delete one)
    assert again.chip_types() == [_published(chip) for chip in chips]
    assert again.shape is document.shape
    assert again.hami_vnpu_core is document.hami_vnpu_core
    before, after = yaml.safe_load(skeleton), yaml.safe_load(out)
    assert {k: v for k, v in after.items() if k != "vnpus"} == {
        k: v for k, v in before.items() if k != "vnpus"
    }
    # and rendering the same chip types again changes nothing
    assert render_device_config(again, chips) == out
    assert semantic_equal(render_device_config(again), out)


@pytest.mark.slow
@_SETTINGS
@given(skeleton=_skeletons(), first=_CHIPS, second=_CHIPS)
def test_editing_an_edited_document(skeleton, first, second):
    # given a document rendered with some chip types
    document = parse_device_config(
        render_device_config(parse_device_config(skeleton), first)
    )
    # when re-rendered with others, then kept entries stay in place with merged extras
    out = render_device_config(document, second)
    assert parse_device_config(out).chip_types() == _merged(first, second)


_COMMENTS = {"Ascend910B4": "# Ascend 910B4", "Ascend310P": "# Ascend 310P3"}


@st.composite
def _fixture_edits(draw: st.DrawFn) -> list[ChipTypeSpec]:
    """Random edits of the list fixture: drop, reorder, retune, add."""
    chips = _doc("device-config-list.yaml").chip_types()
    wanted = draw(st.lists(st.sampled_from(chips), unique=True))
    edited = []
    for chip in wanted:
        templates = draw(st.lists(st.sampled_from(chip.templates), unique=True))
        templates = [
            dataclasses.replace(
                t, memory=draw(st.sampled_from([t.memory, t.memory - 1]))
            )
            for t in templates
        ]
        templates += draw(st.lists(_TEMPLATE, max_size=2))
        unique = {t.name: t for t in templates}
        edited.append(dataclasses.replace(chip, templates=tuple(unique.values())))
    edited += draw(
        _CHIPS.map(lambda new: [c for c in new if c.common_word not in _COMMENTS])
    )
    return edited


@pytest.mark.slow
@_SETTINGS
@given(wanted=_fixture_edits())
def test_fixture_comments_follow_their_chip_type(wanted):
    # given the commented list fixture, when edited at random
    document = _doc("device-config-list.yaml")
    out = render_device_config(document, wanted)
    # then the chip types are as wanted and each comment still heads its entry
    assert parse_device_config(out).chip_types() == _merged(
        document.chip_types(), wanted
    )
    kept = {chip.common_word for chip in wanted}
    for word, comment in _COMMENTS.items():
        chip_name = "910B4" if word == "Ascend910B4" else "310P3"
        if word in kept:
            assert f"{comment}\n- chipName: {chip_name}\n" in out
        else:
            assert comment not in out


def test_a_lone_equals_sign_is_written_quoted():
    """Hypothesis found it: PyYAML reads a plain ``=`` as YAML 1.1's value tag."""
    skeleton = "vnpus: []\nother:\n  '0': '='\n"
    document = parse_device_config(skeleton)
    out = render_device_config(document, document.chip_types())
    assert yaml.safe_load(out)["other"] == {"0": "="}
