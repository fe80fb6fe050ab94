"""Result types of the device-config validator (re-exported by ``validation``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from .messages import N_

__all__ = ["Issue", "IssueCollector", "Severity", "ValidationReport", "describe"]

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Issue:
    """One finding about a chip type or template.

    Attributes:
        field: Path of the value, e.g. ``"vnpus[1].templates[0].memory"``,
            for an API to show the message next to the right field.
        message: Human-readable text naming the chip type, template and
            field, e.g. ``"Ascend310P template vir01: memory must be
            greater than 0"``: in English, and a :class:`~.messages.Message`
            where the validators made it (translated where it is shown).
        chip_type: The chip type's commonWord (or chipName, or its path when
            it has neither).
        template: The template's name, for template issues.
        severity: ``"error"`` blocks saving; ``"warning"`` informs.
    """

    field: str
    message: str
    chip_type: str | None = None
    template: str | None = None
    severity: Severity = "error"


@dataclass(frozen=True)
class ValidationReport:
    """All findings of one validation run.

    Attributes:
        errors: Problems that make HAMi, the device plugin or the runtime
            fail or misbehave.
        warnings: Consequences the user should know about.
    """

    errors: tuple[Issue, ...] = ()
    warnings: tuple[Issue, ...] = ()

    @property
    def ok(self) -> bool:
        """True when there is no error (warnings allowed)."""
        return not self.errors

    @property
    def issues(self) -> tuple[Issue, ...]:
        """Errors then warnings."""
        return self.errors + self.warnings


class IssueCollector:
    """Gathers the errors and warnings of one check run, each with its path."""

    def __init__(self) -> None:
        self.errors: list[Issue] = []
        self.warnings: list[Issue] = []

    def error(self, path: str, message: str) -> None:
        """Record an error about the value at ``path``."""
        self.errors.append(Issue(path, message))

    def warn(self, path: str, message: str) -> None:
        """Record a warning about the value at ``path``."""
        self.warnings.append(Issue(path, message, severity="warning"))

    def report(self) -> ValidationReport:
        """Everything recorded so far."""
        return ValidationReport(tuple(self.errors), tuple(self.warnings))


def describe(value: Any) -> str:
    """A loaded value as an error message names it: ``the string '8'``, ``a list``
    (a :class:`~.messages.Message`, translated with the message it is part of)."""
    if isinstance(value, bool):
        return N_("the boolean %(value)s", value=str(value).lower())
    if isinstance(value, str):
        return N_("the string %(value)r", value=value)
    if isinstance(value, float):
        return N_("the number %(value)r", value=value)
    if isinstance(value, list):
        return N_("a list")
    if isinstance(value, Mapping):
        return N_("a mapping")
    if value is None:
        return "null"
    return repr(value)
