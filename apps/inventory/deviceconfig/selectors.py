"""Reads of the device config: its stored versions, the portal's render of it,
its drift, and which template a request gets by the version in effect.

All from the database, no call to the cluster: the live reads are in
``liveconfig`` (the ConfigMap) and ``restarts`` (the components' pods).
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import logging
from collections.abc import Iterable
from typing import Any

from django.core.cache import cache
from django.utils.translation import gettext as _

from apps.common.exceptions import NotFound, ValidationFailed
from apps.inventory.choices import DeviceConfigSource as Source
from apps.inventory.deviceconfig import book
from apps.inventory.deviceconfig.in_effect import (
    changing_versions,
    config_in_effect,
    version_chip_types,
)
from apps.inventory.deviceconfig.specs import chip_type_specs
from apps.inventory.deviceconfig.versions import shape_warnings
from apps.inventory.hami.deviceconfig import (
    ChipTypeSpec,
    DeviceConfigError,
    config_to_raw,
    parse_device_config,
    render_device_config,
)
from apps.inventory.hami.template_rule import FitResult, Scheduler, fit_template
from apps.inventory.hami.validation import validate_configs
from apps.inventory.models import Cluster, DeviceConfigVersion


def deviceconfig_latest(
    cluster: Cluster, *, sources: tuple[str, ...] | None = None
) -> DeviceConfigVersion | None:
    """The newest stored device-config version (optionally of the given sources)."""
    version: DeviceConfigVersion | None = book.latest(
        DeviceConfigVersion, cluster, sources
    )
    return version


def deviceconfig_render(cluster: Cluster) -> str:
    """The device-config.yaml the portal would publish for ``cluster``.

    The newest stored version is the base document: its shape, its comments and
    every key the portal does not manage are kept; ``vnpus`` is re-rendered from
    the chip types and templates in the database.
    """
    base = deviceconfig_latest(cluster)
    if base is None:
        raise NotFound(
            _("cluster %(cluster)r has no device config yet: import or sync one first")
            % {"cluster": cluster.name}
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
        raise NotFound(
            _("device-config version %(version)s does not exist")
            % {"version": version_id}
        )
    return version


# difflib's cost grows with the product of the two texts' lengths where they
# differ line after line: two 900 KB versions (which an operator can create
# through the API) took 11-15 s of web CPU per diff, for any viewer. A real
# device config is a few hundred lines; past these budgets the diff is not
# computed (the marker says so, and how to compare them instead). At the limit
# the worst case measured about a quarter of a second.
MAX_DIFF_LINES = 4_000  # both texts together
MAX_DIFF_BYTES = 512 * 1024  # both texts together
# Versions never change: a diff of two of them is kept (keyed by their content).
DIFF_CACHE_SECONDS = 24 * 3600

log = logging.getLogger(__name__)


def text_diff(before: str, after: str, *, before_label: str, after_label: str) -> str:
    """A unified diff between two texts ('' when equal).

    Above ``MAX_DIFF_LINES`` or ``MAX_DIFF_BYTES`` (both texts together) no
    diff is computed: the headers and one ``# diff not computed: ...`` line
    are returned instead, decided by counting alone.
    """
    if before == after:
        return ""
    lines = before.count("\n") + after.count("\n") + 2
    size = len(before) + len(after)  # characters: a cheap lower bound of bytes
    if lines > MAX_DIFF_LINES or size > MAX_DIFF_BYTES:
        return (
            f"--- {before_label}\n+++ {after_label}\n"
            f"# diff not computed: the texts are too large to compare here "
            f"({lines} lines, {size} characters; the limit is {MAX_DIFF_LINES} "
            f"lines and {MAX_DIFF_BYTES} characters). Export both versions and "
            f"compare them locally.\n"
        )
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            fromfile=before_label,
            tofile=after_label,
        )
    )


def version_diff(version: DeviceConfigVersion, other: DeviceConfigVersion) -> str:
    """The unified diff from ``version`` to ``other``, kept in the shared cache.

    Keyed by the two texts' digests and labels, not only by the ids: a key can
    never answer for other content (ids are reused by a restored database).
    A cache that is down costs the computation, never the answer.
    """
    before_label, after_label = f"v{version.number}", f"v{other.number}"
    digest = hashlib.sha256()
    for part in (version.text, "\0", other.text, "\0", before_label, after_label):
        digest.update(part.encode("utf-8", "surrogatepass"))
    key = f"vnpu:deviceconfig:diff:{digest.hexdigest()}"
    try:
        kept = cache.get(key)
    except Exception as exc:  # any cache failure: compute it
        log.warning("device-config diff cache unreadable: %s", type(exc).__name__)
        kept = None
    if isinstance(kept, str):
        return kept
    diff = text_diff(
        version.text, other.text, before_label=before_label, after_label=after_label
    )
    try:
        cache.set(key, diff, timeout=DIFF_CACHE_SECONDS)
    except Exception as exc:  # the answer does not need the cache
        log.warning("device-config diff cache unwritable: %s", type(exc).__name__)
    return diff


# --- which template a request gets, by the version in effect --------------------


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
        _("no chip type %(chip_type)r in cluster %(cluster)r")
        % {"chip_type": common_word, "cluster": cluster.name},
        detail={
            "chip_type": [
                _("unknown chip type %(chip_type)r; known: %(known)s")
                % {"chip_type": common_word, "known": names}
            ]
        },
    )


# --- the portal's baseline, and drift as sync recorded it ------------------------


def deviceconfig_baseline(cluster: Cluster) -> DeviceConfigVersion | None:
    """The version the portal last saw live and owns ("last seen"), the drift baseline.

    Published and adopted versions are texts the ConfigMap held with the
    portal's consent. An ``imported`` version is only a draft (a file made the
    portal's chip types, nothing was written to the cluster), so it never
    becomes the baseline: a scripted import then publish would otherwise see
    the untouched live config as a hand edit. ``observed`` ones are what sync
    saw someone else write; they become the baseline only once adopted.
    """
    return deviceconfig_latest(cluster, sources=book.OWNED)


def deviceconfig_last_live(cluster: Cluster) -> DeviceConfigVersion | None:
    """The newest version that the ConfigMap held (published, adopted or observed).

    Imports are drafts and never were live, so sync compares what it sees with
    this one, not with the newest version of all.
    """
    return deviceconfig_latest(cluster, sources=book.LIVE)


def deviceconfig_changed_at(cluster: Cluster) -> DeviceConfigVersion | None:
    """The newest version that changed what the cluster's components should load.

    See :func:`apps.inventory.deviceconfig.in_effect.changing_versions`. Its
    ``created_at`` is the "published at" time that restart state compares pod
    start times with.
    """
    return changing_versions(cluster).first()


def deviceconfig_unloaded_since(
    cluster: Cluster, loaded: int | None
) -> DeviceConfigVersion | None:
    """The oldest changing version newer than version ``loaded`` (the one the
    scheduler runs): a restart has been pending since it was stored, however
    many versions followed it. The newest changing version when ``loaded`` is
    unknown."""
    if loaded is None:
        return deviceconfig_changed_at(cluster)
    return (
        changing_versions(cluster).filter(number__gt=loaded).order_by("number").first()
    )


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


def deviceconfig_state(cluster: Cluster) -> dict[str, Any]:
    """What ``GET /api/clusters/<id>/device-config/`` shows.

    The text the portal would publish (rendered from its chip types and
    templates), its validation as a whole config, its diff from the last stored
    version, the warnings of the components that would read its shape, and the
    config in effect (the version the running scheduler loaded).
    """
    rendered = deviceconfig_render(cluster)
    base = deviceconfig_latest(cluster)
    report = validate_configs(config_to_raw(chip_type_specs(cluster)))
    return {
        "yaml": rendered,
        "base_version": base.number if base else None,
        "diff_from_base": text_diff(
            base.text if base else "",
            rendered,
            before_label=f"v{base.number if base else 0}",
            after_label="portal",
        ),
        "errors": [dataclasses.asdict(i) for i in report.errors],
        "warnings": [dataclasses.asdict(i) for i in report.warnings],
        "shape_warnings": deviceconfig_shape_warnings(cluster, rendered),
        "in_effect": config_in_effect(cluster),
    }
