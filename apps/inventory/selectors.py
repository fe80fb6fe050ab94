"""Reads of the inventory: clusters, chips, usage and room.

The device config's reads (its versions, render, drift and the template fit)
are in ``apps.inventory.deviceconfig.selectors``.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta
from typing import Any, cast

from django.db.models import Aggregate, Count, F, Q, QuerySet, Sum
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.common.exceptions import NotFound
from apps.common.ids import parse_id
from apps.inventory.chipstate import chip_state_expression
from apps.inventory.choices import ConnectionKind
from apps.inventory.deviceconfig.in_effect import config_in_effect
from apps.inventory.hami.deviceconfig import TemplateSpec
from apps.inventory.models import Chip, ChipType, Cluster, Node, Slice, UsageSample
from apps.inventory.room import ChipLoad, TypeRoom, type_room_counted
from apps.live.events import CHIP_COLUMNS, ChipRow, ChipUsage

#: The chip fields the room calculation reads.
ROOM_FIELDS = (
    "common_word",
    "memory",
    "memory_used",
    "slots",
    "slots_used",
    "aicore",
    "aicore_used",
    "aicpu",
    "aicpu_used",
    "healthy",
    "cordoned",
    "registered",
    "isolation",
)


def cluster_get(identifier: int | str) -> Cluster:
    """The cluster with this id or name; NotFound otherwise."""
    # Only ASCII digits are an id ("²" is a name); names are never all digits.
    pk = parse_id(identifier)
    lookup = {"pk": pk} if pk is not None else {"name": str(identifier)}
    cluster = Cluster.objects.filter(**lookup).first()
    if cluster is None:
        raise NotFound(
            _("cluster %(cluster)r does not exist") % {"cluster": identifier}
        )
    return cluster


def chip_queryset() -> QuerySet[Chip]:
    """Chips with their node, for lists."""
    return Chip.objects.select_related("node", "cluster")


#: The per-chip-type totals of the summary, each one SQL aggregate over the chips
#: of a type (summary key: aggregate).
CHIP_TYPE_TOTALS: dict[str, Aggregate] = {
    "chips": Count("pk"),
    "healthy_chips": Count("pk", filter=Q(healthy=True)),
    "memory_total": Sum("memory"),
    "memory_used": Sum("memory_used"),
    "slots_total": Sum("slots"),
    "slots_used": Sum("slots_used"),
    "aicore_total": Sum("aicore"),
    "aicore_used": Sum("aicore_used"),
    "aicpu_total": Sum("aicpu"),
    "aicpu_used": Sum("aicpu_used"),
}


def _chip_type_totals(cluster: Cluster) -> dict[str, dict[str, int]]:
    """``CHIP_TYPE_TOTALS`` of each chip type that has chips in ``cluster``, by type.

    One grouped query: the database adds the chips up, where fetching every
    chip to add them up in Python cost four times the CPU at 8,000 chips.
    """
    # Aliased: an annotation may not take the name of a field ("memory_used").
    aliases = [f"total_{key}" for key in CHIP_TYPE_TOTALS]
    rows = (
        Chip.objects.filter(cluster=cluster)
        .order_by()  # no Meta.ordering (a join to the node) in a grouped query
        .values("common_word")
        .annotate(**dict(zip(aliases, CHIP_TYPE_TOTALS.values(), strict=True)))
        .values_list("common_word", *aliases)
    )
    # A type is here only if it has a chip, so no sum is NULL.
    return {
        cw: dict(zip(CHIP_TYPE_TOTALS, totals, strict=True)) for cw, *totals in rows
    }


def cluster_summary(cluster: Cluster) -> dict[str, Any]:
    """Totals per chip type: chips, healthy chips, slices, memory and slots used/free.

    The types are those with chips and those the portal configures (all zero
    when they have no chip), by name. A type's slices are the slices of its
    name; slices of a type that is neither are in no total.
    """
    per_type = _chip_type_totals(cluster)
    slices = dict(
        Slice.objects.filter(cluster=cluster)
        .order_by()
        .values_list("common_word")
        .annotate(n=Count("id"))
        .values_list("common_word", "n")
    )
    configured = (
        ChipType.objects.filter(cluster=cluster)
        .order_by()  # sorted below, with the others
        .values_list("common_word", flat=True)
    )
    no_chips = dict.fromkeys(CHIP_TYPE_TOTALS, 0)
    chip_types = []
    for cw in sorted(set(per_type) | set(configured)):
        totals = per_type.get(cw, no_chips)
        chip_types.append(
            {
                "common_word": cw,
                **totals,
                "memory_free": totals["memory_total"] - totals["memory_used"],
                "slots_free": totals["slots_total"] - totals["slots_used"],
                "slices": slices.get(cw, 0),
            }
        )
    return {
        "cluster": cluster.name,
        "nodes": cluster.nodes.count(),
        "chips": sum(t["chips"] for t in chip_types),
        "slices": sum(t["slices"] for t in chip_types),
        "sync_state": cluster.sync_state,
        "last_sync_at": cluster.last_sync_at,
        "chip_types": chip_types,
    }


#: The Chip fields of the live contract's chip columns (apps.live.events.ChipRow),
#: for ``values_list``: a column is the field of its name, but for the node's
#: (and ``state``, the annotation :func:`chip_row_values` adds).
CHIP_USAGE_FIELDS = tuple(
    {"node": "node__name"}.get(column, column) for column in CHIP_COLUMNS
)


def chip_row_values(chips: QuerySet[Chip], *lead: str) -> QuerySet[Chip, tuple]:
    """``chips`` as live chip rows: tuples in ``CHIP_COLUMNS`` order, after the
    ``lead`` fields (the sync writer reads the id first), with the derived
    ``state`` computed by the database."""
    return chips.annotate(state=chip_state_expression()).values_list(
        *lead, *CHIP_USAGE_FIELDS
    )


def nodes_without_chips(cluster: Cluster) -> list[str]:
    """Names of the cluster's nodes with no chip (control-plane and CPU nodes)."""
    return list(
        Node.objects.order_by("name")
        .filter(cluster=cluster, chips__isnull=True)
        .values_list("name", flat=True)
    )


