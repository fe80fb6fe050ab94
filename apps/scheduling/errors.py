"""Scheduling's named errors; codes and HTTP statuses are in
``apps.common.exceptions.ERRORS``."""

from __future__ import annotations

from apps.common.exceptions import Conflict, ErrorCode, NotFound


class IdempotencyConflict(Conflict):
    """An idempotency key used again with different content."""

    code = ErrorCode.IDEMPOTENCY_CONFLICT


class QueueInUse(Conflict):
    """A queue that still has requests cannot be deleted."""

    code = ErrorCode.QUEUE_IN_USE


class RequestNotPending(Conflict):
    """The proposal's request is no longer waiting."""

    code = ErrorCode.REQUEST_NOT_PENDING


class ChipGone(Conflict):
    """The chip a proposal would free no longer exists."""

    code = ErrorCode.CHIP_GONE


class ProposalDecided(Conflict):
    """Only a pending proposal can be approved or rejected."""

    code = ErrorCode.PROPOSAL_DECIDED


class DrainExists(Conflict):
    """A chip of the drain asked for is held by an open drain already."""

    code = ErrorCode.DRAIN_EXISTS


class NotCordoned(Conflict):
    """Uncordon of a chip (or node) that nothing cordons."""

    code = ErrorCode.NOT_CORDONED


class NoLog(NotFound):
    """The request has no log to read: it never had a pod, or none was kept."""

    code = ErrorCode.NO_LOG


class LogNotReady(Conflict):
    """Its container is waiting to start: the API server has no log yet."""

    code = ErrorCode.LOG_NOT_READY
