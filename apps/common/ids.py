"""Row ids given as text: ``cluster`` is an id or a name, and only ASCII digits are ids.

``str.isdigit()`` is true for "²" and other non-ASCII digits (superscripts,
Arabic-Indic digits), which ``int()`` then refuses or reads as another
number; such a value is a name, like any other text. Names themselves never consist of ASCII digits only
(``apps.inventory.models.cluster_name_not_numeric``), so the two cannot clash.
"""

from __future__ import annotations

# Row ids are 64-bit; anything larger is no row (and would overflow the database).
MAX_ID = 2**63 - 1


def is_ascii_digits(text: str) -> bool:
    """True for a non-empty string of the digits 0-9 and nothing else."""
    return text.isascii() and text.isdigit()


def parse_id(value: int | str) -> int | None:
    """The row id ``value`` names, or None when it is a name (or out of range)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value if 0 < value <= MAX_ID else None
    text = str(value)
    if not is_ascii_digits(text):
        return None
    number = int(text)
    return number if 0 < number <= MAX_ID else None