def chip_usage(cluster: Cluster) -> ChipUsage:
    """Per-chip usage as compact rows: one list of columns, one array per chip.

    At 8,000 chips a list of dicts costs several times the bytes of the same data
    as arrays, and the UI renders from arrays anyway.

    The rows are the plain tuples ``values_list`` gives, in ``CHIP_COLUMNS``
    order, not ChipRows. The JSON is the same, and 8,000 instances of a tuple
    subclass cost three ways: making them; the JSON encoder, which copies each
    one into a list before writing it; and above all the garbage collector,
    which stops tracking a plain tuple of numbers and strings but never a
    subclass's, so that they set off a full collection every few requests
    (15 in 100 requests at 8,000 chips, against 1 with plain tuples).
    """
    rows = chip_row_values(
        Chip.objects.filter(cluster=cluster).order_by(
            "node__name", "common_word", "index"
        )
    )
    return {
        "cluster": cluster.name,
        "columns": list(CHIP_COLUMNS),
        # The live contract's ChipRow is the wire shape (an array in
        # CHIP_COLUMNS order); these tuples are that, without the class.
        "rows": cast(list[ChipRow], list(rows)),
    }


def connected_cluster_ids() -> list[int]:
    """Ids of the clusters sync should watch (those with a connection configured)."""
    return list(
        Cluster.objects.exclude(connection=ConnectionKind.NONE)
        .order_by("pk")
        .values_list("pk", flat=True)
    )


def _chip_load(
    common_word: str,
    memory: int,
    memory_used: int,
    slots: int,
    slots_used: int,
    aicore: int,
    aicore_used: int,
    aicpu: int,
    aicpu_used: int,
    healthy: bool,
    cordoned: bool,
    registered: bool,
    isolation: str,
) -> ChipLoad:
    """A chip as the room calculation reads it, from its ROOM_FIELDS in order
    (healthy, uncordoned, registered and not isolated: eligible)."""
    return ChipLoad(
        common_word=common_word,
        memory=memory,
        memory_used=memory_used,
        slots=slots,
        slots_used=slots_used,
        aicore=aicore,
        aicore_used=aicore_used,
        aicpu=aicpu,
        aicpu_used=aicpu_used,
        eligible=healthy and not cordoned and registered and not isolation,
    )


def slices_on_unhealthy_chips(cluster_id: int) -> QuerySet[Slice]:
    """The slices that run on a chip its device plugin reports unhealthy.

    The plugin's Allocate hands out a sick chip like any other (it checks no
    health), so a pod a scheduler that checks none (Volcano) bound there runs
    on it; these are the ones to move.
    """
    return (
        Slice.objects.filter(cluster_id=cluster_id, chip__healthy=False)
        .select_related("chip", "chip__node")
        .order_by("node_name", "chip__index", "namespace", "pod_name")
    )


