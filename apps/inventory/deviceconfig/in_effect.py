"""The device config in effect: the version the running scheduler loaded.

HAMi's scheduler, the device plugin and Volcano read device-config.yaml once,
when they start (facts, section "device config"); a publish or a hand edit
reaches them only through a restart. In between, a request is placed by the
templates the scheduler loaded: the portal once booked vir02 at the published
5120 MB while HAMi gave the pod the loaded 6144 MB. So the allocator, the fit
answers and the chip room are all read here, from the version in effect, and
the API shows it beside the published one.

The version in effect is the newest one that changed the ConfigMap at or
before the start of the scheduler's oldest pod. That start is read from the
cluster by ``refresh.config_loaded_refresh`` (a beat task, and after a restart);
until it is known (no pod seen, the workload missing) the published version is
taken, as the portal did before, and the answer says so.

Not the Template rows: those hold the admin's unpublished edits, which no
component has read.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any

from django.db.models import Q, QuerySet
from django.utils.translation import gettext as _

from apps.inventory.choices import DeviceConfigSource as Source
from apps.inventory.deviceconfig.specs import chip_type_specs
from apps.inventory.hami.deviceconfig import (
    ChipTypeSpec,
    DeviceConfigError,
    parse_device_config,
)
from apps.inventory.models import Cluster, ConfigVersionBase, DeviceConfigVersion

log = logging.getLogger(__name__)


def changing_versions(
    cluster: Cluster, versions: type[ConfigVersionBase] = DeviceConfigVersion
) -> QuerySet[Any]:
    """The versions that changed what the cluster's components load, newest first.

    Published versions were written by the portal and observed ones by hand;
    an adoption other than the first sync's also records a changed ConfigMap
    (the first one records what the running pods already read). Imports are
    drafts and never reach the cluster. ``versions``: whose history (the
    device config's, or the node config's).
    """
    return (
        versions.objects.filter(cluster=cluster)  # type: ignore[attr-defined]
        .filter(
            Q(source__in=(Source.PUBLISHED, Source.OBSERVED))
            | Q(source=Source.ADOPTED, number__gt=1)
        )
        .order_by("-number")
    )


def loaded_version(
    cluster: Cluster,
    started_at: datetime,
    versions: type[ConfigVersionBase] = DeviceConfigVersion,
) -> Any:
    """The version a component that started at ``started_at`` read.

    The newest changing version stored at or before that start; a pod older
    than every change read the first version (the one the first sync found).
    None: the cluster has no version yet.
    """
    found = (
        changing_versions(cluster, versions)
        .filter(created_at__lt=_read_before(started_at))
        .first()
    )
    return found or first_seen(cluster, versions)


def _read_before(started_at: datetime) -> datetime:
    """A version stored before this instant was read by a component that
    started at ``started_at``: Kubernetes stamps whole seconds, so a pod
    started in the second of a change read it (as restarts.py decides "in
    effect")."""
    return started_at.replace(microsecond=0) + timedelta(seconds=1)


def first_seen(
    cluster: Cluster, versions: type[ConfigVersionBase] = DeviceConfigVersion
) -> Any:
    """The oldest version that was live (imports are drafts, never live)."""
    return (
        versions.objects.filter(cluster=cluster)  # type: ignore[attr-defined]
        .exclude(source=Source.IMPORTED)
        .order_by("number")
        .first()
    )


@lru_cache(maxsize=64)
def _chip_types_of(text: str) -> tuple[ChipTypeSpec, ...] | str:
    """The chip types of a version's text, or why it does not parse.

    A version's text never changes, so its parse is kept (the scheduling
    pass reads it every few seconds).
    """
    try:
        return tuple(parse_device_config(text).chip_types())
    except DeviceConfigError as error:
        return str(error)


def version_chip_types(version: DeviceConfigVersion) -> tuple[ChipTypeSpec, ...]:
    """The chip types of a stored version (none when its text does not parse)."""
    found = _chip_types_of(version.text)
    return () if isinstance(found, str) else found


@dataclass(frozen=True)
class ConfigInEffect:
    """Which device config places the cluster's requests now, and why.

    Attributes:
        version: Number of the version in effect (None: no version stored).
        published: Number of the newest version that reached the ConfigMap.
        pending_restart: The scheduler still runs an older version than the
            published one; the published templates take effect when it restarts.
        loaded_by: The scheduler workload whose pods were read ("" unknown).
        loaded_at: When its oldest pod started (None: not known yet).
        why: One sentence for people.
        chip_types: The chip types and templates of the version in effect.
    """

    version: int | None
    published: int | None
    pending_restart: bool
    loaded_by: str
    loaded_at: datetime | None
    why: str
    chip_types: tuple[ChipTypeSpec, ...] = field(default=(), repr=False)

    def chip_type(self, common_word: str) -> ChipTypeSpec | None:
        return next((c for c in self.chip_types if c.common_word == common_word), None)


def config_in_effect(cluster: Cluster) -> ConfigInEffect:
    """The device config the cluster's scheduler places by (see the module doc)."""
    changing = changing_versions(cluster).first()
    published = changing or first_seen(cluster)
    if published is None:
        return _from_rows(
            cluster,
            _(
                "no live device config has been seen yet; the portal's templates are used"
            ),
        )
    if cluster.config_loaded_at is None:
        loaded = published
        why = _(
            "when the scheduler started is not known yet; the published version is assumed"
        )
    else:
        # Every submission asks this, so the history is read again only when
        # it can answer differently: with no change since the first sync, the
        # scheduler runs what that sync found (it started before the portal
        # saw it); a scheduler started after the newest change read that one.
        loaded = (
            published
            if changing is None
            or published.created_at < _read_before(cluster.config_loaded_at)
            else loaded_version(cluster, cluster.config_loaded_at) or published
        )
        values = {
            "component": cluster.config_loaded_by,
            "published": published.number,
            "loaded": loaded.number,
        }
        why = (
            _(
                "%(component)s started before v%(published)s was published and "
                "still places by v%(loaded)s; restart it to use v%(published)s"
            )
            % values
            if loaded.number < published.number
            else _("%(component)s loaded v%(loaded)s when it started") % values
        )
    chip_types = _chip_types_of(loaded.text)
    if isinstance(chip_types, str):
        # A stored text the portal cannot read (recorded by an older release,
        # or hand-written): its own templates, said plainly, rather than none.
        log.warning("device-config v%s does not parse: %s", loaded.number, chip_types)
        return _from_rows(
            cluster,
            _(
                "v%(version)s does not parse (%(error)s); the portal's templates are used"
            )
            % {"version": loaded.number, "error": chip_types},
        )
    pending = loaded.number < published.number
    if pending and _chip_types_of(published.text) == chip_types:
        # A newer version with the same chip types and templates (other keys
        # changed, or the same content adopted): a restart changes nothing.
        pending = False
        why = _(
            "%(component)s loaded v%(loaded)s, whose chip types and templates "
            "v%(published)s keeps: no restart is needed"
        ) % {
            "component": cluster.config_loaded_by,
            "loaded": loaded.number,
            "published": published.number,
        }
    return ConfigInEffect(
        version=loaded.number,
        published=published.number,
        pending_restart=pending,
        loaded_by=cluster.config_loaded_by,
        loaded_at=cluster.config_loaded_at,
        why=why,
        chip_types=chip_types,
    )


def _from_rows(cluster: Cluster, why: str) -> ConfigInEffect:
    """No live version to read (a cluster set up by import, not synced yet, or a
    stored text that does not parse): the portal's rows, as the only config."""
    return ConfigInEffect(
        version=None,
        published=None,
        pending_restart=False,
        loaded_by="",
        loaded_at=None,
        why=why,
        chip_types=tuple(chip_type_specs(cluster)),
    )


def chip_types_in_effect(cluster: Cluster) -> tuple[ChipTypeSpec, ...]:
    """The chip types (and templates) the cluster's scheduler places by."""
    return config_in_effect(cluster).chip_types


# --- which pod counts (``refresh`` reads the start time from the cluster) --------


def oldest_running_start(pods: list[dict[str, Any]]) -> datetime | None:
    """When the oldest pod that is not terminating started (None: no such pod
    with a start time): the pod whose loaded config may still place a pod.

    A terminating scheduler has been told to stop, and a rollout ends the old
    pod only once its replacement is Ready.
    """
    starts = [
        p["started_at"]
        for p in pods
        if p["started_at"] is not None and not p["terminating"]
    ]
    return min(starts) if starts else None
