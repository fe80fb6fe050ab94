"""A chip's state in one word, derived from its row (pure; nothing stored).

The rules are tried in order and the first that holds names the state, so
the most specific act comes first: a drain in progress says more than the
cordon it set, and the cordon more than the health the chip reports. An
isolation comes first of all: it takes the chip from every scheduler, not only
the portal. The serializer reads :func:`chip_state`; the chip filter and the
live chip rows read :func:`chip_state_expression`, the same rules as one SQL
``CASE`` (a filter or 8,000 live rows never load the chips as objects).
``tests/inventory/test_chip_state.py`` checks that both agree on every
combination of the facts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from django.db.models import Case, CharField, Q, Value, When

from apps.inventory.choices import ChipIsolation, ChipState


class ChipFacts(Protocol):
    """The chip fields the rules read (a ``Chip`` row has them)."""

    healthy: bool
    cordoned: bool
    active_drain: int | None
    slots_used: int
    isolation: str


#: (state, holds) in order of precedence; the last row always holds.
RULES: tuple[tuple[ChipState, Callable[[ChipFacts], bool]], ...] = (
    (ChipState.ISOLATING, lambda c: c.isolation == ChipIsolation.ISOLATING),
    (ChipState.ISOLATED, lambda c: c.isolation == ChipIsolation.ISOLATED),
    (ChipState.RESTORING, lambda c: c.isolation == ChipIsolation.RESTORING),
    # A drain is open and slices are still on the chip (sync counts a
    # terminating pod's slice until the pod is gone).
    (ChipState.DRAINING, lambda c: c.active_drain is not None and c.slots_used > 0),
    (ChipState.DRAINED, lambda c: c.active_drain is not None),
    (ChipState.CORDONED, lambda c: c.cordoned),
    (ChipState.UNHEALTHY, lambda c: not c.healthy),
    (ChipState.HEALTHY, lambda c: True),
)


#: :data:`RULES` as conditions on a Chip queryset, in the same order (the
#: last rule, healthy, is the ``CASE``'s default).
WHERE: tuple[tuple[ChipState, Q], ...] = (
    (ChipState.ISOLATING, Q(isolation=ChipIsolation.ISOLATING)),
    (ChipState.ISOLATED, Q(isolation=ChipIsolation.ISOLATED)),
    (ChipState.RESTORING, Q(isolation=ChipIsolation.RESTORING)),
    (ChipState.DRAINING, Q(active_drain__isnull=False, slots_used__gt=0)),
    (ChipState.DRAINED, Q(active_drain__isnull=False)),
    (ChipState.CORDONED, Q(cordoned=True)),
    (ChipState.UNHEALTHY, Q(healthy=False)),
)


def chip_state(chip: ChipFacts) -> ChipState:
    """The first state of :data:`RULES` that holds for ``chip``."""
    return next(state for state, holds in RULES if holds(chip))


def chip_state_expression() -> Case:
    """:func:`chip_state` as a database expression over a Chip queryset
    (``.annotate(state=chip_state_expression())``)."""
    return Case(
        *(When(where, then=Value(state.value)) for state, where in WHERE),
        default=Value(ChipState.HEALTHY.value),
        output_field=CharField(),
    )