def slices_on_unhealthy_chips_count(cluster_id: int) -> dict[int, int]:
    """Per unhealthy chip's pk, how many slices still run on it."""
    rows = (
        Slice.objects.filter(cluster_id=cluster_id, chip__healthy=False)
        .order_by()
        .values_list("chip_id")
        .annotate(n=Count("id"))
    )
    return dict(rows)


def chip_loads(chips: Iterable[Chip]) -> list[ChipLoad]:
    """The chips as the room calculation reads them."""
    return [_chip_load(*(getattr(c, f) for f in ROOM_FIELDS)) for c in chips]


def fragmentation(cluster: Cluster) -> list[TypeRoom]:
    """Per chip type: room for each template, the largest that fits, stranded memory.

    Stranded memory is counted per template size (free memory that slices of
    that size cannot use) and, for existing callers, against the smallest one.
    """
    templates = templates_by_type([cluster.pk])
    by_type: dict[str, list[tuple[ChipLoad, int]]] = {}
    for load, n in _room_loads_counted(cluster):
        by_type.setdefault(load.common_word, []).append((load, n))
    return [
        type_room_counted(cw, templates.get((cluster.pk, cw), []), counted)
        for cw, counted in sorted(by_type.items())
    ]


def _room_loads_counted(cluster: Cluster) -> list[tuple[ChipLoad, int]]:
    """The cluster's distinct chip loads, each with how many chips have it.

    Grouped in the database (chips of a type mostly share a handful of loads),
    so 80,000 chips come back as a few rows instead of 80,000 model instances.
    """
    rows = (
        Chip.objects.filter(cluster=cluster)
        .order_by()  # no ORDER BY: it would join the GROUP BY
        .values_list(*ROOM_FIELDS)
        .annotate(n=Count("id"))
    )
    # Each row is ROOM_FIELDS in order, then the count.
    return [(_chip_load(*row[:-1]), row[-1]) for row in rows]


def chips_with_room_for(
    chips: QuerySet[Chip], template_name: str
) -> QuerySet[Chip] | None:
    """The chips where one more slice of the named template fits; None: no such template.

    The same rule as :func:`apps.inventory.room.slices_that_fit`, as one query:
    per chip type that has the template in effect, a free slot, its memory,
    and its AICore and AICPU where the chip reports them.
    """
    clusters = Cluster.objects.values_list("pk", flat=True)
    shapes = [
        (cluster_id, cw, t.memory, t.ai_core, t.ai_cpu)
        for (cluster_id, cw), templates in templates_by_type(clusters).items()
        for t in templates
        if t.name == template_name
    ]
    room = Q(pk__in=[])
    found = False
    for cluster_id, cw, memory, ai_core, ai_cpu in shapes:
        found = True
        fits = Q(
            cluster_id=cluster_id,
            common_word=cw,
            slots_used__lt=F("slots"),
            memory__gte=F("memory_used") + memory,
        )
        if ai_core:
            fits &= Q(aicore=0) | Q(aicore__gte=F("aicore_used") + ai_core)
        if ai_cpu:
            fits &= Q(aicpu=0) | Q(aicpu__gte=F("aicpu_used") + ai_cpu)
        room |= fits
    if not found:
        return None
    return chips.filter(
        room, healthy=True, cordoned=False, registered=True, isolation=""
    )


def templates_by_type(
    cluster_ids: Iterable[int],
) -> dict[tuple[int, str], list[TemplateSpec]]:
    """The templates in effect of every chip type of the given clusters, by (cluster, type).

    In effect: as the clusters' schedulers loaded them (``config_in_effect``),
    since room is room for what a request would get now.
    """
    result: dict[tuple[int, str], list[TemplateSpec]] = {}
    for cluster in Cluster.objects.filter(pk__in=set(cluster_ids)):
        for chip_type in config_in_effect(cluster).chip_types:
            result[(cluster.pk, chip_type.common_word)] = list(chip_type.templates)
    return result


def usage_history(
    cluster: Cluster, *, hours: int = 6, chip_type: str | None = None
) -> QuerySet[Any]:
    """Usage samples of the last ``hours``, oldest first."""
    samples = UsageSample.objects.filter(
        cluster=cluster, at__gte=timezone.now() - timedelta(hours=hours)
    )
    if chip_type:
        samples = samples.filter(common_word=chip_type)
    return samples.order_by("at", "common_word")
