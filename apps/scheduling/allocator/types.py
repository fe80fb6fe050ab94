"""Inputs and outputs of the allocator: frozen dataclasses and enums only.

Units: memory is in MB, as HAMi counts it (``devmem``, template ``memory``).
Times are plain seconds given by the caller; the allocator never reads a clock.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Strategy(enum.StrEnum):
    """How to choose among the chips that fit (Volcano ``deviceshare.SchedulePolicy``)."""

    BINPACK = "binpack"
    SPREAD = "spread"


class WaitReason(enum.StrEnum):
    """Why a request was neither placed nor given a preemption proposal."""

    #: The request can never be served (unknown template or chip type, too big).
    INVALID = "invalid"
    #: The request's queue has no quota left for this chip type.
    QUOTA = "quota"
    #: Eligible chips exist but none has room, and preemption did not help.
    NO_CAPACITY = "no_capacity"
    #: No healthy, uncordoned chip of the type is allowed (pin, exclusions).
    NO_ELIGIBLE_CHIP = "no_eligible_chip"
    #: Terminating slices (or a proposal's victims) will free enough; just wait.
    CAPACITY_FREEING = "capacity_freeing"
    #: Room exists, but only on nodes where the scheduler may pick a chip that
    #: breaks a guarantee (unhealthy, cordoned, excluded, short of AICPU), and
    #: the policy does not place without the guarantee.
    UNGUARANTEED = "unguaranteed"


@dataclass(frozen=True, slots=True)
class TemplateShape:
    """One vNPU template of a chip type (HAMi ``vnpus[].templates[]``)."""

    name: str
    memory: int
    ai_core: int
    ai_cpu: int


@dataclass(frozen=True, slots=True)
class ChipTypeRules:
    """The HAMi device-config entry of one chip type, keyed by ``common_word``.

    ``templates`` are in device-config file order: the template rule breaks
    ties between equal memories by it.
    """

    common_word: str
    memory_allocatable: int
    memory_capacity: int
    ai_core: int
    ai_cpu: int
    templates: tuple[TemplateShape, ...]


@dataclass(frozen=True, slots=True)
class SliceShape:
    """What one request books on a chip once HAMi's template rule has been applied.

    ``template`` is None for a whole card: it books ``memory`` (memoryAllocatable)
    and the chip's full AICore and AICPU, and fits only an empty chip.
    """

    template: str | None
    memory: int
    ai_core: int
    ai_cpu: int

    @property
    def whole_card(self) -> bool:
        """True when the shape is a whole card rather than a template slice."""
        return self.template is None


@dataclass(frozen=True, slots=True)
class RunningSlice:
    """A slice currently on a chip. Terminating ones are capacity being freed."""

    id: str
    chip_id: str
    memory: int
    ai_core: int
    ai_cpu: int
    priority: int
    started_at_s: float
    queue: str
    namespace: str
    pod: str
    terminating: bool = False
    preemptable: bool = True  # False: ``volcano.sh/preemptable: "false"``


@dataclass(frozen=True, slots=True)
class Chip:
    """One physical chip with its totals and current usage (running slices included)."""

    id: str
    node: str
    common_word: str
    memory: int
    slots: int
    ai_core: int
    ai_cpu: int
    memory_used: int
    slots_used: int
    ai_core_used: int
    ai_cpu_used: int
    healthy: bool = True
    cordoned: bool = False
    network_id: int | None = None


@dataclass(frozen=True, slots=True)
class StandingProposal:
    """The request's pending preemption proposal, as the allocator keeps it.

    An admin may be reading it: while it still works in this pass (its
    victims all run on the chip, none is claimed by a request served before
    it, and evicting them places the request), the allocator proposes it
    again instead of searching afresh, and its victims are claimed for it,
    so no other request's proposal names them.
    """

    chip_id: str
    victims: frozenset[tuple[str, str]]  # (namespace, pod)


@dataclass(frozen=True, slots=True)
class Request:
    """A pending request for one vNPU (or one whole card).

    ``memory`` is in MB and goes through HAMi's template rule; None asks for a
    whole card. ``template`` names a template explicitly and, when set, wins over
    ``memory``.
    """

    id: str
    common_word: str
    memory: int | None
    template: str | None
    priority: int
    submitted_at_s: float
    queue: str
    allow_preemption: bool = True
    # The request's PriorityClass has ``preemptionPolicy: Never``.
    never_preempts: bool = False
    pinned_chip: str | None = None
    excluded_chips: frozenset[str] = frozenset()
    standing: StandingProposal | None = None


@dataclass(frozen=True, slots=True)
class QueueQuota:
    """A queue's quota for one chip type. A None limit is unlimited."""

    queue: str
    common_word: str
    memory_limit: int | None
    slots_limit: int | None
    memory_used: int
    slots_used: int


@dataclass(frozen=True, slots=True)
class Policy:
    """Cluster-wide allocation policy.

    ``lookahead`` is how many upcoming requests the packing strategy (binpack)
    simulates when choosing among its best few chips; 0 turns it off.

    ``scheduler_picks_chip`` says the cluster's scheduler takes any chip of the
    chosen node that fits by its own count (Volcano: type, free slot, memory,
    AICore; not health, not AICPU, not the portal's pin). A placement is then
    *guaranteed* only when every chip of its node the scheduler could pick for
    the shape is healthy, uncordoned, not excluded by the request and has the
    AICPU; guaranteed placements are preferred. When only unguaranteed ones
    exist, ``place_unguaranteed`` places anyway with a ``caveat`` saying what
    is not guaranteed; otherwise the request waits (UNGUARANTEED).
    """

    strategy: Strategy
    preemption: bool = True
    lookahead: int = 12
    scheduler_picks_chip: bool = False
    place_unguaranteed: bool = True


@dataclass(frozen=True, slots=True)
class Placement:
    """A request placed on a chip now. ``template`` None means a whole card.

    ``caveat`` says what is not guaranteed (see ``Policy.scheduler_picks_chip``);
    None when every promise holds.
    """

    request_id: str
    chip_id: str
    node: str
    template: str | None
    memory: int
    ai_core: int
    ai_cpu: int
    caveat: str | None = None


@dataclass(frozen=True, slots=True)
class PreemptionProposal:
    """Evict ``victims`` (running slice ids) from ``chip_id`` to place the request.

    ``lost_seconds`` is the running time the victims lose, measured at ``now_s``.
    ``caveat`` says what is not guaranteed once they are gone (the scheduler
    picks the chip of the node itself: ``Policy.scheduler_picks_chip``).
    """

    request_id: str
    chip_id: str
    node: str
    victims: tuple[str, ...]
    max_victim_priority: int
    lost_seconds: float
    template: str | None
    memory: int
    ai_core: int
    ai_cpu: int
    caveat: str | None = None


@dataclass(frozen=True, slots=True)
class Waiting:
    """A request left waiting, with a human-readable reason.

    ``chip_id`` names the chip whose capacity is reserved for the request when
    ``code`` is CAPACITY_FREEING (None when only queue quota is being freed).
    """

    request_id: str
    reason: str
    code: WaitReason
    chip_id: str | None = None


@dataclass(frozen=True, slots=True)
class AllocationResult:
    """Everything one allocation pass decided; each request appears exactly once.

    All three tuples are in processing order: priority descending, then oldest.
    """

    placements: tuple[Placement, ...]
    proposals: tuple[PreemptionProposal, ...]
    waiting: tuple[Waiting, ...]
