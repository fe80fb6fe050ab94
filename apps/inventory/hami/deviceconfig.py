"""Read and rewrite HAMi's ``device-config.yaml`` (the ``vnpus`` section).

The file lives in ConfigMap ``hami-scheduler-device`` and is shared by the
HAMi scheduler, the Ascend device plugin and Volcano, which accept different
shapes of ``vnpus`` depending on their version (facts, section 0). The
portal therefore keeps the shape it found, every other vendor's section and
every key it does not manage, and the comments people wrote.

Field paths in errors use ``vnpus[i]`` for the i-th chip type whatever the
shape, so that an API can map them to the same form field.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq

from ._editor import ListSchema, sync_items
from ._yaml import (
    YamlLimitError,
    YamlSyntaxError,
    dump,
    line_of,
    load,
    new_yaml,
    strict_equal,
    to_plain,
)
from .gosort import go_sort_slice_order
from .messages import N_

__all__ = [
    "CHIP_TYPE_KEYS",
    "TEMPLATE_KEYS",
    "ChipTypeSpec",
    "DeviceConfigDocument",
    "DeviceConfigError",
    "DeviceConfigLimitError",
    "Shape",
    "TemplateSpec",
    "chip_type_from_raw",
    "config_to_raw",
    "parse_device_config",
    "render_device_config",
    "semantic_equal",
]

VNPUS = "vnpus"
HAMI_VNPU_CORE = "hamiVnpuCore"
CONFIGS = "configs"

#: Keys of a chip type (a ``vnpus`` entry) that the portal manages, in the
#: order the HAMi chart writes them. All other keys are kept as they are.
CHIP_TYPE_KEYS: tuple[str, ...] = (
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
)
#: Keys of a template that the portal manages.
TEMPLATE_KEYS: tuple[str, ...] = ("name", "memory", "aiCore", "aiCPU")

_SCHEMA = ListSchema(
    identity="commonWord",
    managed=CHIP_TYPE_KEYS,
    # Templates are published in the portal's order: the template rule breaks
    # ties between equal memories by file order, so the file must hold the
    # order the portal booked by (a re-added template would otherwise go
    # back to its old place in the base document).
    children={
        "templates": ListSchema(
            identity="name", managed=TEMPLATE_KEYS, wanted_order=True
        )
    },
)


class Shape(StrEnum):
    """The two YAML shapes of ``vnpus`` (facts, section 0)."""

    LIST = "list"  # `vnpus: [...]`: HAMi <= v2.8, device plugin <= v1.2
    WRAPPER = "wrapper"  # `vnpus: {hamiVnpuCore, configs}`: HAMi >= v2.9


class DeviceConfigError(ValueError):
    """The device config is not valid YAML or has the wrong structure.

    Attributes:
        field: Path of the offending value, e.g. ``"vnpus[1].templates"``;
            "" for the document as a whole.
        message: What is wrong, for a human.
        line: 1-based line in the YAML text, when known.
    """

    def __init__(self, field: str, message: str, *, line: int | None = None) -> None:
        said = N_("%(field)s: %(message)s", field=field, message=message)
        #: What ``str(exc)`` says: a ``Message`` (translated where it is shown).
        self.described = said if field else message
        super().__init__(self.described)
        self.field = field
        self.message = message
        self.line = line


class DeviceConfigLimitError(DeviceConfigError):
    """The text is beyond what the portal reads: too large, nested too deep,
    or aliases that expand too far (limits in ``_yaml``). HAMi may still read
    it; the portal refuses to, rather than exhaust memory or the stack."""


def _check_extra(extra: Mapping[str, Any], managed: tuple[str, ...]) -> None:
    clash = sorted(set(extra) & set(managed))
    if clash:
        raise ValueError(f"extra must not hold managed keys: {', '.join(clash)}")


@dataclass(frozen=True)
class TemplateSpec:
    """One vNPU template of a chip type.

    Attributes:
        name: Template name, as the ascend-docker-runtime knows it.
        memory: Memory booked by HAMi for one slice, in MB.
        ai_core: AICores of the slice (informational for HAMi).
        ai_cpu: AICPUs of the slice (informational for HAMi).
        extra: Other keys of the template, in file order.
    """

    name: str
    memory: int
    ai_core: int | None = None
    ai_cpu: int | None = None
    extra: Mapping[str, Any] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        _check_extra(self.extra, TEMPLATE_KEYS)


@dataclass(frozen=True)
class ChipTypeSpec:
    """One chip type: an entry of ``vnpus`` (a ``VNPUConfig`` in HAMi).

    Attributes:
        common_word: Name used in annotations and resource names.
        chip_name: Chip name as dcmi reports it (e.g. ``310P3``).
        resource_name: Extended resource counting slices.
        resource_memory_name: Resource carrying the memory request (MB).
        memory_allocatable: Memory HAMi hands out per chip, in MB.
        memory_capacity: Largest memory request accepted, in MB.
        ai_core: AICores per chip.
        ai_cpu: AICPUs per chip.
        resource_core_name: Resource for hami-core mode (HAMi >= v2.9).
        templates: The templates, in file order.
        extra: Other keys of the entry (memoryFactor, runtimeClassName,
            overwriteEnv, superPod, unknown keys), in file order.
    """

    common_word: str
    chip_name: str
    resource_name: str
    resource_memory_name: str
    memory_allocatable: int
    memory_capacity: int
    ai_core: int | None = None
    ai_cpu: int | None = None
    resource_core_name: str | None = None
    templates: tuple[TemplateSpec, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        # A list would silently break equality with parsed specs.
        object.__setattr__(self, "templates", tuple(self.templates))
        _check_extra(self.extra, CHIP_TYPE_KEYS)


@dataclass(frozen=True)
class DeviceConfigDocument:
    """A parsed ``device-config.yaml`` that can be re-rendered faithfully.

    Attributes:
        text: The YAML text it was parsed from.
        shape: The shape of ``vnpus``.
        hami_vnpu_core: ``vnpus.hamiVnpuCore`` (wrapper shape only; None if
            absent).
        raw_configs: The chip types as plain JSON-able values, exactly as in
            the file (no type coercion); this is what the validator checks.
    """

    text: str
    shape: Shape
    hami_vnpu_core: bool | None
    raw_configs: list[dict[str, Any]]

    def chip_types(self) -> list[ChipTypeSpec]:
        """Return the typed view of the chip types.

        Returns:
            One spec per entry, in file order.

        Raises:
            DeviceConfigError: A value has the wrong type or a required key
                is missing (run the validator first for friendlier errors).
        """
        return [
            chip_type_from_raw(raw, index) for index, raw in enumerate(self.raw_configs)
        ]


# --- reading -------------------------------------------------------------


def parse_device_config(text: str) -> DeviceConfigDocument:
    """Parse ``device-config.yaml``.

    A document without ``vnpus`` (only other vendors) is a list-shaped
    document with no chip types.

    Args:
        text: The YAML text (the ConfigMap's ``device-config.yaml`` value).

    Returns:
        The document.

    Raises:
        DeviceConfigLimitError: The text exceeds the reader's limits (size,
            nesting depth, alias expansion).
        DeviceConfigError: Invalid YAML, the document is not a mapping,
            ``vnpus`` is neither a list nor a ``{hamiVnpuCore, configs}``
            mapping, an entry or template is not a mapping, or templates is
            not a list.
    """
    try:
        root = load(new_yaml(text), text)
    except YamlLimitError as exc:
        raise DeviceConfigLimitError("", exc.message, line=exc.line) from exc
    except YamlSyntaxError as exc:
        raise DeviceConfigError("", exc.message, line=exc.line) from exc
    if not isinstance(root, CommentedMap):
        raise DeviceConfigError(
            "", N_("device-config.yaml must be a mapping of vendor sections")
        )
    shape, hami_vnpu_core, entries = _vnpus_section(root)
    for index, entry in enumerate(entries):
        _check_entry_structure(entry, index, entries)
    return DeviceConfigDocument(
        text=text,
        shape=shape,
        hami_vnpu_core=hami_vnpu_core,
        raw_configs=[to_plain(entry) for entry in entries],
    )


def _vnpus_section(root: CommentedMap) -> tuple[Shape, bool | None, list[Any]]:
    vnpus = root.get(VNPUS)
    if vnpus is None:
        return Shape.LIST, None, []
    if isinstance(vnpus, CommentedSeq):
        return Shape.LIST, None, list(vnpus)
    if not isinstance(vnpus, CommentedMap) or not (
        {HAMI_VNPU_CORE, CONFIGS} & set(vnpus)
    ):
        raise DeviceConfigError(
            VNPUS,
            N_(
                "must be a list of chip types or a mapping with hamiVnpuCore and "
                "configs"
            ),
            line=line_of(root),
        )
    # to_plain: a boolean read as yaml.v2 reads it (yes, On) is ruamel's ScalarBoolean.
    core = to_plain(vnpus.get(HAMI_VNPU_CORE))
    if core is not None and not isinstance(core, bool):
        raise DeviceConfigError(
            f"{VNPUS}.{HAMI_VNPU_CORE}",
            N_("must be true or false"),
            line=line_of(vnpus),
        )
    configs = vnpus.get(CONFIGS)
    if configs is None:
        return Shape.WRAPPER, core, []
    if not isinstance(configs, CommentedSeq):
        raise DeviceConfigError(
            f"{VNPUS}.{CONFIGS}",
            N_("must be a list of chip types"),
            line=line_of(vnpus),
        )
    return Shape.WRAPPER, core, list(configs)


def _check_entry_structure(entry: Any, index: int, entries: Sequence[Any]) -> None:
    path = f"{VNPUS}[{index}]"
    if not isinstance(entry, CommentedMap):
        line = line_of(entries[index - 1]) if index else None
        raise DeviceConfigError(path, N_("must be a mapping (a chip type)"), line=line)
    templates = entry.get("templates")
    if templates is None:
        return
    if not isinstance(templates, CommentedSeq):
        raise DeviceConfigError(
            f"{path}.templates", N_("must be a list"), line=line_of(entry)
        )
    for position, template in enumerate(templates):
        if not isinstance(template, CommentedMap):
            raise DeviceConfigError(
                f"{path}.templates[{position}]",
                N_("must be a mapping (a template)"),
                line=line_of(templates),
            )


# --- typed view ----------------------------------------------------------


def _required(raw: Mapping[str, Any], key: str, path: str) -> Any:
    if raw.get(key) is None:
        raise DeviceConfigError(f"{path}.{key}", N_("is required"))
    return raw[key]


def _as_str(value: Any, path: str) -> str:
    if not isinstance(value, str):
        raise DeviceConfigError(path, N_("must be a string, got %(got)r", got=value))
    return value


def _as_int(value: Any, path: str) -> int:
    # bool is an int in Python but not in Go's YAML decoder.
    if isinstance(value, bool) or not isinstance(value, int):
        raise DeviceConfigError(path, N_("must be an integer, got %(got)r", got=value))
    return value


def _optional_int(raw: Mapping[str, Any], key: str, path: str) -> int | None:
    value = raw.get(key)
    return None if value is None else _as_int(value, f"{path}.{key}")


def _template(raw: Any, path: str) -> TemplateSpec:
    if not isinstance(raw, Mapping):
        raise DeviceConfigError(path, N_("must be a mapping (a template)"))
    return TemplateSpec(
        name=_as_str(_required(raw, "name", path), f"{path}.name"),
        memory=_as_int(_required(raw, "memory", path), f"{path}.memory"),
        ai_core=_optional_int(raw, "aiCore", path),
        ai_cpu=_optional_int(raw, "aiCPU", path),
        extra={k: v for k, v in raw.items() if k not in TEMPLATE_KEYS},
    )


def chip_type_from_raw(raw: Mapping[str, Any], index: int = 0) -> ChipTypeSpec:
    """Build the typed view of one chip type from its plain values.

    Args:
        raw: One entry of ``raw_configs`` (or of :func:`config_to_raw`).
        index: Its position in ``vnpus``, for error paths.

    Returns:
        The chip type.

    Raises:
        DeviceConfigError: A required key is missing or a value has the
            wrong type.
    """
    path = f"{VNPUS}[{index}]"
    if not isinstance(raw, Mapping):
        raise DeviceConfigError(path, N_("must be a mapping (a chip type)"))

    def text(key: str) -> str:
        return _as_str(_required(raw, key, path), f"{path}.{key}")

    def number(key: str) -> int:
        return _as_int(_required(raw, key, path), f"{path}.{key}")

    templates = raw.get("templates") or []
    if not isinstance(templates, list):
        raise DeviceConfigError(f"{path}.templates", N_("must be a list"))
    core_name = raw.get("resourceCoreName")
    return ChipTypeSpec(
        common_word=text("commonWord"),
        chip_name=text("chipName"),
        resource_name=text("resourceName"),
        resource_memory_name=text("resourceMemoryName"),
        memory_allocatable=number("memoryAllocatable"),
        memory_capacity=number("memoryCapacity"),
        ai_core=_optional_int(raw, "aiCore", path),
        ai_cpu=_optional_int(raw, "aiCPU", path),
        resource_core_name=(
            None
            if core_name is None
            else _as_str(core_name, f"{path}.resourceCoreName")
        ),
        templates=tuple(
            _template(item, f"{path}.templates[{position}]")
            for position, item in enumerate(templates)
        ),
        extra={k: v for k, v in raw.items() if k not in CHIP_TYPE_KEYS},
    )


def config_to_raw(chip_types: Sequence[ChipTypeSpec]) -> list[dict[str, Any]]:
    """Convert chip types to plain dicts with the file's camelCase keys.

    Optional keys that are None, and ``templates`` when there are none, are
    left out, as HAMi's chart does.

    Args:
        chip_types: The chip types.

    Returns:
        One dict per chip type, keys in the chart's order, extras last.
    """
    return [_chip_type_to_raw(chip) for chip in chip_types]


def _template_to_raw(template: TemplateSpec) -> dict[str, Any]:
    raw: dict[str, Any] = {"name": template.name, "memory": template.memory}
    if template.ai_core is not None:
        raw["aiCore"] = template.ai_core
    if template.ai_cpu is not None:
        raw["aiCPU"] = template.ai_cpu
    raw.update(template.extra)
    return raw


def _chip_type_to_raw(chip: ChipTypeSpec) -> dict[str, Any]:
    raw: dict[str, Any] = {
        "chipName": chip.chip_name,
        "commonWord": chip.common_word,
        "resourceName": chip.resource_name,
        "resourceMemoryName": chip.resource_memory_name,
    }
    if chip.resource_core_name is not None:
        raw["resourceCoreName"] = chip.resource_core_name
    raw["memoryAllocatable"] = chip.memory_allocatable
    raw["memoryCapacity"] = chip.memory_capacity
    if chip.ai_core is not None:
        raw["aiCore"] = chip.ai_core
    if chip.ai_cpu is not None:
        raw["aiCPU"] = chip.ai_cpu
    if chip.templates:
        raw["templates"] = [_template_to_raw(t) for t in chip.templates]
    raw.update(chip.extra)
    return raw


# --- writing -------------------------------------------------------------


def render_device_config(
    document: DeviceConfigDocument,
    chip_types: Sequence[ChipTypeSpec] | None = None,
    *,
    hami_vnpu_core: bool | None = None,
) -> str:
    """Re-emit the document, optionally with new chip types.

    Chip types are matched to the existing entries by ``commonWord`` and
    templates by ``name``. A matched chip type keeps its position; templates
    take the order given (the template rule breaks ties by it). Matched entries
    keep their comments and unmanaged keys; managed keys are updated (optional ones set to None are
    deleted) and ``extra`` keys are set; one absent from ``extra`` is kept,
    and one set to None is deleted (the editor's removal). New chip types are
    appended; entries absent from ``chip_types`` are removed. The shape,
    every other top-level key and the wrapper's other keys are kept.

    Args:
        document: The parsed document.
        chip_types: The wanted chip types; None keeps the entries as they are.
        hami_vnpu_core: New ``vnpus.hamiVnpuCore`` (wrapper shape only); None
            keeps it.

    Returns:
        The YAML text. With nothing to change it is the original text.

    Raises:
        DeviceConfigError: Duplicate commonWords or template names, or
            ``hami_vnpu_core`` given for a list-shaped document.
    """
    if chip_types is None and hami_vnpu_core is None:
        return document.text
    yaml = new_yaml(document.text)
    root = load(yaml, document.text)
    if hami_vnpu_core is not None:
        _set_hami_vnpu_core(root, document.shape, hami_vnpu_core)
    if chip_types is not None:
        wanted = _unique_raw(chip_types)
        if document.shape is Shape.WRAPPER:
            sync_items(root[VNPUS], CONFIGS, wanted, _SCHEMA)
        elif wanted or isinstance(root.get(VNPUS), CommentedSeq):
            sync_items(root, VNPUS, wanted, _SCHEMA)
    return dump(yaml, root)


def _set_hami_vnpu_core(root: CommentedMap, shape: Shape, value: bool) -> None:
    if shape is not Shape.WRAPPER:
        raise DeviceConfigError(
            f"{VNPUS}.{HAMI_VNPU_CORE}",
            N_("only the wrapper shape of vnpus (HAMi >= v2.9) has hamiVnpuCore"),
        )
    wrapper = root[VNPUS]
    if HAMI_VNPU_CORE not in wrapper:
        wrapper.insert(0, HAMI_VNPU_CORE, value)
    elif wrapper[HAMI_VNPU_CORE] is not value:
        wrapper[HAMI_VNPU_CORE] = value


def _unique_raw(chip_types: Sequence[ChipTypeSpec]) -> list[dict[str, Any]]:
    seen: set[str] = set()
    for index, chip in enumerate(chip_types):
        if chip.common_word in seen:
            raise DeviceConfigError(
                f"{VNPUS}[{index}].commonWord",
                N_("duplicate commonWord %(word)s", word=chip.common_word),
            )
        seen.add(chip.common_word)
        names: set[str] = set()
        for position, template in enumerate(chip.templates):
            if template.name in names:
                raise DeviceConfigError(
                    f"{VNPUS}[{index}].templates[{position}].name",
                    N_(
                        "%(chip_type)s: duplicate template name %(template)s",
                        chip_type=chip.common_word,
                        template=template.name,
                    ),
                )
            names.add(template.name)
    return config_to_raw(chip_types)


# --- comparing -----------------------------------------------------------


def _rule_order(templates: list[Any], memories: list[int]) -> list[Any]:
    """Raw template items in the order the template rule tries them."""
    return [templates[i] for i in go_sort_slice_order(memories)]


def _template_sort_key(item: Any) -> tuple[str, str]:
    name = item.get("name") if isinstance(item, dict) else None
    return str(name), repr(item)


def _canonical(text: str) -> Any:
    try:
        data = to_plain(load(new_yaml(text), text))
    except YamlLimitError as exc:
        raise DeviceConfigLimitError("", exc.message, line=exc.line) from exc
    except YamlSyntaxError as exc:
        raise DeviceConfigError("", exc.message, line=exc.line) from exc
    vnpus = data.get(VNPUS) if isinstance(data, dict) else None
    entries = vnpus.get(CONFIGS) if isinstance(vnpus, dict) else vnpus
    for entry in entries if isinstance(entries, list) else []:
        templates = entry.get("templates") if isinstance(entry, dict) else None
        if isinstance(templates, list):
            # HAMi sorts templates by memory on load, so file order matters
            # only between equal memories (or beyond 12 templates): compare
            # them in the order the template rule sees them.
            memories = [
                t.get("memory") if isinstance(t, dict) else None for t in templates
            ]
            whole = [
                m for m in memories if isinstance(m, int) and not isinstance(m, bool)
            ]
            if len(whole) == len(memories):
                templates[:] = _rule_order(templates, whole)
            else:
                templates.sort(key=_template_sort_key)
    return data


def semantic_equal(text_a: str, text_b: str) -> bool:
    """Tell whether two device configs mean the same.

    Comments, formatting, key order and template order are ignored; the
    ``vnpus`` shape, entry order, types and values are not.

    Args:
        text_a: A YAML text.
        text_b: Another YAML text.

    Returns:
        True if both hold the same data.

    Raises:
        DeviceConfigError: One of the texts is not valid YAML.
    """
    return strict_equal(_canonical(text_a), _canonical(text_b))
