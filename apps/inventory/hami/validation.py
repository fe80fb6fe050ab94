"""Validate the ``vnpus`` chip types before the portal writes them.

HAMi checks almost nothing: a type error crashes the scheduler at start,
``memory: 0`` makes the device plugin divide by zero, and a bad template
name only fails when a container starts (facts, section 1). So the portal
checks everything it can, and says what each edit will do.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ._advice import change_warnings, chip_warnings, slots_per_chip
from ._issues import Issue, Severity, ValidationReport, describe
from .catalog import RUNTIME_TEMPLATES, allowed_template_names, chip_family
from .deviceconfig import chip_type_from_raw
from .messages import N_, Message

__all__ = [
    "Issue",
    "Severity",
    "ValidationReport",
    "slots_per_chip",
    "validate_configs",
]

#: HAMi reads memory and cores into int32 fields of the pod annotations.
MAX_INT32 = 2**31 - 1
_REQUIRED_STRINGS = ("chipName", "commonWord", "resourceName", "resourceMemoryName")
_RESOURCE_KEYS = ("resourceName", "resourceMemoryName", "resourceCoreName")
# The commonWord is spliced into annotation keys; the longest is
# "hami.io/<commonWord>-devices-to-allocate", whose name part may have at
# most 63 characters.
_MAX_NAME = 63
_MAX_COMMON_WORD = _MAX_NAME - len("-devices-to-allocate")
_ANNOTATION_NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
_DNS_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_RESOURCE_NAME = re.compile(
    rf"^{_DNS_LABEL}(\.{_DNS_LABEL})*/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$"
)
# Keys HAMi also decodes (into typed Go fields) although the portal does
# not manage them: a wrong type would crash the scheduler just the same.
_EXTRA_TYPES: Mapping[str, type] = {
    "memoryFactor": int,
    "runtimeClassName": str,
    "overwriteEnv": bool,
    "superPod": bool,
}


def _string_problem(value: Any, *, required: bool) -> Message | None:
    if value is None:
        return N_("is required") if required else None
    if not isinstance(value, str):
        return N_("must be a string, not %(value)s", value=describe(value))
    if not value.strip():
        return N_("must not be empty")
    return None


def _int_problem(value: Any, *, required: bool, minimum: int) -> Message | None:
    if value is None:
        return N_("is required") if required else None
    # Go's YAML decoder refuses true, "3072" and 3072.0 for an int field.
    if isinstance(value, bool) or not isinstance(value, int):
        return N_("must be an integer, not %(value)s", value=describe(value))
    if value < minimum:
        return (
            N_("must be greater than 0")
            if minimum == 1
            else N_("must be at least %(minimum)d", minimum=minimum)
        )
    if value > MAX_INT32:
        return N_("must be at most %(maximum)d", maximum=MAX_INT32)
    return None


def _keyed(key: str, problem: Message) -> Message:
    """``memory must be greater than 0``: the key, then what is wrong with it."""
    return N_("%(key)s %(problem)s", key=key, problem=problem)


def _valid_int(value: object) -> int | None:
    if _int_problem(value, required=True, minimum=0) is None and isinstance(value, int):
        return value
    return None


class _ChipChecker:
    """Collects the errors of one chip type."""

    def __init__(self, raw: Mapping[str, Any], index: int) -> None:
        self.raw = raw
        self.path = f"vnpus[{index}]"
        word, chip = raw.get("commonWord"), raw.get("chipName")
        self.label = (
            word
            if isinstance(word, str) and word.strip()
            else chip
            if isinstance(chip, str) and chip.strip()
            else self.path
        )
        self.errors: list[Issue] = []

    def error(self, key: str, message: Message, template: str | None = None) -> None:
        said = (
            N_("%(chip_type)s: %(problem)s", chip_type=self.label, problem=message)
            if template is None
            else N_(
                "%(chip_type)s template %(template)s: %(problem)s",
                chip_type=self.label,
                template=template,
                problem=message,
            )
        )
        self.errors.append(Issue(f"{self.path}.{key}", said, self.label, template))

    def check(self) -> list[Issue]:
        self._check_strings()
        self._check_numbers()
        self._check_extras()
        templates = self.raw.get("templates")
        if templates is not None and not isinstance(templates, list):
            self.error(
                "templates",
                N_(
                    "templates must be a list, not %(value)s", value=describe(templates)
                ),
            )
        elif templates:
            self._check_templates(templates)
        return self.errors

    def _check_strings(self) -> None:
        for key in (*_REQUIRED_STRINGS, "resourceCoreName"):
            value = self.raw.get(key)
            problem = _string_problem(value, required=key in _REQUIRED_STRINGS)
            if problem is not None:
                self.error(key, _keyed(key, problem))
            elif not isinstance(value, str):
                continue  # an optional key that is absent
            elif key == "commonWord" and (
                len(value) > _MAX_COMMON_WORD or not _ANNOTATION_NAME.match(value)
            ):
                self.error(
                    key,
                    N_(
                        "commonWord %(value)r must be at most %(most)d letters, "
                        "digits, '-', '_' or '.', starting and ending with a letter "
                        "or digit (it is part of annotation keys)",
                        value=value,
                        most=_MAX_COMMON_WORD,
                    ),
                )
            elif key in _RESOURCE_KEYS:
                name = value.rsplit("/", 1)[-1]
                if not _RESOURCE_NAME.match(value) or len(name) > _MAX_NAME:
                    self.error(
                        key,
                        N_(
                            "%(key)s %(value)r is not a valid resource name "
                            "(like huawei.com/Ascend310P)",
                            key=key,
                            value=value,
                        ),
                    )

    def _check_numbers(self) -> None:
        for key in ("memoryAllocatable", "memoryCapacity"):
            problem = _int_problem(self.raw.get(key), required=True, minimum=1)
            if problem is not None:
                self.error(key, _keyed(key, problem))
        for key in ("aiCore", "aiCPU"):
            problem = _int_problem(self.raw.get(key), required=False, minimum=0)
            if problem is not None:
                self.error(key, _keyed(key, problem))
        allocatable = _valid_int(self.raw.get("memoryAllocatable"))
        capacity = _valid_int(self.raw.get("memoryCapacity"))
        if allocatable is not None and capacity is not None and allocatable > capacity:
            self.error(
                "memoryAllocatable",
                N_(
                    "memoryAllocatable %(allocatable)d MB is more than "
                    "memoryCapacity %(capacity)d MB",
                    allocatable=allocatable,
                    capacity=capacity,
                ),
            )

    def _check_extras(self) -> None:
        for key, kind in _EXTRA_TYPES.items():
            value = self.raw.get(key)
            if value is None:
                continue
            if kind is int:
                problem = _int_problem(value, required=False, minimum=0)
            elif not isinstance(value, kind):
                problem = (
                    N_("must be true or false, not %(value)s", value=describe(value))
                    if kind is bool
                    else N_("must be a string, not %(value)s", value=describe(value))
                )
            else:
                problem = None
            if problem is not None:
                self.error(key, _keyed(key, problem))

    def _check_templates(self, templates: list[Any]) -> None:
        family = chip_family(self.raw.get("chipName"), self.raw.get("commonWord"))
        allowed = allowed_template_names(family)
        seen: set[str] = set()
        for position, template in enumerate(templates):
            key = f"templates[{position}]"
            if not isinstance(template, Mapping):
                self.error(
                    key,
                    N_("must be a mapping, not %(value)s", value=describe(template)),
                    key,
                )
                continue
            name = template.get("name")
            problem = _string_problem(name, required=True)
            label = name if isinstance(name, str) and problem is None else key
            if problem is not None:
                self.error(f"{key}.name", _keyed("name", problem), label)
            elif name in seen:
                self.error(
                    f"{key}.name",
                    N_("name %(name)s is used by another template", name=name),
                    label,
                )
            elif name not in allowed:
                allowed_names = ", ".join(sorted(allowed))
                self.error(
                    f"{key}.name",
                    N_(
                        "%(name)s is not a template name the %(family)s family "
                        "accepts (allowed: %(allowed)s)",
                        name=name,
                        family=str(family),
                        allowed=allowed_names,
                    )
                    if family is not None and name in RUNTIME_TEMPLATES
                    else N_(
                        "%(name)s is not a template name ascend-docker-runtime "
                        "accepts (allowed: %(allowed)s)",
                        name=name,
                        allowed=allowed_names,
                    ),
                    label,
                )
            if isinstance(name, str):
                seen.add(name)
            self._check_template_numbers(template, key, label)

    def _check_template_numbers(
        self, template: Mapping[str, Any], key: str, label: str
    ) -> None:
        memory = template.get("memory")
        problem = _int_problem(memory, required=True, minimum=1)
        allocatable = _valid_int(self.raw.get("memoryAllocatable"))
        if problem is not None:
            self.error(f"{key}.memory", _keyed("memory", problem), label)
        elif (
            isinstance(memory, int) and allocatable is not None and memory > allocatable
        ):
            self.error(
                f"{key}.memory",
                N_(
                    "memory %(memory)d MB is more than memoryAllocatable "
                    "%(allocatable)d MB",
                    memory=memory,
                    allocatable=allocatable,
                ),
                label,
            )
        for resource in ("aiCore", "aiCPU"):
            value = template.get(resource)
            problem = _int_problem(value, required=False, minimum=0)
            chip_value = _valid_int(self.raw.get(resource))
            if problem is not None:
                self.error(f"{key}.{resource}", _keyed(resource, problem), label)
            elif (
                isinstance(value, int) and chip_value is not None and value > chip_value
            ):
                self.error(
                    f"{key}.{resource}",
                    N_(
                        "%(key)s %(value)d is more than the chip's %(key)s %(chip)d",
                        key=resource,
                        value=value,
                        chip=chip_value,
                    ),
                    label,
                )


def _uniqueness_errors(raw_configs: Sequence[Any]) -> list[Issue]:
    errors: list[Issue] = []
    owners: dict[tuple[str, Any], tuple[str, str]] = {}  # (kind, value) -> (label, key)
    for index, raw in enumerate(raw_configs):
        if not isinstance(raw, Mapping):
            continue
        checker = _ChipChecker(raw, index)
        for key in ("commonWord", "chipName", *_RESOURCE_KEYS):
            value = raw.get(key)
            if not isinstance(value, str) or not value:
                continue
            # Resource names share one namespace whatever their role.
            kind = "resource" if key in _RESOURCE_KEYS else key
            owner = owners.get((kind, value))
            if owner is None:
                owners[(kind, value)] = (checker.label, key)
                continue
            checker.error(
                key,
                N_(
                    "%(key)s %(value)s is already %(owner)s's %(owner_key)s; the "
                    "device plugin only uses the first entry for a chip",
                    key=key,
                    value=value,
                    owner=owner[0],
                    owner_key=owner[1],
                )
                if key == "chipName"
                else N_(
                    "%(key)s %(value)s is already %(owner)s's %(owner_key)s",
                    key=key,
                    value=value,
                    owner=owner[0],
                    owner_key=owner[1],
                ),
            )
        errors += checker.errors
    return errors


def _previous_slots(previous: Sequence[Any] | None) -> dict[str, int]:
    found: dict[str, int] = {}
    for raw in previous or ():
        if not isinstance(raw, Mapping) or not isinstance(raw.get("commonWord"), str):
            continue
        allocatable = _valid_int(raw.get("memoryAllocatable"))
        templates = raw.get("templates") or []
        if allocatable is None or not isinstance(templates, list):
            continue
        try:
            found[raw["commonWord"]] = slots_per_chip(
                allocatable, [t for t in templates if isinstance(t, Mapping)]
            )
        except ValueError:
            continue  # the previous config was broken; nothing to compare with
    return found


def validate_configs(
    raw_configs: Sequence[Mapping[str, Any]],
    *,
    previous: Sequence[Mapping[str, Any]] | None = None,
) -> ValidationReport:
    """Check chip types (plain values, as in ``DeviceConfigDocument.raw_configs``).

    Args:
        raw_configs: The chip types to check.
        previous: The chip types currently deployed, to warn about what the
            change does (slice counts, renamed or removed commonWords).

    Returns:
        Errors (each naming chip type, template and field) and warnings.
        Warnings about a chip type are only computed when it has no error.
    """
    errors: list[Issue] = []
    warnings: list[Issue] = []
    before = _previous_slots(previous)
    for index, raw in enumerate(raw_configs):
        if not isinstance(raw, Mapping):
            path = f"vnpus[{index}]"
            errors.append(
                Issue(
                    path,
                    N_("%(path)s: must be a mapping (a chip type)", path=path),
                    path,
                )
            )
            continue
        found = _ChipChecker(raw, index).check()
        errors += found
        if not found:
            chip = chip_type_from_raw(raw, index)
            warnings += chip_warnings(chip, index, before.get(chip.common_word))
    errors += _uniqueness_errors(raw_configs)
    if not raw_configs:
        # Valid for HAMi, but it then knows no Ascend chip type: the plugin
        # registers no vNPU and every vNPU pod stays Pending.
        warnings.append(
            Issue(
                "vnpus",
                N_(
                    "vnpus is empty: HAMi will know no Ascend chip type, so no vNPU "
                    "is registered and every vNPU pod stays Pending"
                ),
                None,
                None,
                "warning",
            )
        )
    if previous is not None:
        warnings += change_warnings(raw_configs, previous)
    return ValidationReport(errors=tuple(errors), warnings=tuple(warnings))
