"""Result types of the device-config validator (re-exported by ``validation``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["Issue", "Severity", "ValidationReport"]

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class Issue:
    """One finding about a chip type or template.

    Attributes:
        field: Path of the value, e.g. ``"vnpus[1].templates[0].memory"``,
            for an API to show the message next to the right field.
        message: Human-readable text naming the chip type, template and
            field, e.g. ``"Ascend310P template vir01: memory must be
            greater than 0"``.
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
