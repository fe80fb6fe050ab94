"""The guide's two chip types as the allocator sees them (HAMi chart
defaults), defined once for the allocator's tests and its benchmark
(``bench/allocator.py``)."""

from __future__ import annotations

from apps.scheduling.allocator import ChipTypeRules, TemplateShape

# HAMi chart defaults (facts file, section 1).
P310 = ChipTypeRules(
    common_word="Ascend310P",
    memory_allocatable=21527,
    memory_capacity=24576,
    ai_core=8,
    ai_cpu=7,
    templates=(
        TemplateShape("vir01", 3072, 1, 1),
        TemplateShape("vir02", 6144, 2, 2),
        TemplateShape("vir04", 12288, 4, 4),
    ),
)
B4 = ChipTypeRules(
    common_word="Ascend910B4",
    memory_allocatable=32768,
    memory_capacity=32768,
    ai_core=20,
    ai_cpu=7,
    templates=(
        TemplateShape("vir05_1c_8g", 8192, 5, 1),
        TemplateShape("vir10_3c_16g", 16384, 10, 3),
    ),
)
RULES = (P310, B4)
BY_WORD = {r.common_word: r for r in RULES}
SLOTS = {"Ascend310P": 7, "Ascend910B4": 4}  # memoryAllocatable // smallest template
