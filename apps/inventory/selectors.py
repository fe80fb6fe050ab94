"""Reads of the inventory: clusters, specs, rendered configs, usage and fit."""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Iterable
from typing import Any, cast

from django.db.models import Aggregate, Count, Prefetch, Q, QuerySet, Sum

from apps.common.exceptions import NotFound, ValidationFailed
from apps.common.ids import parse_id
from apps.inventory.deviceconfig.in_effect import config_in_effect, version_chip_types
from apps.inventory.deviceconfig.specs import chip_type_to_spec
from apps.inventory.deviceconfig.versions import shape_warnings
from apps.inventory.hami.deviceconfig import (
    ChipTypeSpec,
    DeviceConfigError,
    TemplateSpec,
    parse_device_config,
    render_device_config,
)
from apps.inventory.hami.template_rule import FitResult, Scheduler, fit_template
from apps.inventory.models import (
    Chip,
    ChipType,
    Cluster,
    DeviceConfigVersion,
    Node,
    Slice,
    Template,
)
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
)


def cluster_get(identifier: int | str) -> Cluster:
    """The cluster with this id or name; NotFound otherwise."""
    # Only ASCII digits are an id ("²" is a name); names are never all digits.
    pk = parse_id(identifier)
    lookup = {"pk": pk} if pk is not None else {"name": str(identifier)}
    cluster = Cluster.objects.filter(**lookup).first()
    if cluster is None:
        raise NotFound(f"cluster {identifier!r} does not exist")
    return cluster


def chip_type_specs(cluster: Cluster) -> list[ChipTypeSpec]:
    """The portal's current chip types and templates of ``cluster``, in file order."""
    chip_types = (
        ChipType.objects.filter(cluster=cluster)
        .order_by("position", "common_word")
        .prefetch_related(
            Prefetch(
                "templates", queryset=Template.objects.order_by("position", "memory")
            )
        )
    )
    return [chip_type_to_spec(ct, ct.templates.all()) for ct in chip_types]


def deviceconfig_latest(
    cluster: Cluster, *, sources: tuple[str, ...] | None = None
) -> DeviceConfigVersion | None:
    """The newest stored device-config version (optionally of the given sources)."""
    versions = DeviceConfigVersion.objects.filter(cluster=cluster)
    if sources:
        versions = versions.filter(source__in=sources)
    return versions.order_by("-number").first()


def deviceconfig_render(cluster: Cluster) -> str:
    """The device-config.yaml the portal would publish for ``cluster``.

    The newest stored version is the base document: its shape, its comments and
    every key the portal does not manage are kept; ``vnpus`` is re-rendered from
    the chip types and templates in the database.
    """
    base = deviceconfig_latest(cluster)
    if base is None:
        raise NotFound(
            f"cluster {cluster.name!r} has no device-config yet: import or sync one first"
        )
    document = parse_device_config(base.text)
    return render_device_config(document, chip_type_specs(cluster))


def deviceconfig_shape_warnings(cluster: Cluster, text: str) -> list[dict[str, Any]]:
    """Running components that cannot (or may not) read the ``vnpus`` shape of ``text``.

    What publishing ``text`` would warn about (``effect`` ``crash`` needs
    ``confirm_shape``); empty for a text that does not parse (its errors are
    reported elsewhere).
    """
    try:
        document = parse_device_config(text)
    except DeviceConfigError:
        return []
    return [dataclasses.asdict(r) for r in shape_warnings(cluster, document)]


def deviceconfig_version_get(
    cluster: Cluster | None, version_id: int
) -> DeviceConfigVersion:
    """A stored version by id (limited to ``cluster`` when given)."""
    versions = DeviceConfigVersion.objects.all()
    if cluster is not None:
        versions = versions.filter(cluster=cluster)
    version = versions.filter(pk=version_id).first()
    if version is None:
        raise NotFound(f"device-config version {version_id} does not exist")
    return version


def text_diff(before: str, after: str, *, before_label: str, after_label: str) -> str:
    """A unified diff between two texts ('' when equal)."""
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            fromfile=before_label,
            tofile=after_label,
        )
    )


def template_fit(
    cluster: Cluster,
    *,
    common_word: str,
    memory: int | None,
    scheduler: Scheduler = Scheduler.HAMI,
) -> FitResult:
    """Which template a request of ``memory`` MB of ``common_word`` gets now.

    By the config the scheduler loaded (``config_in_effect``), which may be
    older than the published one until it restarts.
    """
    return _fit_by(
        cluster, config_in_effect(cluster).chip_types, common_word, memory, scheduler
    )


def template_fit_answer(
    cluster: Cluster,
    *,
    common_word: str,
    memory: int | None,
    scheduler: Scheduler = Scheduler.HAMI,
) -> dict[str, Any]:
    """The fit now, the version it is by, and the fit after a pending restart.

    ``after_restart`` is the published version's answer when the scheduler
    still runs an older one and the two differ (null otherwise).
    """
    effect = config_in_effect(cluster)
    now = _fit_by(cluster, effect.chip_types, common_word, memory, scheduler)
    after: FitResult | None = None
    latest = deviceconfig_changed_at(cluster) if effect.pending_restart else None
    if latest is not None:
        published = version_chip_types(latest)
        spec = next((c for c in published if c.common_word == common_word), None)
        if spec is not None:
            candidate = fit_template(spec, memory, scheduler=scheduler)
            after = candidate if candidate != now else None
    return {
        **dataclasses.asdict(now),
        "config_version": effect.version,
        "published_version": effect.published,
        "after_restart": dataclasses.asdict(after) if after else None,
    }


