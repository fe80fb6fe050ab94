"""Snapshot validation at the entry of ``allocate``.

Problems with the snapshot (chips, rules, running slices, quotas, duplicate ids)
raise ``InvalidSnapshot``. A request that merely asks for something impossible
is not a snapshot problem: ``allocate`` answers it with a Waiting entry.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping, Sequence

from .errors import InvalidSnapshot, SnapshotProblem
from .types import Chip, ChipTypeRules, QueueQuota, Request, RunningSlice


def _non_negative(kind: str, subject: str, values: Mapping[str, int | None]) -> None:
    for field, value in values.items():
        if value is not None and value < 0:
            raise InvalidSnapshot(SnapshotProblem.NEGATIVE_VALUE, kind, subject, field)


def _finite(kind: str, subject: str, field: str, value: float) -> None:
    if not math.isfinite(value):
        raise InvalidSnapshot(SnapshotProblem.NOT_FINITE, kind, subject, field)


def _unique(kind: str, ids: Iterable[Hashable]) -> None:
    ids = list(ids)
    if len(set(ids)) == len(ids):
        return  # the common case; the loop below finds the first duplicate
    seen: set[Hashable] = set()
    for item in ids:
        if item in seen:
            subject = "/".join(item) if isinstance(item, tuple) else str(item)
            raise InvalidSnapshot(SnapshotProblem.DUPLICATE_ID, kind, subject)
        seen.add(item)


def validate_rules(rules: Sequence[ChipTypeRules]) -> None:
    """Check the chip-type rules.

    Args:
        rules: The chip types.

    Raises:
        InvalidSnapshot: A duplicate common word or template name, or a
            negative number.
    """
    _unique("rules", (r.common_word for r in rules))
    for r in rules:
        _non_negative(
            "rules",
            r.common_word,
            {
                "memory_allocatable": r.memory_allocatable,
                "memory_capacity": r.memory_capacity,
                "ai_core": r.ai_core,
                "ai_cpu": r.ai_cpu,
            },
        )
        _unique(f"template of {r.common_word}", (t.name for t in r.templates))
        for t in r.templates:
            _non_negative(
                "template",
                f"{r.common_word}/{t.name}",
                {"memory": t.memory, "ai_core": t.ai_core, "ai_cpu": t.ai_cpu},
            )


def validate_chips(chips: Sequence[Chip], known_words: Iterable[str]) -> None:
    """Check the chips.

    Args:
        chips: The chips.
        known_words: The common words that have rules.

    Raises:
        InvalidSnapshot: A duplicate id, an unknown common word, a negative
            number or a chip without memory.
    """
    words = set(known_words)
    _unique("chip", (c.id for c in chips))
    for c in chips:
        if c.common_word not in words:
            raise InvalidSnapshot(
                SnapshotProblem.UNKNOWN_COMMON_WORD, "chip", c.id, "common_word"
            )
        if c.memory <= 0:
            raise InvalidSnapshot(SnapshotProblem.NOT_POSITIVE, "chip", c.id, "memory")
        if (
            c.slots >= 0
            and c.ai_core >= 0
            and c.ai_cpu >= 0
            and c.memory_used >= 0
            and c.slots_used >= 0
            and c.ai_core_used >= 0
            and c.ai_cpu_used >= 0
        ):
            continue  # the common case, without building the field table
        _non_negative(
            "chip",
            c.id,
            {
                "slots": c.slots,
                "ai_core": c.ai_core,
                "ai_cpu": c.ai_cpu,
                "memory_used": c.memory_used,
                "slots_used": c.slots_used,
                "ai_core_used": c.ai_core_used,
                "ai_cpu_used": c.ai_cpu_used,
            },
        )


def validate_running(
    running: Sequence[RunningSlice], chips: Mapping[str, Chip]
) -> None:
    """Check the running slices against the chips they run on.

    Args:
        running: The running slices.
        chips: The chips by id.

    Raises:
        InvalidSnapshot: A duplicate id, an unknown chip, a negative number, a
            time that is not finite, or slices that use more of a chip than the
            chip reports in use (the preemption arithmetic would go negative).
    """
    _unique("running", (s.id for s in running))
    totals: dict[str, list[int]] = {}
    for s in running:
        if s.chip_id not in chips:
            raise InvalidSnapshot(
                SnapshotProblem.UNKNOWN_CHIP, "running", s.id, "chip_id"
            )
        if s.memory < 0 or s.ai_core < 0 or s.ai_cpu < 0:
            _non_negative(
                "running",
                s.id,
                {"memory": s.memory, "ai_core": s.ai_core, "ai_cpu": s.ai_cpu},
            )
        if not math.isfinite(s.started_at_s):
            _finite("running", s.id, "started_at_s", s.started_at_s)
        t = totals.get(s.chip_id)
        if t is None:
            totals[s.chip_id] = [s.memory, 1, s.ai_core, s.ai_cpu]
        else:
            t[0] += s.memory
            t[1] += 1
            t[2] += s.ai_core
            t[3] += s.ai_cpu
    for chip_id, (memory, slots, ai_core, ai_cpu) in totals.items():
        c = chips[chip_id]
        if (
            memory <= c.memory_used
            and slots <= c.slots_used
            and ai_core <= c.ai_core_used
            and ai_cpu <= c.ai_cpu_used
        ):
            continue  # the common case, without building the field table
        used = {
            "memory_used": (memory, c.memory_used),
            "slots_used": (slots, c.slots_used),
            "ai_core_used": (ai_core, c.ai_core_used),
            "ai_cpu_used": (ai_cpu, c.ai_cpu_used),
        }
        for field, (in_slices, reported) in used.items():
            if in_slices > reported:
                raise InvalidSnapshot(
                    SnapshotProblem.RUNNING_EXCEEDS_USAGE, "chip", chip_id, field
                )


def validate_quotas(quotas: Sequence[QueueQuota]) -> None:
    """Check the queue quotas.

    Args:
        quotas: The quotas.

    Raises:
        InvalidSnapshot: Two quotas for the same queue and chip type, or a
            negative number.
    """
    _unique("quota", ((q.queue, q.common_word) for q in quotas))
    for q in quotas:
        _non_negative(
            "quota",
            f"{q.queue}/{q.common_word}",
            {
                "memory_limit": q.memory_limit,
                "slots_limit": q.slots_limit,
                "memory_used": q.memory_used,
                "slots_used": q.slots_used,
            },
        )


def validate_requests(requests: Sequence[Request], now_s: float | None) -> None:
    """Check the requests' ids and times (their content is judged later).

    Args:
        requests: The pending requests.
        now_s: The caller's "now", if given.

    Raises:
        InvalidSnapshot: A duplicate id or a time that is not finite.
    """
    _unique("request", (r.id for r in requests))
    for r in requests:
        _finite("request", r.id, "submitted_at_s", r.submitted_at_s)
    if now_s is not None:
        _finite("allocate", "now_s", "now_s", now_s)
