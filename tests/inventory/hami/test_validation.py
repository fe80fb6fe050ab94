"""Validation of the vnpus chip types: errors name their field, warnings explain."""

from __future__ import annotations

import copy
import dataclasses
import itertools
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from apps.inventory.hami._advice import chip_warnings, worst_combination
from apps.inventory.hami.deviceconfig import TemplateSpec, parse_device_config
from apps.inventory.hami.validation import (
    Issue,
    ValidationReport,
    slots_per_chip,
    validate_configs,
)

FIXTURES = Path(__file__).resolve().parents[3] / "tests" / "fixtures"

Raw = dict[str, Any]


def _fixture_configs(name: str = "device-config-list.yaml") -> list[Raw]:
    return parse_device_config((FIXTURES / name).read_text()).raw_configs


def _p310() -> Raw:
    return copy.deepcopy(_fixture_configs()[1])


def _b4() -> Raw:
    return copy.deepcopy(_fixture_configs()[0])


def _chip(
    chip_name: str,
    common_word: str,
    templates: list[tuple[str, int, int | None, int | None]],
    *,
    memory: int = 65536,
    ai_core: int | None = 24,
    ai_cpu: int | None = 6,
) -> Raw:
    raw: Raw = {
        "chipName": chip_name,
        "commonWord": common_word,
        "resourceName": f"huawei.com/{common_word}",
        "resourceMemoryName": f"huawei.com/{common_word}-memory",
        "memoryAllocatable": memory,
        "memoryCapacity": memory,
        "templates": [],
    }
    if ai_core is not None:
        raw["aiCore"] = ai_core
    if ai_cpu is not None:
        raw["aiCPU"] = ai_cpu
    for name, mem, core, cpu in templates:
        template: Raw = {"name": name, "memory": mem}
        if core is not None:
            template["aiCore"] = core
        if cpu is not None:
            template["aiCPU"] = cpu
        raw["templates"].append(template)
    return raw


def _b2() -> Raw:
    """HAMi's default 910B2 chip type."""
    return _chip(
        "910B2",
        "Ascend910B2",
        [
            ("vir03_1c_8g", 8192, 3, 1),
            ("vir06_1c_16g", 16384, 6, 1),
            ("vir12_3c_32g", 32768, 12, 3),
        ],
    )


def _only_error(report: ValidationReport) -> Issue:
    assert len(report.errors) == 1, report.errors
    return report.errors[0]


# --- fixtures ---------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["device-config-list.yaml", "device-config-wrapper.yaml"]
)
def test_fixtures_are_valid(name):
    report = validate_configs(_fixture_configs(name))
    assert report.ok
    assert report.errors == ()
    assert [w.message for w in report.warnings] == [
        "Ascend910B4: 4 slices per chip (32768 // 8192, set by vir05_1c_8g)",
        "Ascend310P: 7 slices per chip (21527 // 3072, set by vir01)",
    ]
    assert report.issues == report.warnings


# --- errors: one rule per case ------------------------------------------------

Change = Callable[[Raw], Any]


def _template(index: int, **values: Any) -> Change:
    return lambda raw: raw["templates"][index].update(values)


