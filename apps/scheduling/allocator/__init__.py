"""Pure allocator for vNPU requests: stdlib only, no Django (see ``allocate``).

Import the public API from here::

    from apps.scheduling.allocator import allocate, Chip, Request, Policy, Strategy
"""

from .allocate import allocate
from .errors import (
    AllocatorError,
    InsufficientCapacity,
    InvalidRequest,
    InvalidSnapshot,
    SnapshotProblem,
)
from .revalidate import proposal_problem
from .shapes import all_shapes, resolve_shape
from .types import (
    AllocationResult,
    Chip,
    ChipTypeRules,
    Placement,
    Policy,
    PreemptionProposal,
    QueueQuota,
    Request,
    RunningSlice,
    SliceShape,
    StandingProposal,
    Strategy,
    TemplateShape,
    Waiting,
    WaitReason,
)
from .volcano_room import allocate_for_volcano, places_all

__all__ = [
    "AllocationResult",
    "AllocatorError",
    "Chip",
    "ChipTypeRules",
    "InsufficientCapacity",
    "InvalidRequest",
    "InvalidSnapshot",
    "Placement",
    "Policy",
    "PreemptionProposal",
    "QueueQuota",
    "Request",
    "RunningSlice",
    "SliceShape",
    "SnapshotProblem",
    "StandingProposal",
    "Strategy",
    "TemplateShape",
    "WaitReason",
    "Waiting",
    "all_shapes",
    "allocate",
    "allocate_for_volcano",
    "places_all",
    "proposal_problem",
    "resolve_shape",
]
