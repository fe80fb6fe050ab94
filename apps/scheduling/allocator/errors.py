"""Allocator exceptions. Each one carries the data a caller needs to report it."""

from __future__ import annotations

import enum


class AllocatorError(Exception):
    """Base class of every exception the allocator raises."""


class SnapshotProblem(enum.StrEnum):
    """What is wrong with a snapshot passed to ``allocate``."""

    NEGATIVE_VALUE = "negative_value"
    NOT_POSITIVE = "not_positive"
    NOT_FINITE = "not_finite"
    DUPLICATE_ID = "duplicate_id"
    UNKNOWN_COMMON_WORD = "unknown_common_word"
    UNKNOWN_CHIP = "unknown_chip"
    RUNNING_EXCEEDS_USAGE = "running_exceeds_usage"


class InvalidSnapshot(AllocatorError):
    """The snapshot is inconsistent; nothing was allocated.

    Attributes:
        problem: The kind of problem.
        kind: The kind of object at fault ("chip", "request", "running", ...).
        subject: The id (or key) of that object.
        field: The field at fault, when there is one.
    """

    def __init__(
        self,
        problem: SnapshotProblem,
        kind: str,
        subject: str,
        field: str | None = None,
    ) -> None:
        self.problem = problem
        self.kind = kind
        self.subject = subject
        self.field = field
        where = f"{kind} {subject!r}" + (f" field {field}" if field else "")
        super().__init__(f"invalid snapshot: {problem.value} at {where}")


class InvalidRequest(AllocatorError):
    """A request cannot be served under any state (raised by the template rule).

    ``allocate`` turns it into a ``Waiting`` with code INVALID; it never escapes
    from there.

    Attributes:
        detail: Human-readable explanation, without the "invalid: " prefix.
    """

    def __init__(self, detail: str) -> None:
        self.detail = detail
        super().__init__(f"invalid: {detail}")


class InsufficientCapacity(AllocatorError):
    """For callers that need all-or-nothing: some requests could not be placed.

    ``allocate`` itself never raises it (it reports ``Waiting`` entries); an
    adapter may raise it from a result whose ``waiting`` is not empty.

    Attributes:
        waiting: ``(request_id, reason)`` pairs of the requests left waiting.
    """

    def __init__(self, waiting: tuple[tuple[str, str], ...]) -> None:
        self.waiting = waiting
        first = waiting[0][1] if waiting else "no request"
        super().__init__(f"{len(waiting)} request(s) cannot be placed: {first}")
