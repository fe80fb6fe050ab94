"""What a node can take under Volcano, which picks the chip itself.

The portal names the node of a pod (required node affinity) but Volcano's
deviceshare picks any fitting chip of it, at random (docs/scheduler-behaviour.md,
"Choosing the chip"). So per-chip bookings are not where the pods land: three
vir02 and a vir01 booked on one 310P chip may be bound as two vir02 on each of
two chips, and a vir04 booked on the second chip then fits nowhere on the
node; its pod waits out the bind timeout. What matters is the node's room
under every chip choice Volcano may make.

:func:`places_all` answers it exactly: the pods sent to a node and not bound
yet are all placed, in whatever order and onto whatever fitting chips Volcano
takes them, unless some of them can be put on the chips so that another
fits on none. Volcano's fit is a free slot and the memory, nothing else
(docs/scheduler-behaviour.md): it checks no health and no AICPU, and no AICore
either. Its ``ResourceReqs`` (``pkg/scheduler/api/devices/ascend/hami/
device_info.go``, every release up to v1.15.1) passes no core resource name,
so a template pod asks 0 cores and a chip's used cores stay 0: Volcano binds
pods whose AICore adds up to more than the chip has. Counting AICore here
would call nodes unsafe that Volcano fills, and send requests elsewhere for
nothing. A pod once bound stays where it is (the chips' free room is what the
bound pods leave).

:func:`allocate_for_volcano` runs ``allocate`` and keeps only placements that
keep their node safe; a request that would not is tried again without that
node, so it goes to another node now instead of waiting for this one.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from apps.inventory.hami.messages import N_

from .allocate import allocate
from .types import (
    AllocationResult,
    Chip,
    ChipTypeRules,
    Placement,
    Request,
    Waiting,
    WaitReason,
)

#: How many times ``allocate`` is run again with the unsafe nodes left out.
ROUNDS = 4

Load = tuple[int, ...]


@dataclass(frozen=True, slots=True)
class ChipRoom:
    """A chip's free room as Volcano counts it: what its bound pods leave."""

    slots: int
    memory: int


#: A pod as Volcano fits it: its memory (MB), the only size it compares.
PodSize = int


def places_all(chips: Sequence[ChipRoom], pods: Iterable[PodSize]) -> bool:
    """Tell whether Volcano places every pod whatever chips it picks.

    Args:
        chips: The node's chips of the pods' type (free room of each).
        pods: The memory (MB) of each pod sent to the node and not bound yet.

    Returns:
        True when no order and no choice of fitting chips leaves a pod with
        no chip that fits it.
    """
    sizes = Counter(pods)
    for size in sizes:
        others = sizes.copy()
        others[size] -= 1
        if _can_block(chips, others, size):
            return False
    return True


def _can_block(
    chips: Sequence[ChipRoom], others: Counter[PodSize], pod: PodSize
) -> bool:
    """Can some of ``others`` be placed so that no chip fits ``pod`` any more?

    Each chip needs a load that fits it and after which ``pod`` does not;
    only the smallest such loads matter (a subset of a load that fits, fits).
    Loads are counts per pod size; the chips are combined one at a time,
    keeping the smallest totals that do not use more pods than there are.
    """
    kinds = sorted(size for size, count in others.items() if count > 0)
    available = tuple(others[size] for size in kinds)
    frontier: set[Load] = {tuple(0 for _ in kinds)}
    for chip in chips:
        loads = _smallest_blocking_loads(chip, kinds, available, pod)
        totals = (_add(used, load) for used in frontier for load in loads)
        frontier = _smallest({t for t in totals if all(map(int.__le__, t, available))})
        if not frontier:
            return False
    return True


def _add(a: Load, b: Load) -> Load:
    return tuple(x + y for x, y in zip(a, b, strict=True))


def _smallest_blocking_loads(
    chip: ChipRoom, kinds: Sequence[PodSize], available: Load, pod: PodSize
) -> set[Load]:
    """The smallest loads (counts per size in ``kinds``) that fit ``chip`` and
    leave no room for ``pod``; the empty load when it has none."""

    def blocked(slots: int, memory: int) -> bool:
        return slots >= chip.slots or chip.memory - memory < pod

    found: set[Load] = set()

    def extend(load: Load, slots: int, memory: int) -> None:
        # Counts are chosen size by size; a load that blocks is not grown.
        if blocked(slots, memory):
            found.add(load + (0,) * (len(kinds) - len(load)))
            return
        if len(load) == len(kinds):
            return
        size = kinds[len(load)]
        most = min(
            available[len(load)],
            chip.slots - slots,
            (chip.memory - memory) // size if size else chip.slots,
        )
        for count in range(most + 1):
            extend((*load, count), slots + count, memory + count * size)

    extend((), 0, 0)
    return _smallest(found)


def _smallest(loads: set[Load]) -> set[Load]:
    """The loads no other load of ``loads`` is below (in every size)."""
    return {
        load
        for load in loads
        if not any(
            other != load and all(o <= x for o, x in zip(other, load, strict=True))
            for other in loads
        )
    }


