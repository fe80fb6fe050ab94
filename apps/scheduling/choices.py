"""States of requests, preemption proposals and drains (never compare bare strings)."""

from django.db import models


class RequestState(models.TextChoices):
    """Where a request for a vNPU stands, from submission to its end."""

    PENDING = "pending", "Pending"
    RESERVED = "reserved", "Reserved"  # capacity booked, pod not created yet
    ADMITTED = "admitted", "Admitted"  # pod created, waiting for Volcano to bind it
    RUNNING = "running", "Running"  # bound to a chip, confirmed by sync
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"
    EXPIRED = "expired", "Expired"


#: States in which a request still wants or holds capacity.
ACTIVE_STATES = (
    RequestState.PENDING,
    RequestState.RESERVED,
    RequestState.ADMITTED,
    RequestState.RUNNING,
)
#: States in which capacity is booked for the request (a Reservation or a Slice).
HOLDING_STATES = (RequestState.RESERVED, RequestState.ADMITTED, RequestState.RUNNING)
#: States a request never leaves.
FINAL_STATES = (
    RequestState.SUCCEEDED,
    RequestState.FAILED,
    RequestState.CANCELLED,
    RequestState.EXPIRED,
)


class WaitClass(models.TextChoices):
    """Why a pending request waits, as its last scheduling pass classed it: the
    allocator's ``WaitReason`` (but ``invalid``, which fails the request), a
    preemption proposal waiting for an admin, or something missing in the cluster. Bounded, for metrics and filters;
    ``reason`` says the same in words. Empty: no pass has looked at it yet."""

    QUOTA = "quota", "Queue quota"
    NO_CAPACITY = "no_capacity", "No room"
    NO_ELIGIBLE_CHIP = "no_eligible_chip", "No eligible chip"
    CAPACITY_FREEING = "capacity_freeing", "Room being freed"
    UNGUARANTEED = "unguaranteed", "Room without the guarantee"
    AWAITING_APPROVAL = "awaiting_approval", "Preemption awaiting approval"
    #: Held for the cluster: its namespace or its Volcano queue is missing or closed.
    CLUSTER_SETUP = "cluster_setup", "Namespace or Volcano queue missing"


class ProposalState(models.TextChoices):
    """Life of a preemption proposal: decided, then carried out."""

    PENDING = "pending", "Pending decision"
    APPROVED = "approved", "Approved"  # decided, evictions not started yet
    REJECTED = "rejected", "Rejected"
    EVICTING = "evicting", "Evicting"  # evictions under way (a PDB may hold one back)
    DONE = "done", "Done"  # every victim is gone; the request is being admitted
    FAILED = "failed", "Failed"  # a victim could not be evicted for good
    SUPERSEDED = "superseded", "Superseded"  # no longer needed or replaced


#: Proposals whose victims are being (or are about to be) evicted.
CARRIED_OUT_STATES = (ProposalState.APPROVED, ProposalState.EVICTING)


class DrainState(models.TextChoices):
    """Life of a drain (apps.scheduling.drain): the approval flow of a preemption."""

    # Foreign pods wait for an admin's approval (the portal's own are evicted).
    PENDING = "pending", "Pending approval"
    EVICTING = "evicting", "Evicting"  # evictions under way (a PDB may hold one back)
    DRAINED = "drained", "Drained"  # every slice is gone; the chips stay cordoned
    REJECTED = "rejected", "Rejected"  # foreign pods stay; the chips stay cordoned
    FAILED = "failed", "Failed"  # a pod could not be evicted for good
    UNCORDONED = "uncordoned", "Uncordoned"  # ended: the chips are back in service


#: Drains that hold their chips (a second drain of one of them is refused).
OPEN_DRAIN_STATES = (DrainState.PENDING, DrainState.EVICTING, DrainState.DRAINED)
#: Drains whose pods are being (or may yet be) evicted.
EVICTING_DRAIN_STATES = (DrainState.PENDING, DrainState.EVICTING)


class DrainScope(models.TextChoices):
    CHIP = "chip", "One chip"
    NODE = "node", "Every chip of a node"


class PodSecurityLevel(models.TextChoices):
    """The Pod Security Standards level a queue's pods must meet (podsecurity.Level)."""

    RESTRICTED = "restricted", "Restricted"
    BASELINE = "baseline", "Baseline"
    PRIVILEGED = "privileged", "Privileged"