ERRORS: list[tuple[str, Change, str, str | None, str]] = [
    # (id, change of the 310P3 entry, field, template, message fragment)
    (
        "memory-zero",
        _template(0, memory=0),
        "templates[0].memory",
        "vir01",
        "Ascend310P template vir01: memory must be greater than 0",
    ),
    (
        "memory-negative",
        _template(0, memory=-1),
        "templates[0].memory",
        "vir01",
        "memory must be greater than 0",
    ),
    (
        "memory-above-allocatable",
        _template(2, memory=22000),
        "templates[2].memory",
        "vir04",
        "memory 22000 MB is more than memoryAllocatable 21527 MB",
    ),
    (
        "memory-too-large",
        _template(2, memory=2**31),
        "templates[2].memory",
        "vir04",
        "must be at most 2147483647",
    ),
    (
        "allocatable-above-capacity",
        lambda r: r.update(memoryCapacity=20000),
        "memoryAllocatable",
        None,
        "Ascend310P: memoryAllocatable 21527 MB is more than memoryCapacity 20000 MB",
    ),
    (
        "aicore-above-chip",
        _template(2, aiCore=9),
        "templates[2].aiCore",
        "vir04",
        "aiCore 9 is more than the chip's aiCore 8",
    ),
    (
        "aicpu-above-chip",
        _template(2, aiCPU=8),
        "templates[2].aiCPU",
        "vir04",
        "aiCPU 8 is more than the chip's aiCPU 7",
    ),
    (
        "aicore-negative",
        _template(0, aiCore=-1),
        "templates[0].aiCore",
        "vir01",
        "aiCore must be at least 0",
    ),
    (
        "chip-aicpu-negative",
        lambda r: r.update(aiCPU=-2),
        "aiCPU",
        None,
        "aiCPU must be at least 0",
    ),
    (
        "duplicate-template",
        _template(1, name="vir01"),
        "templates[1].name",
        "vir01",
        "name vir01 is used by another template",
    ),
    (
        "name-not-for-family",
        _template(0, name="vir03_1c_8g"),
        "templates[0].name",
        "vir03_1c_8g",
        "not a template name the 310P family accepts",
    ),
    (
        "name-unknown",
        _template(1, name="vir77"),
        "templates[1].name",
        "vir77",
        "not a template name ascend-docker-runtime accepts",
    ),
    (
        "memory-string",
        _template(0, memory="3072"),
        "templates[0].memory",
        "vir01",
        "memory must be an integer, not the string '3072'",
    ),
    (
        "memory-float",
        _template(0, memory=3072.0),
        "templates[0].memory",
        "vir01",
        "must be an integer",
    ),
    (
        "memory-bool",
        _template(0, memory=True),
        "templates[0].memory",
        "vir01",
        "must be an integer, not the boolean true",
    ),
    (
        "allocatable-string",
        lambda r: r.update(memoryAllocatable="21527"),
        "memoryAllocatable",
        None,
        "memoryAllocatable must be an integer",
    ),
    (
        "aicore-bool",
        lambda r: r.update(aiCore=True),
        "aiCore",
        None,
        "aiCore must be an integer",
    ),
    (
        "chipname-missing",
        lambda r: r.pop("chipName"),
        "chipName",
        None,
        "Ascend310P: chipName is required",
    ),
    (
        "commonword-empty",
        lambda r: r.update(commonWord=""),
        "commonWord",
        None,
        "310P3: commonWord must not be empty",
    ),
    (
        "resource-name-type",
        lambda r: r.update(resourceName=5),
        "resourceName",
        None,
        "resourceName must be a string",
    ),
    (
        "capacity-missing",
        lambda r: r.pop("memoryCapacity"),
        "memoryCapacity",
        None,
        "memoryCapacity is required",
    ),
    (
        "templates-not-list",
        lambda r: r.update(templates={"name": "vir01"}),
        "templates",
        None,
        "templates must be a list",
    ),
    (
        "template-not-mapping",
        lambda r: r["templates"].__setitem__(0, "vir01"),
        "templates[0]",
        "templates[0]",
        "template templates[0]: must be a mapping",
    ),
    (
        "template-name-missing",
        lambda r: r["templates"][0].pop("name"),
        "templates[0].name",
        "templates[0]",
        "name is required",
    ),
    (
        "commonword-chars",
        lambda r: r.update(commonWord="Ascend 310P"),
        "commonWord",
        None,
        "it is part of annotation keys",
    ),
    (
        "resource-name-format",
        lambda r: r.update(resourceName="huawei.com/a b"),
        "resourceName",
        None,
        "not a valid resource name",
    ),
    (
        "memory-factor-type",
        lambda r: r.update(memoryFactor="2"),
        "memoryFactor",
        None,
        "memoryFactor must be an integer",
    ),
    (
        "super-pod-type",
        lambda r: r.update(superPod="yes"),
        "superPod",
        None,
        "superPod must be true or false",
    ),
    (
        "runtime-class-type",
        lambda r: r.update(runtimeClassName=1),
        "runtimeClassName",
        None,
        "runtimeClassName must be a string",
    ),
]


@pytest.mark.parametrize(
    ("change", "field", "template", "fragment"),
    [case[1:] for case in ERRORS],
    ids=[case[0] for case in ERRORS],
)
def test_each_rule_names_its_field(change, field, template, fragment):
    # given the valid 310P3 entry broken in one way, at position 1
    raw = _p310()
    change(raw)
    report = validate_configs([_b4(), raw])
    # then exactly one error, on that field, naming chip type and template
    error = _only_error(report)
    assert error.field == f"vnpus[1].{field}"
    assert error.template == template
    assert error.severity == "error"
    assert error.chip_type == (raw.get("commonWord") or "310P3")
    assert fragment in error.message
    assert not report.ok


