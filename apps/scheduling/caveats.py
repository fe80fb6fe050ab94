"""A placement's caveat (what is not guaranteed where the scheduler picks the
chip) in the reader's language.

The allocator is pure Python (no Django, no translation) and words a caveat
in one fixed English grammar (``allocator/reasons.py``: ``unguaranteed`` of
``hazard`` phrases), which ``allocation.py`` stores with the chips named by
UUID and index and, on a proposal, the chip its victims free. That grammar is
the portal's own, so a stored caveat is read back into its parts and worded
again with the catalog's templates where an answer is built; a text that is
not in the grammar (written by an older release) is shown as it is.
"""

from __future__ import annotations

import re

from django.utils.translation import gettext, gettext_noop

__all__ = ["caveat_shown"]

_CAVEAT = re.compile(
    r"^not guaranteed: Volcano picks the chip on node (?P<node>\S+) and may pick "
    r"(?P<hazards>.+?)(?:, instead of chip (?P<freed>.+) that its victims free)?$"
)
_HAZARD = re.compile(r"^chip (?P<chip>.+?), which (?P<why>.+)$")
_AICPU = re.compile(r"^has (?P<free>-?\d+) AICPU free, not (?P<booked>\d+)$")

#: The allocator's reasons a chip breaks a promise (chipsearch.py), as phrases.
_WHY = {
    "is unhealthy": gettext_noop("chip %(chip)s, which is unhealthy"),
    "is cordoned": gettext_noop("chip %(chip)s, which is cordoned"),
    "the request excludes": gettext_noop("chip %(chip)s, which the request excludes"),
}
_WHY_AICPU = gettext_noop(
    "chip %(chip)s, which has %(free)s AICPU free, not %(booked)s"
)
_NOT_GUARANTEED = gettext_noop(
    "not guaranteed: Volcano picks the chip on node %(node)s and may pick %(hazards)s"
)
_INSTEAD = gettext_noop("%(caveat)s, instead of chip %(freed)s that its victims free")
_AND = gettext_noop("%(first)s; %(then)s")
#: allocation.py names a chip "<UUID> (index <n>)"
_LABEL = re.compile(r"^(?P<uuid>\S+) \(index (?P<index>\d+)\)$")
_INDEX = gettext_noop("%(uuid)s (index %(index)s)")


def _chip_shown(label: str) -> str:
    found = _LABEL.match(label)
    return gettext(_INDEX) % found.groupdict() if found else label


def _hazard_shown(text: str) -> str | None:
    found = _HAZARD.match(text)
    if found is None:
        return None
    chip, why = _chip_shown(found["chip"]), found["why"]
    if why in _WHY:
        return gettext(_WHY[why]) % {"chip": chip}
    aicpu = _AICPU.match(why)
    if aicpu is None:
        return None
    return gettext(_WHY_AICPU) % {"chip": chip, **aicpu.groupdict()}


def caveat_shown(text: str) -> str:
    """``text`` (a stored caveat) in the active language; as it is when it
    is not in the allocator's grammar, or the language is English."""
    found = _CAVEAT.match(text or "")
    if found is None:
        return text
    hazards = [_hazard_shown(part) for part in found["hazards"].split("; ")]
    if any(h is None for h in hazards):
        return text
    joined = hazards[0] or ""
    for hazard in hazards[1:]:
        joined = gettext(_AND) % {"first": joined, "then": hazard}
    shown = gettext(_NOT_GUARANTEED) % {"node": found["node"], "hazards": joined}
    if found["freed"]:
        freed = _chip_shown(found["freed"])
        shown = gettext(_INSTEAD) % {"caveat": shown, "freed": freed}
    return shown
