"""What Huawei's software accepts as vNPU templates, per chip family.

HAMi itself never checks template names: a wrong one is only rejected when
a container starts and ascend-docker-runtime tries to create the vNPU
(facts, sections 1, 3 and 5). The data below comes from Ascend/mind-cluster:
the runtime's whitelist (``extractVpuParam``), ``templateNameLists`` per
family, and the per-template resources of ``getJobTemplate``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType

__all__ = [
    "FAMILY_TEMPLATES",
    "RUNTIME_TEMPLATES",
    "ChipFamily",
    "HardwareTemplate",
    "allowed_template_names",
    "chip_family",
    "hardware_template",
    "max_vnpus_per_chip",
    "model_template_names",
    "template_memory_from_name",
]

#: Names ascend-docker-runtime's ``extractVpuParam`` accepts; any other name
#: fails the container start with "cannot parse param".
RUNTIME_TEMPLATES: frozenset[str] = frozenset(
    {
        "vir01",
        "vir02",
        "vir04",
        "vir08",
        "vir16",
        "vir02_1c",
        "vir03_1c_8g",
        "vir04_3c",
        "vir04_4c_dvpp",
        "vir04_3c_ndvpp",
        "vir05_1c_8g",
        "vir05_1c_16g",
        "vir06_1c_16g",
        "vir10_3c_16g",
        "vir10_3c_16g_nm",
        "vir10_3c_32g",
        "vir10_4c_16g_m",
        "vir12_3c_32g",
    }
)


class ChipFamily(StrEnum):
    """Chip families of MindCluster's ``templateNameLists``."""

    ASCEND_310P = "310P"
    ASCEND_910A = "910A"
    ASCEND_910B = "910B"
    ASCEND_910A3 = "910A3"


#: MindCluster's ``templateNameLists``: the valid names per family.
FAMILY_TEMPLATES: Mapping[ChipFamily, frozenset[str]] = MappingProxyType(
    {
        ChipFamily.ASCEND_310P: frozenset(
            {
                "vir04",
                "vir02",
                "vir01",
                "vir04_3c",
                "vir02_1c",
                "vir04_4c_dvpp",
                "vir04_3c_ndvpp",
            }
        ),
        ChipFamily.ASCEND_910A: frozenset(
            {"vir16", "vir08", "vir04", "vir02", "vir01"}
        ),
        ChipFamily.ASCEND_910B: frozenset(
            {
                "vir03_1c_8g",
                "vir05_1c_8g",
                "vir05_1c_16g",
                "vir06_1c_16g",
                "vir10_3c_16g",
                "vir10_3c_16g_nm",
                "vir10_3c_32g",
                "vir10_4c_16g_m",
                "vir12_3c_32g",
            }
        ),
        ChipFamily.ASCEND_910A3: frozenset(
            {"vir12_3c_32g", "vir06_1c_16g", "vir05_1c_16g", "vir10_3c_32g"}
        ),
    }
)

# Names as dcmi reports them (chipName) or as HAMi's commonWord spells them,
# without the "Ascend" prefix. A bare "910B" is left out on purpose: HAMi
# v2.5 used chipName 910B for a first-generation 910 (commonWord Ascend910A).
_FAMILY_NAMES: Mapping[ChipFamily, frozenset[str]] = MappingProxyType(
    {
        ChipFamily.ASCEND_910A: frozenset({"910A"}),
        ChipFamily.ASCEND_910B: frozenset(
            {"910B1", "910B2", "910B2C", "910B3", "910B4", "910B4-1"}
        ),
        ChipFamily.ASCEND_910A3: frozenset({"910", "910C", "910A3"}),
    }
)

# MindCluster's per-model template sets inside the 910B family (the
# getJobTemplate table); another 910B name may be refused by that chip.
_MODEL_TEMPLATES: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        **dict.fromkeys(
            ("910B1", "910B2", "910B2C"),
            frozenset({"vir03_1c_8g", "vir06_1c_16g", "vir12_3c_32g"}),
        ),
        **dict.fromkeys(
            ("910B3", "910B4-1"), frozenset({"vir05_1c_16g", "vir10_3c_32g"})
        ),
        "910B4": frozenset(
            {"vir05_1c_8g", "vir10_3c_16g", "vir10_3c_16g_nm", "vir10_4c_16g_m"}
        ),
    }
)