CROSS: list[tuple[str, Change, str, str]] = [
    (
        "commonword",
        lambda r: r.update(commonWord="Ascend910B4"),
        "commonWord",
        "commonWord Ascend910B4 is already Ascend910B4's commonWord",
    ),
    (
        "chipname",
        lambda r: r.update(chipName="910B4", aiCore=20, templates=[]),
        "chipName",
        "the device plugin only uses the first entry",
    ),
    (
        "resource",
        lambda r: r.update(resourceName="huawei.com/Ascend910B4"),
        "resourceName",
        "is already Ascend910B4's resourceName",
    ),
    (
        "resource-roles",
        lambda r: r.update(resourceMemoryName="huawei.com/Ascend910B4"),
        "resourceMemoryName",
        "is already Ascend910B4's resourceName",
    ),
    (
        "core",
        lambda r: r.update(resourceCoreName="huawei.com/Ascend910B4-core"),
        "resourceCoreName",
        "is already Ascend910B4's resourceCoreName",
    ),
]


@pytest.mark.parametrize(
    ("change", "field", "fragment"), [c[1:] for c in CROSS], ids=[c[0] for c in CROSS]
)
def test_uniqueness_across_chip_types(change, field, fragment):
    first = _b4()
    first["resourceCoreName"] = "huawei.com/Ascend910B4-core"
    second = _p310()
    change(second)
    error = _only_error(validate_configs([first, second]))
    assert error.field == f"vnpus[1].{field}"
    assert fragment in error.message


def test_an_empty_vnpus_list_is_allowed_with_a_warning():
    report = validate_configs([])
    assert report.errors == ()
    (warning,) = report.warnings
    assert warning.field == "vnpus"
    assert warning.severity == "warning"
    assert "every vNPU pod stays Pending" in warning.message
    # removing the last chip type also says what it orphans
    removed = validate_configs([], previous=[_b4()])
    assert [w.field for w in removed.warnings] == ["vnpus", "vnpus"]
    assert any("is removed" in w.message for w in removed.warnings)
    assert not any(w.field == "vnpus" for w in validate_configs([_b4()]).warnings)


def test_entry_that_is_not_a_mapping():
    error = _only_error(validate_configs([_b4(), "Ascend310P"]))  # type: ignore[list-item]
    assert error.field == "vnpus[1]"


@pytest.mark.parametrize(
    ("chip_name", "common_word", "allowed", "refused"),
    [
        ("910A", "Ascend910A", "vir16", "vir03_1c_8g"),
        ("910B", "Ascend910A", "vir02", "vir05_1c_16g"),  # HAMi v2.5 naming
        ("910B4-1", "Ascend910B4-1", "vir10_3c_32g", "vir01"),
        ("910B2C", "Ascend910B2C", "vir12_3c_32g", "vir04_3c"),
        ("Ascend910", "Ascend910C", "vir05_1c_16g", "vir03_1c_8g"),
        ("310P1", "Ascend310P1", "vir04_4c_dvpp", "vir08"),
        ("X1", "AscendX", "vir03_1c_8g", "vir77"),  # unknown: runtime list only
    ],
)
def test_template_names_follow_the_chip_family(
    chip_name, common_word, allowed, refused
):
    def config(name: str) -> Raw:
        return _chip(chip_name, common_word, [(name, 8192, None, None)], ai_core=None)

    assert validate_configs([config(allowed)]).ok
    error = _only_error(validate_configs([config(refused)]))
    assert error.field == "vnpus[0].templates[0].name"
    assert error.template == refused


# --- warnings -----------------------------------------------------------------


def _warnings(report: ValidationReport, field_part: str = "") -> list[Issue]:
    return [w for w in report.warnings if field_part in w.field]


def test_slot_count_warning_names_the_smallest_template():
    report = validate_configs([_p310()])
    (warning,) = report.warnings
    assert warning.severity == "warning"
    assert (
        warning.message == "Ascend310P: 7 slices per chip (21527 // 3072, set by vir01)"
    )
    assert (warning.field, warning.template) == (
        "vnpus[0].templates[0].memory",
        "vir01",
    )


def test_slot_count_change_says_from_what_to_what():
    edited = _p310()
    edited["templates"][0]["memory"] = 4096
    (warning,) = validate_configs([edited], previous=[_p310()]).warnings
    assert warning.message.startswith(
        "Ascend310P: 5 slices per chip (21527 // 4096, set by vir01); was 7"
    )


def test_chip_type_without_templates_has_one_slice():
    raw = _chip("Ascend910", "Ascend910C", [], ai_cpu=None)
    (warning,) = validate_configs([raw]).warnings
    assert (
        warning.message
        == "Ascend910C: 1 slice per chip (no templates: whole cards only)"
    )