def _fit_by(
    cluster: Cluster,
    chip_types: Iterable[ChipTypeSpec],
    common_word: str,
    memory: int | None,
    scheduler: Scheduler,
) -> FitResult:
    known = list(chip_types)
    for spec in known:
        if spec.common_word == common_word:
            return fit_template(spec, memory, scheduler=scheduler)
    names = ", ".join(sorted(ct.common_word for ct in known)) or "none"
    raise ValidationFailed(
        f"no chip type {common_word!r} in cluster {cluster.name!r}",
        detail={"chip_type": [f"unknown chip type {common_word!r}; known: {names}"]},
    )


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
#: for ``values_list``: a column is the field of its name, but for the node's.
CHIP_USAGE_FIELDS = tuple(
    {"node": "node__name"}.get(column, column) for column in CHIP_COLUMNS
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
    rows = (
        Chip.objects.filter(cluster=cluster)
        .order_by("node__name", "common_word", "index")
        .values_list(*CHIP_USAGE_FIELDS)
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
    from apps.inventory.choices import ConnectionKind

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
) -> ChipLoad:
    """A chip as the room calculation reads it, from its ROOM_FIELDS in order
    (healthy and uncordoned: eligible)."""
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
        eligible=healthy and not cordoned,
    )


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
    from django.db.models import F

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
    return chips.filter(room, healthy=True, cordoned=False)


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


# --- publishing: the portal's baseline and drift recorded by sync -----------------
# (DB only, no cluster API call; the live reads are in apps.inventory.deviceconfig.liveconfig
# and apps.inventory.deviceconfig.restarts)


def deviceconfig_baseline(cluster: Cluster) -> DeviceConfigVersion | None:
    """The version the portal last saw live and owns ("last seen"), the drift baseline.

    Published and adopted versions are texts the ConfigMap held with the
    portal's consent. An ``imported`` version is only a draft (a file made the
    portal's chip types, nothing was written to the cluster), so it never
    becomes the baseline: a scripted import then publish would otherwise see
    the untouched live config as a hand edit. ``observed`` ones are what sync
    saw someone else write; they become the baseline only once adopted.
    """
    from apps.inventory.choices import DeviceConfigSource as Source

    return deviceconfig_latest(cluster, sources=(Source.PUBLISHED, Source.ADOPTED))


def deviceconfig_last_live(cluster: Cluster) -> DeviceConfigVersion | None:
    """The newest version that the ConfigMap held (published, adopted or observed).

    Imports are drafts and never were live, so sync compares what it sees with
    this one, not with the newest version of all.
    """
    from apps.inventory.choices import DeviceConfigSource as Source

    return deviceconfig_latest(
        cluster, sources=(Source.PUBLISHED, Source.ADOPTED, Source.OBSERVED)
    )


def deviceconfig_changed_at(cluster: Cluster) -> DeviceConfigVersion | None:
    """The newest version that changed what the cluster's components should load.

    See :func:`apps.inventory.deviceconfig.in_effect.changing_versions`. Its
    ``created_at`` is the "published at" time that restart state compares pod
    start times with.
    """
    from apps.inventory.deviceconfig.in_effect import changing_versions

    return changing_versions(cluster).first()


def deviceconfig_unpublished(cluster: Cluster) -> str:
    """The portal's edits not yet published: a diff from its baseline to what it would publish.

    What an adoption discards, so the UI can say so before an admin confirms.
    """
    baseline = deviceconfig_baseline(cluster)
    return text_diff(
        baseline.text if baseline else "",
        deviceconfig_render(cluster),
        before_label=f"v{baseline.number if baseline else 0} (baseline)",
        after_label="portal (unpublished)",
    )


def deviceconfig_drift_recorded(cluster: Cluster) -> dict[str, Any]:
    """Drift as sync recorded it, for the UI: no call to the cluster.

    There is drift when the newest version seen live is an ``observed`` one whose
    text differs from the baseline (someone edited the ConfigMap by hand and
    nobody adopted or published over it yet).

    Returns:
        ``in_sync``, ``baseline_version`` and ``live_version`` (numbers or
        None), ``live_resource_version`` and ``diff`` (baseline to observed).
    """
    from apps.inventory.choices import DeviceConfigSource as Source

    baseline = deviceconfig_baseline(cluster)
    newest = deviceconfig_last_live(cluster)
    observed = newest if newest and newest.source == Source.OBSERVED else None
    drifted = observed is not None and (
        baseline is None or observed.text != baseline.text
    )
    live = observed if drifted else baseline
    return {
        "in_sync": not drifted,
        "baseline_version": baseline.number if baseline else None,
        "live_version": live.number if live else None,
        "live_resource_version": live.resource_version if live else "",
        "diff": text_diff(
            baseline.text if baseline else "",
            observed.text,
            before_label=f"v{baseline.number if baseline else 0} (baseline)",
            after_label=f"v{observed.number} (observed)",
        )
        if drifted and observed is not None
        else "",
    }


def usage_history(
    cluster: Cluster, *, hours: int = 6, chip_type: str | None = None
) -> QuerySet[Any]:
    """Usage samples of the last ``hours``, oldest first."""
    from datetime import timedelta

    from django.utils import timezone

    from apps.inventory.models import UsageSample

    samples = UsageSample.objects.filter(
        cluster=cluster, at__gte=timezone.now() - timedelta(hours=hours)
    )
    if chip_type:
        samples = samples.filter(common_word=chip_type)
    return samples.order_by("at", "common_word")