@dataclass(frozen=True)
class HardwareTemplate:
    """AICore and AICPU of a template as the hardware creates it."""

    ai_core: int
    ai_cpu: int


# MindCluster getJobTemplate (facts, section 5). The 910B/A3 names encode
# their resources (vir<AICore>_<AICPU>c_<GB>g), so they need no table.
_HARDWARE: Mapping[ChipFamily, Mapping[str, HardwareTemplate]] = MappingProxyType(
    {
        ChipFamily.ASCEND_310P: {
            "vir01": HardwareTemplate(1, 1),
            "vir02": HardwareTemplate(2, 2),
            "vir02_1c": HardwareTemplate(2, 1),
            "vir04": HardwareTemplate(4, 4),
            "vir04_3c": HardwareTemplate(4, 3),
            "vir04_3c_ndvpp": HardwareTemplate(4, 3),
            "vir04_4c_dvpp": HardwareTemplate(4, 4),
        },
        ChipFamily.ASCEND_910A: {
            "vir02": HardwareTemplate(2, 1),
            "vir04": HardwareTemplate(4, 1),
            "vir08": HardwareTemplate(8, 3),
            "vir16": HardwareTemplate(16, 7),
        },
    }
)

_ENCODED_NAME = re.compile(
    r"^vir(?P<core>\d+)_(?P<cpu>\d+)c(?:_(?P<gb>\d+)g)?(?:_\w+)?$"
)

# vnpu_id windows of npu-smi: 8 per chip on inference, 16 on training chips.
_MAX_VNPUS_INFERENCE = 8
_MAX_VNPUS_TRAINING = 16


def _normalise(name: str) -> str:
    upper = name.strip().upper()
    return upper.removeprefix("ASCEND")


def chip_family(chip_name: object, common_word: object = None) -> ChipFamily | None:
    """Find the chip family from ``chipName``, falling back to ``commonWord``.

    Args:
        chip_name: The entry's chipName (any value; non-strings are ignored).
        common_word: The entry's commonWord.

    Returns:
        The family, or None if neither name is known.
    """
    for candidate in (chip_name, common_word):
        if not isinstance(candidate, str):
            continue
        name = _normalise(candidate)
        if name.startswith("310P"):
            return ChipFamily.ASCEND_310P
        for family, names in _FAMILY_NAMES.items():
            if name in names:
                return family
    return None


def allowed_template_names(family: ChipFamily | None) -> frozenset[str]:
    """Return the template names both the runtime and the family accept.

    Args:
        family: The chip family; None for an unknown chip.

    Returns:
        The runtime whitelist, narrowed to the family's list when known.
    """
    if family is None:
        return RUNTIME_TEMPLATES
    return RUNTIME_TEMPLATES & FAMILY_TEMPLATES[family]


def model_template_names(chip_name: object) -> frozenset[str] | None:
    """Return MindCluster's templates for one 910B model, if it has a list.

    Args:
        chip_name: The entry's chipName, e.g. ``910B2``.

    Returns:
        The names, or None when there is no per-model list.
    """
    if not isinstance(chip_name, str):
        return None
    return _MODEL_TEMPLATES.get(_normalise(chip_name))


def hardware_template(family: ChipFamily | None, name: str) -> HardwareTemplate | None:
    """Return the AICore/AICPU the hardware gives a template, if known.

    Args:
        family: The chip family.
        name: The template name.

    Returns:
        The resources, or None when unknown.
    """
    match = _ENCODED_NAME.match(name)
    if match is not None:
        return HardwareTemplate(int(match["core"]), int(match["cpu"]))
    if family is None:
        return None
    return _HARDWARE.get(family, {}).get(name)


def template_memory_from_name(name: str) -> int | None:
    """Return the memory a template name promises (``_8g`` → 8192 MB).

    Args:
        name: The template name.

    Returns:
        MB, or None when the name carries no memory (310P and 910A names).
    """
    match = _ENCODED_NAME.match(name)
    if match is None or match["gb"] is None:
        return None
    return int(match["gb"]) * 1024


def max_vnpus_per_chip(family: ChipFamily | None) -> int | None:
    """Return how many vNPUs npu-smi can create on one chip.

    Args:
        family: The chip family.

    Returns:
        8 for 310P (inference), 16 for training chips, None if unknown.
    """
    if family is None:
        return None
    if family is ChipFamily.ASCEND_310P:
        return _MAX_VNPUS_INFERENCE
    return _MAX_VNPUS_TRAINING