def test_overcommit_on_910b2_defaults():
    report = validate_configs([_b2()])
    assert report.ok
    (warning,) = _warnings(report, "aiCPU")
    assert warning.field == "vnpus[0].aiCPU"
    assert "8 x vir03_1c_8g" in warning.message
    assert "8 AICPU, more than the chip's 6" in warning.message
    assert not _warnings(report, "aiCore")  # 24 AICores always suffice


def test_overcommit_reports_the_worst_mix():
    # 4 slices of 1000 MB in 4000 MB; vir04_3c has the most AICPU per MB
    raw = _chip(
        "310P3",
        "Ascend310P",
        [("vir01", 1000, 1, 1), ("vir04_3c", 2000, 4, 3)],
        memory=4000,
        ai_core=8,
        ai_cpu=5,
    )
    (warning,) = _warnings(validate_configs([raw]), "aiCPU")
    assert (
        "2 x vir04_3c fit by memory (4000 of 4000 MB, 2 of 4 slices)" in warning.message
    )
    assert "use 6 AICPU" in warning.message


def test_no_overcommit_on_the_fixtures():
    for name in ("device-config-list.yaml", "device-config-wrapper.yaml"):
        assert not _warnings(validate_configs(_fixture_configs(name)), "aiC")


def test_rename_warns_about_orphaned_annotations():
    old = _chip("910B3", "Ascend910B", [("vir05_1c_16g", 16384, 5, 1)], ai_core=20)
    new = _chip("910B3", "Ascend910B3", [("vir05_1c_16g", 16384, 5, 1)], ai_core=20)
    report = validate_configs([new], previous=[old])
    (warning,) = _warnings(report, "commonWord")
    assert warning.field == "vnpus[0].commonWord"
    assert warning.chip_type == "Ascend910B3"
    assert warning.message.startswith("Ascend910B is renamed to Ascend910B3")
    for orphan in (
        "hami.io/node-register-Ascend910B ",
        "hami.io/Ascend910B-devices-allocated",
        "pods requesting huawei.com/Ascend910B can no longer be scheduled",
    ):
        assert orphan in warning.message


def test_removal_warns_about_orphaned_annotations():
    report = validate_configs([_p310()], previous=[_b4(), _p310()])
    (warning,) = _warnings(report, "vnpus")[-1:]
    assert (warning.field, warning.chip_type) == ("vnpus", "Ascend910B4")
    assert "Ascend910B4 is removed" in warning.message
    assert "hami.io/node-register-Ascend910B4" in warning.message


def test_resource_and_chip_name_changes_warn():
    edited = _p310()
    edited["resourceName"] = "huawei.com/Ascend310P3"
    edited["chipName"] = "310P4"
    report = validate_configs([edited], previous=[_p310()])
    fields = {w.field for w in report.warnings}
    assert {"vnpus[0].resourceName", "vnpus[0].chipName"} <= fields


def test_more_slices_than_the_hardware_can_create():
    raw = _p310()
    raw["templates"][0]["memory"] = 2048  # 21527 // 2048 = 10 > 8 on 310P
    messages = [w.message for w in validate_configs([raw]).warnings]
    assert any("10 slices per chip is more than the 8 vNPUs" in m for m in messages)


def test_model_specific_template_and_name_memory_warnings():
    raw = _chip(
        "910B2",
        "Ascend910B2",
        [("vir05_1c_16g", 16384, 5, 1), ("vir03_1c_8g", 9000, 4, 1)],
    )
    report = validate_configs([raw])
    assert report.ok
    fields = [w.field for w in report.warnings]
    assert "vnpus[0].templates[0].name" in fields  # not a 910B2 template
    assert "vnpus[0].templates[1].memory" in fields  # 9000 MB is not 8 GB
    assert "vnpus[0].templates[1].aiCore" in fields  # vir03 has 3 AICores


def test_volcano_core_resource_name_warning():
    raw = _p310()
    raw["resourceCoreName"] = "huawei.com/Ascend310P-cores"
    (warning,) = _warnings(validate_configs([raw]), "resourceCoreName")
    assert "uses huawei.com/Ascend310P-core" in warning.message


def test_no_warnings_for_a_chip_type_with_errors():
    raw = _p310()
    raw["templates"][0]["memory"] = 0
    assert validate_configs([raw]).warnings == ()


# --- slots and the knapsack -----------------------------------------------------


