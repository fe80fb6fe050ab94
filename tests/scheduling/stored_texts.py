"""What the tests of stored texts (progress, reasons) share: the ``N_``
templates the writing files use, and values to fill one in."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from apps.common.catalogs import extract

ROOT = Path(__file__).resolve().parents[2]


def templates_of(writers: Iterable[str]) -> list[str]:
    """Every ``N_`` template of the files ``writers`` (paths from the repository)."""
    wanted = set(writers)
    return sorted(
        {
            message.id
            for message in extract(ROOT, ("apps/scheduling",))
            if message.id
            and isinstance(message.id, str)
            and any(path in wanted for path, _line in message.locations)
        }
    )


def sample_values(template: str) -> dict[str, object]:
    """A value for each placeholder of ``template`` (a number for ``%(n)d``)."""
    return {
        name: 7 if kind == "d" else f"v-{name}"
        for name, kind in re.findall(r"%\((\w+)\)([sdrg])", template)
    }
