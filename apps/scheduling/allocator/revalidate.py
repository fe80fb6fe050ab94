"""Does a pending preemption proposal still work? (pure)

A proposal waits for an admin, who may be reading it. The allocator plans
afresh on every pass, and on a busy cluster its best plan moves (a pod ends on
another chip, a new one starts): replacing the proposal each time answered the
admin's Approve with 409 "superseded" and piled up rows. So a proposal stays
while it still works, even when another plan would now be better, and is
replaced only for a reason the admin can read.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from .fit import Resources, fits
from .types import Chip, RunningSlice, SliceShape


def proposal_problem(
    chip: Chip | None,
    running: Iterable[RunningSlice],
    victims: Collection[tuple[str, str]],
    shape: SliceShape,
) -> str | None:
    """Why evicting ``victims`` from ``chip`` no longer places ``shape``; None if it still does.

    Args:
        chip: The proposal's chip as it is now (None: gone from the cluster).
        running: The slices running now (any chip; those of other chips are ignored).
        victims: The proposal's victim pods, as (namespace, pod).
        shape: What the request books.

    Returns:
        A reason for a person, or None when the plan still works: the chip is
        eligible, every victim still runs on it, and once they are gone the
        shape fits in slot, memory, AICore and AICPU.
    """
    if chip is None:
        return "its chip is gone from the cluster"
    if not chip.healthy:
        return f"chip {chip.id} became unhealthy"
    if chip.cordoned:
        return f"chip {chip.id} was cordoned"
    on_chip = [s for s in running if s.chip_id == chip.id]
    present = {(s.namespace, s.pod) for s in on_chip}
    gone = sorted(set(victims) - present)
    if gone:
        names = ", ".join(f"{ns}/{pod}" for ns, pod in gone)
        return f"victim {names} no longer runs on the chip"
    freed = [s for s in on_chip if (s.namespace, s.pod) in victims]
    protected = sorted(f"{s.namespace}/{s.pod}" for s in freed if not s.preemptable)
    if protected:
        return f'victim {", ".join(protected)} is now marked volcano.sh/preemptable: "false"'
    used = Resources(
        max(0, chip.memory_used - sum(s.memory for s in freed)),
        max(0, chip.slots_used - len(freed)),
        max(0, chip.ai_core_used - sum(s.ai_core for s in freed)),
        max(0, chip.ai_cpu_used - sum(s.ai_cpu for s in freed)),
    )
    total = Resources(chip.memory, chip.slots, chip.ai_core, chip.ai_cpu)
    if not fits(total, used, shape):
        return (
            "evicting its victims no longer frees enough room (another slice took it)"
        )
    return None