def test_slots_per_chip_accepts_specs_mappings_and_rows():
    specs = parse_device_config((FIXTURES / "device-config-list.yaml").read_text())
    templates = specs.chip_types()[1].templates
    assert slots_per_chip(21527, templates) == 7
    assert slots_per_chip(21527, _p310()["templates"]) == 7
    assert slots_per_chip(21527, [SimpleNamespace(memory=6144)]) == 3
    assert slots_per_chip(21527, []) == 1
    with pytest.raises(ValueError, match="greater than 0"):
        slots_per_chip(21527, [{"memory": 0}])
    with pytest.raises(ValueError, match="integer"):
        slots_per_chip(21527, [{"memory": "3072"}])


@settings(max_examples=200, deadline=None)
@given(
    templates=st.lists(
        st.tuples(st.integers(1, 40), st.integers(0, 9)), min_size=1, max_size=3
    ),
    slots=st.integers(0, 5),
    memory=st.integers(0, 120),
)
def test_worst_combination_matches_brute_force(templates, slots, memory):
    specs = [
        TemplateSpec(f"t{i}", mem, ai_cpu=cpu) for i, (mem, cpu) in enumerate(templates)
    ]
    total, counts = worst_combination(specs, slots, memory, lambda t: t.ai_cpu or 0)
    # the reported mix is admissible and adds up
    assert sum(counts) <= slots
    assert sum(t.memory * n for t, n in zip(specs, counts, strict=True)) <= memory
    assert total == sum((t.ai_cpu or 0) * n for t, n in zip(specs, counts, strict=True))
    # and nothing admissible is worse
    best = 0
    for mix in itertools.product(range(slots + 1), repeat=len(specs)):
        used = sum(t.memory * n for t, n in zip(specs, mix, strict=True))
        if sum(mix) <= slots and used <= memory:
            best = max(
                best, sum((t.ai_cpu or 0) * n for t, n in zip(specs, mix, strict=True))
            )
    assert total == best


def _rule_warnings(report: ValidationReport) -> list[Issue]:
    return [
        w
        for w in report.warnings
        if "a request carries only memory" in w.message
        or "whole-card request" in w.message
    ]


def test_templates_of_equal_memory_warn_naming_the_one_handed_out():
    raw = _p310()
    raw["templates"].insert(2, {"name": "vir04_3c", "memory": 12288})
    report = validate_configs([raw])
    assert report.ok
    (warning,) = _rule_warnings(report)
    assert warning.message == (
        "Ascend310P: templates vir04_3c, vir04 all have 12288 MB; a request carries "
        "only memory, so HAMi and Volcano always create vir04_3c (vir04_3c comes "
        "first in the file) and never vir04"
    )
    assert (warning.field, warning.chip_type, warning.template) == (
        "vnpus[0].templates[3].memory",
        "Ascend310P",
        "vir04",
    )


def test_more_than_twelve_tied_templates_say_gos_sort_decides():
    # Names are not checked by chip_warnings: 13 templates of the same family
    # do not exist, but a config may list unknown ones before it is fixed.
    chip = parse_device_config(
        (FIXTURES / "device-config-list.yaml").read_text()
    ).chip_types()[1]
    memories = [6144, 3072, 3072, *[6144] * 10]
    chip = dataclasses.replace(
        chip,
        templates=tuple(TemplateSpec(f"t{i}", m) for i, m in enumerate(memories)),
    )
    messages = [w.message for w in chip_warnings(chip, 0, None)]
    # Go's sort.Slice puts t2 before t1 here (tests/fixtures/gosort).
    assert (
        "Ascend310P: templates t2, t1 all have 3072 MB; a request carries only "
        "memory, so HAMi and Volcano always create t2 (with more than 12 templates "
        "Go's sort does not keep file order, and it puts t2 first) and never t1"
    ) in messages


def test_a_template_of_memory_allocatable_warns_that_whole_cards_become_it():
    raw = _p310()
    raw["memoryAllocatable"] = 12288
    report = validate_configs([raw])
    assert report.ok
    (warning,) = _rule_warnings(report)
    assert warning.message == (
        "Ascend310P: template vir04 has memoryAllocatable's 12288 MB, so a "
        "whole-card request (no -memory; with Volcano also -memory: 0) becomes a "
        "vir04 slice instead of a whole card"
    )
    assert (warning.field, warning.template) == (
        "vnpus[0].templates[2].memory",
        "vir04",
    )


def test_the_guides_config_has_no_template_rule_warning():
    assert not _rule_warnings(validate_configs(_fixture_configs()))