def allocate_for_volcano(
    requests: Iterable[Request],
    chips: Iterable[Chip],
    rules: Iterable[ChipTypeRules],
    *,
    unbound: Mapping[str, Sequence[PodSize]] | None = None,
    **options: Any,
) -> AllocationResult:
    """``allocate``, keeping only placements Volcano places whatever it picks.

    Only where ``policy.scheduler_picks_chip`` (Volcano); else plain ``allocate``.

    Args:
        requests, chips, rules: As ``allocate`` (chip usage includes the pods
            not bound yet).
        unbound: Per chip id, the memory of each pod the portal sent (or
            booked) there that is not bound yet: its booking is in the chip's
            usage, but Volcano may bind it to any fitting chip of the node.
        **options: ``allocate``'s keyword arguments (policy, quotas, running,
            now_s).

    Returns:
        ``allocate``'s result where every placement keeps its node safe
        (:func:`places_all` over the node's unbound pods and the placements
        before it). A request whose placement would not is tried again
        without that node, and without preemption (its node frees up as soon
        as the pods there are bound); if it finds no safe node, it waits with
        a reason naming the nodes it waits for.
    """
    if not options["policy"].scheduler_picks_chip:
        # HAMi's scheduler honours the pin: bookings are where pods land.
        return allocate(requests, chips, rules, **options)
    request_list = list(requests)
    chip_list = list(chips)
    rule_list = list(rules)
    options = {
        key: list(value) if key in ("quotas", "running") else value
        for key, value in options.items()
    }
    unbound = unbound or {}
    by_id = {c.id: c for c in chip_list}
    node_chips: dict[tuple[str, str], list[Chip]] = defaultdict(list)
    for chip in chip_list:
        if chip.healthy and not chip.cordoned:
            node_chips[(chip.node, chip.common_word)].append(chip)
    avoided: dict[str, set[str]] = defaultdict(set)  # request id → nodes

    current = request_list
    for round_ in range(ROUNDS + 1):
        result = allocate(current, chip_list, rule_list, **options)
        bad = _unsafe(result, node_chips, by_id, unbound)
        if not bad:
            return _explained(result, avoided)
        for placement in bad:
            avoided[placement.request_id].add(placement.node)
        if round_ == ROUNDS:
            return _explained(_without(result, bad), avoided)
        current = _avoiding(request_list, chip_list, avoided)
    raise AssertionError("unreachable")  # pragma: no cover


def _unsafe(
    result: AllocationResult,
    node_chips: Mapping[tuple[str, str], Sequence[Chip]],
    by_id: Mapping[str, Chip],
    unbound: Mapping[str, Sequence[PodSize]],
) -> list[Placement]:
    """The placements Volcano might not place, in order.

    Each placement is checked with the node's unbound pods and the placements
    before it on the node (``places_all``); an unsafe one is left out of what
    the next ones are checked with.
    """
    sent: dict[tuple[str, str], list[PodSize]] = {
        key: [p for c in members for p in unbound.get(c.id, ())]
        for key, members in node_chips.items()
    }
    found = []
    for placement in result.placements:
        key = (placement.node, by_id[placement.chip_id].common_word)
        rooms = [_room(c, unbound.get(c.id, ())) for c in node_chips[key]]
        if places_all(rooms, [*sent[key], placement.memory]):
            sent[key].append(placement.memory)
        else:
            found.append(placement)
    return found


def _avoiding(
    requests: Sequence[Request],
    chips: Sequence[Chip],
    avoided: Mapping[str, set[str]],
) -> list[Request]:
    """The requests, each excluding the chips of the nodes it must avoid and,
    if it avoids any, without preemption (those nodes free up once bound)."""
    return [
        replace(
            r,
            excluded_chips=r.excluded_chips
            | {c.id for c in chips if c.node in avoided[r.id]},
            allow_preemption=False,
        )
        if r.id in avoided
        else r
        for r in requests
    ]


def _room(chip: Chip, unbound: Sequence[PodSize]) -> ChipRoom:
    """What the chip's bound pods leave (its usage counts the unbound too)."""
    return ChipRoom(
        slots=chip.slots - (chip.slots_used - len(unbound)),
        memory=chip.memory - (chip.memory_used - sum(unbound)),
    )


def _without(result: AllocationResult, bad: Sequence[Placement]) -> AllocationResult:
    dropped = {p.request_id for p in bad}
    return AllocationResult(
        placements=tuple(p for p in result.placements if p.request_id not in dropped),
        proposals=result.proposals,
        waiting=(
            *result.waiting,
            *(Waiting(p.request_id, "", WaitReason.NO_CAPACITY) for p in bad),
        ),
    )


def _explained(
    result: AllocationResult, avoided: Mapping[str, set[str]]
) -> AllocationResult:
    """Say why a request that left nodes out for Volcano's sake waits."""
    if not avoided:
        return result
    waiting = []
    for w in result.waiting:
        nodes = avoided.get(w.request_id)
        if nodes and w.code in (WaitReason.NO_CAPACITY, WaitReason.NO_ELIGIBLE_CHIP):
            w = replace(w, reason=_reason(sorted(nodes)), code=WaitReason.NO_CAPACITY)
        waiting.append(w)
    return replace(result, waiting=tuple(waiting))


def _reason(nodes: Sequence[str]) -> str:
    return N_(
        "%(nodes)s has room, but the pods sent there are not all bound yet and "
        "Volcano picks their chips itself: sent now, this pod or one of them "
        "could find no chip with room; it is sent once they are bound",
        nodes=", ".join(nodes),
    )
