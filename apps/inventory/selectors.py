"""Reads of the inventory: clusters, specs, rendered configs, usage and fit."""

from __future__ import annotations

import difflib
from collections import defaultdict
from typing import Any

from django.db.models import Count, Prefetch, QuerySet

from apps.common.exceptions import NotFound, ValidationFailed
from apps.inventory.hami.deviceconfig import (
    ChipTypeSpec,
    parse_device_config,
    render_device_config,
)
from apps.inventory.hami.fit import FitResult, fit_template
from apps.inventory.models import (
    Chip,
    ChipType,
    Cluster,
    DeviceConfigVersion,
    Slice,
    Template,
)
from apps.inventory.specs import chip_type_to_spec


def cluster_get(identifier: int | str) -> Cluster:
    """The cluster with this id or name; NotFound otherwise."""
    lookup = (
        {"pk": int(identifier)} if str(identifier).isdigit() else {"name": identifier}
    )
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
    cluster: Cluster, *, common_word: str, memory: int | None
) -> FitResult:
    """Which template a request of ``memory`` MB of ``common_word`` gets (HAMi's rule)."""
    for spec in chip_type_specs(cluster):
        if spec.common_word == common_word:
            return fit_template(spec, memory)
    known = (
        ", ".join(sorted(ct.common_word for ct in chip_type_specs(cluster))) or "none"
    )
    raise ValidationFailed(
        f"no chip type {common_word!r} in cluster {cluster.name!r}",
        detail={"chip_type": [f"unknown chip type {common_word!r}; known: {known}"]},
    )


def chip_queryset() -> QuerySet[Chip]:
    """Chips with their node, for lists."""
    return Chip.objects.select_related("node", "cluster")


def cluster_summary(cluster: Cluster) -> dict[str, Any]:
    """Totals per chip type: chips, healthy chips, slices, memory and slots used/free."""
    per_type: dict[str, dict[str, int]] = defaultdict(
        lambda: {
            "chips": 0,
            "healthy_chips": 0,
            "memory_total": 0,
            "memory_used": 0,
            "slots_total": 0,
            "slots_used": 0,
            "aicore_total": 0,
            "aicore_used": 0,
            "aicpu_total": 0,
            "aicpu_used": 0,
        }
    )
    rows = Chip.objects.filter(cluster=cluster).values_list(
        "common_word",
        "healthy",
        "memory",
        "memory_used",
        "slots",
        "slots_used",
        "aicore",
        "aicore_used",
        "aicpu",
        "aicpu_used",
    )
    for (
        cw,
        healthy,
        mem,
        mem_used,
        slots,
        slots_used,
        core,
        core_used,
        cpu,
        cpu_used,
    ) in rows:
        totals = per_type[cw]
        totals["chips"] += 1
        totals["healthy_chips"] += int(healthy)
        totals["memory_total"] += mem
        totals["memory_used"] += mem_used
        totals["slots_total"] += slots
        totals["slots_used"] += slots_used
        totals["aicore_total"] += core
        totals["aicore_used"] += core_used
        totals["aicpu_total"] += cpu
        totals["aicpu_used"] += cpu_used
    slices = dict(
        Slice.objects.filter(cluster=cluster)
        .values_list("common_word")
        .annotate(n=Count("id"))
        .values_list("common_word", "n")
    )
    chip_types = []
    for cw in sorted(
        set(per_type)
        | set(
            ChipType.objects.filter(cluster=cluster).values_list(
                "common_word", flat=True
            )
        )
    ):
        totals = per_type[cw]
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


CHIP_USAGE_COLUMNS = (
    "id",
    "node__name",
    "common_word",
    "index",
    "uuid",
    "healthy",
    "cordoned",
    "slots_used",
    "slots",
    "memory_used",
    "memory",
    "aicore_used",
    "aicore",
    "aicpu_used",
    "aicpu",
)


def chip_usage(cluster: Cluster) -> dict[str, Any]:
    """Per-chip usage as compact rows: one list of columns, one array per chip.

    At 8,000 chips a list of dicts costs several times the bytes of the same data
    as arrays, and the UI renders from arrays anyway.
    """
    rows = (
        Chip.objects.filter(cluster=cluster)
        .order_by("node__name", "common_word", "index")
        .values_list(*CHIP_USAGE_COLUMNS)
    )
    columns = [c.replace("node__name", "node") for c in CHIP_USAGE_COLUMNS]
    return {
        "cluster": cluster.name,
        "columns": columns,
        "rows": [list(r) for r in rows],
    }


def connected_cluster_ids() -> list[int]:
    """Ids of the clusters sync should watch (those with a connection configured)."""
    from apps.inventory.choices import ConnectionKind

    return list(
        Cluster.objects.exclude(connection=ConnectionKind.NONE)
        .order_by("pk")
        .values_list("pk", flat=True)
    )


def fragmentation(cluster: Cluster) -> list[dict[str, Any]]:
    """Per chip type: memory stranded on chips that cannot fit the smallest template.

    A chip strands its free memory when it has no free slot, or when its free
    memory is below the smallest template of its type.
    """
    smallest = {
        spec.common_word: min(
            (t.memory for t in spec.templates), default=spec.memory_allocatable
        )
        for spec in chip_type_specs(cluster)
    }
    result: dict[str, dict[str, Any]] = {}
    rows = Chip.objects.filter(cluster=cluster, healthy=True).values_list(
        "common_word", "memory", "memory_used", "slots", "slots_used"
    )
    for cw, memory, used, slots, slots_used in rows:
        entry = result.setdefault(
            cw,
            {
                "common_word": cw,
                "stranded_memory": 0,
                "stranded_chips": 0,
                "free_memory": 0,
                "smallest_template_memory": smallest.get(cw),
            },
        )
        free = max(0, memory - used)
        entry["free_memory"] += free
        if free and (slots_used >= slots or free < smallest.get(cw, 1)):
            entry["stranded_memory"] += free
            entry["stranded_chips"] += 1
    return sorted(result.values(), key=lambda e: e["common_word"])


# --- publishing: the portal's baseline and drift recorded by sync -----------------
# (DB only, no cluster API call; the live reads are in apps.inventory.liveconfig
# and apps.inventory.restarts)


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

    Published versions were written by the portal and observed ones by hand,
    so both change the ConfigMap; so does an adoption other than the first
    sync's (the first one only records what the running pods already read).
    Imports do not touch the cluster. Its ``created_at`` is the "published
    at" time that restart state compares pod start times with.
    """
    from django.db.models import Q

    from apps.inventory.choices import DeviceConfigSource as Source

    return (
        DeviceConfigVersion.objects.filter(cluster=cluster)
        .filter(
            Q(source__in=(Source.PUBLISHED, Source.OBSERVED))
            | Q(source=Source.ADOPTED, number__gt=1)
        )
        .order_by("-number")
        .first()
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
