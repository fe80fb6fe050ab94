"""The guarded read-modify-write of a ConfigMap key the portal publishes.

Shared by publish and rollback of the device config
(``apps.inventory.deviceconfig.publishing``, whose module docstring gives the
rules) and of the device plugin's node config
(``apps.inventory.nodeconfig.publishing``): settle a killed publish's own
write, refuse someone else's edit unless forced, validate the proposal,
record the pending write, PUT with the resourceVersion read (retrying when
only metadata changed in between), then store the ``published`` version and
its audit event in one transaction. A :class:`WriteTarget` says which
ConfigMap key and history; :class:`Checks` say how one write is validated
and confirmed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils.translation import gettext as _

from apps.accounts.choices import Role
from apps.accounts.selectors import user_role
from apps.audit.services import audit_record
from apps.common.crashpoints import crash_point
from apps.common.exceptions import PermissionDenied, ValidationFailed
from apps.inventory import services
from apps.inventory.choices import DeviceConfigSource
from apps.inventory.deviceconfig import book
from apps.inventory.deviceconfig.book import ConfigBook
from apps.inventory.deviceconfig.liveconfig import (
    LiveConfigMap,
    live_device_config_read,
)
from apps.inventory.deviceconfig.refresh import config_loaded_refresh_soon
from apps.inventory.deviceconfig.selectors import text_diff
from apps.inventory.deviceconfig.services import DEVICE_CONFIG_BOOK, deviceconfig_parse
from apps.inventory.deviceconfig.specs import chip_type_specs
from apps.inventory.deviceconfig.versions import ShapeReader, shape_warnings
from apps.inventory.errors import (
    Drift,
    NoBaseline,
    NoChange,
    UnreadableShape,
    refuse_unless_confirmed,
)
from apps.inventory.hami.deviceconfig import (
    DeviceConfigDocument,
    DeviceConfigError,
    parse_device_config,
)
from apps.inventory.hami.validation import Issue, validate_configs
from apps.inventory.kube import Gateway, KubeError, cluster_gateway
from apps.inventory.models import Cluster, ConfigVersionBase, PendingWriteBase

# A metadata-only write between our GET and PUT is retried this many times.
MAX_ATTEMPTS = 3

Version = ConfigVersionBase
Propose = Callable[[LiveConfigMap, Any], str]
# What a ConfigMap holds, for comparing: (exists, text).
State = tuple[bool, str]


@dataclass(frozen=True)
class WriteTarget:
    """Which ConfigMap key a guarded write goes to, and its history.

    Attributes:
        book: Its versions and pending writes.
        read: GET the ConfigMap now (never from the database); a reader of a
            ConfigMap that may be absent returns one with ``exists`` False.
        written: Run after the PUT, before the version is stored.
    """

    book: ConfigBook
    read: Callable[[Cluster, Gateway], LiveConfigMap]
    written: Callable[[Cluster], None] | None = None


@dataclass(frozen=True)
class Checks:
    """How one write is checked, each step raising to refuse it.

    Attributes:
        validate: Parse and validate the proposal (ValidationFailed naming
            the field); returns its document and the warnings it may keep.
        confirm: Once the proposal is known to change something: refuse
            what the caller has not confirmed; returns notes for the result
            (the device config's shape readers).
        guard: Before each write, once the baseline is settled, with the
            live object and the baseline (None: no version, no ConfigMap).
        recorded: Inside the transaction that stores the version, with the
            document and the audit event's ``before`` and ``after`` to add to.
    """

    validate: Callable[[str, LiveConfigMap], tuple[Any, tuple[Issue, ...]]]
    confirm: Callable[[Any], tuple[Any, ...]] = lambda document: ()
    guard: Callable[[LiveConfigMap, Any], None] | None = None
    recorded: Callable[[Any, dict[str, Any], dict[str, Any]], None] | None = None


@dataclass(frozen=True)
class PublishResult:
    """What a publish (or rollback) wrote.

    Attributes:
        version: The new ``published`` version.
        diff: Unified diff from the live text it replaced to the new text.
        warnings: Validation warnings of the new text (slot counts...).
        previous_resource_version: The ConfigMap's resourceVersion before
            ("" when the publish created it).
        forced: It was published over drift (``force``).
        rollback_of: The version number it restored, for a rollback.
        shape_warnings: Running components that cannot (or may not) read
            the written ``vnpus`` shape (the device config's).
    """

    version: Any
    diff: str
    warnings: tuple[Issue, ...]
    previous_resource_version: str
    forced: bool = False
    rollback_of: int | None = None
    shape_warnings: tuple[ShapeReader, ...] = ()


@dataclass(frozen=True)
class _Publish:
    """One publish's inputs, as the caller gave them."""

    target: WriteTarget
    cluster: Cluster
    actor: Any
    actor_name: str
    reason: str
    force: bool
    propose: Propose
    checks: Checks
    rollback_of: int | None

    @property
    def title(self) -> str:
        return self.target.book.title


@dataclass(frozen=True)
class _Written:
    """What the PUT wrote, and over what."""

    live: LiveConfigMap  # the object written over (its last read)
    text: str
    document: Any
    warnings: tuple[Issue, ...]
    notes: tuple[Any, ...]
    pending: PendingWriteBase
    resource_version: str


def _state(live: LiveConfigMap) -> State:
    return live.exists, live.text


def _held(baseline: Version | None) -> State:
    """What the ConfigMap holds when it holds the baseline (None: no ConfigMap)."""
    return (True, baseline.text) if baseline is not None else (False, "")


def _number(baseline: Version | None) -> int:
    return baseline.number if baseline is not None else 0


def guarded_publish(
    *,
    cluster: Cluster,
    actor: Any,
    actor_name: str,
    reason: str,
    force: bool,
    propose: Propose,
    checks: Checks,
    target: WriteTarget,
    rollback_of: int | None = None,
) -> PublishResult:
    """Write ``propose``'s text over the live ConfigMap, guarded (see the module doc).

    A ConfigMap that does not exist is created when the history has no
    version the portal owns either and the target's checks allow it (the node
    config's refuse: the portal's RBAC grants no create); one that exists
    without such a version needs an adoption.
    """
    job = _Publish(
        target=target,
        cluster=cluster,
        actor=actor,
        actor_name=actor_name,
        reason=_required_reason(reason),
        force=force,
        propose=propose,
        checks=checks,
        rollback_of=rollback_of,
    )
    if force:
        _require_admin_for_force(actor)
    versions = target.book.versions
    with cluster_gateway(cluster) as gateway:
        live = target.read(cluster, gateway)
        baseline = _settled_baseline(
            job, live, book.latest(versions, cluster, book.OWNED)
        )
        if baseline is None and live.exists:
            raise NoBaseline(
                _(
                    "cluster %(cluster)r has no %(config)s the portal owns yet: "
                    "sync or adopt the live one first"
                )
                % {"cluster": cluster.name, "config": _(job.title)}
            )
        # What we may write over: the baseline, or with force the drifted
        # text the admin chose to replace.
        accepted = _held(baseline)
        if _state(live) != accepted:
            if not force:
                raise _drift_conflict(
                    job,
                    baseline,
                    live,
                    _safe_propose(propose, live, baseline),
                    _(
                        "the %(config)s was changed outside the portal since "
                        "v%(version)s; adopt it or publish over it (force)"
                    )
                    % {"config": _(job.title), "version": _number(baseline)},
                )
            accepted = _state(live)
        written = _write(job, gateway, live, baseline, accepted)
    crash_point("after_configmap_put")
    if target.written is not None:
        target.written(cluster)
    return _record(job, written, baseline, forced=accepted != _held(baseline))


def _required_reason(reason: str) -> str:
    reason = reason.strip()
    if not reason:
        raise ValidationFailed(
            _("reason: required"),
            detail={
                "reason": [_("say why; it is kept with the version and the audit log")]
            },
        )
    return reason


def _settled_baseline(
    job: _Publish, live: LiveConfigMap, baseline: Version | None
) -> Version | None:
    """The baseline, once a publish killed after its PUT is recorded.

    Its live text is the portal's own: settled here, or by a sync that
    claimed the pending write first (then the baseline read again is that
    write).
    """
    if _state(live) == _held(baseline) or not live.exists:
        return baseline
    book_ = job.target.book
    return (
        book.pending_settle(
            book_,
            cluster=job.cluster,
            text=live.text,
            resource_version=live.resource_version,
        )
        or book.latest(book_.versions, job.cluster, book.OWNED)
        or baseline
    )


def _write(
    job: _Publish,
    gateway: Gateway,
    live: LiveConfigMap,
    baseline: Version | None,
    accepted: State,
) -> _Written:
    """Validate, record the pending write and PUT; retried while only the
    ConfigMap's metadata changed since it was read."""
    for attempt in range(1, MAX_ATTEMPTS + 1):
        proposed = job.propose(live, baseline)
        document, warnings = job.checks.validate(proposed, live)
        if live.exists and proposed == live.text:
            raise NoChange(
                _("nothing to publish: the cluster already has this %(config)s")
                % {"config": _(job.title)},
                detail={
                    "non_field_errors": [
                        _("the live %(config)s is the same") % {"config": _(job.title)}
                    ]
                },
            )
        if job.checks.guard is not None:
            job.checks.guard(live, baseline)
        notes = job.checks.confirm(document)
        pending = book.pending_write_record(
            job.target.book,
            cluster=job.cluster,
            text=proposed,
            actor=job.actor,
            actor_name=job.actor_name,
            reason=job.reason,
            forced=_state(live) != _held(baseline),
            rollback_of=job.rollback_of,
            baseline_number=_number(baseline),
            previous_resource_version=live.resource_version,
        )
        try:
            new_rv = _put(gateway, job.cluster, live, proposed)
        except KubeError as exc:
            if exc.status is not None and 400 <= exc.status < 500:
                # Refused: nothing was written. (After a 5xx or a lost
                # connection the write may have landed; the row stays.)
                book.pending_write_claim(pending)
            if exc.status != 409:
                raise
        else:
            return _Written(live, proposed, document, warnings, notes, pending, new_rv)
        fresh = job.target.read(job.cluster, gateway)
        if _state(fresh) != accepted or attempt == MAX_ATTEMPTS:
            raise _drift_conflict(
                job,
                baseline,
                fresh,
                _safe_propose(job.propose, fresh, baseline),
                _(
                    "someone wrote the ConfigMap while the portal was publishing; "
                    "nothing was written"
                ),
            )
        live = fresh  # only metadata changed: retry on the new resourceVersion
    raise AssertionError("unreachable: the last attempt returns or raises")


def _record(
    job: _Publish, written: _Written, baseline: Version | None, *, forced: bool
) -> PublishResult:
    """Store the ``published`` version and its audit event, in one transaction."""
    cluster, live, book_ = job.cluster, written.live, job.target.book
    diff = text_diff(
        live.text,
        written.text,
        before_label=f"live (resourceVersion {live.resource_version})"
        if live.exists
        else "(no ConfigMap)",
        after_label=f"published (resourceVersion {written.resource_version})",
    )

    def result(version: Version) -> PublishResult:
        return PublishResult(
            version=version,
            diff=diff,
            warnings=written.warnings,
            previous_resource_version=live.resource_version,
            forced=forced,
            rollback_of=job.rollback_of,
            shape_warnings=written.notes,
        )

    with transaction.atomic():
        if not book.pending_write_claim(written.pending):
            # Sync saw the new text first and recorded this very write.
            recorded = book.latest(book_.versions, cluster, book.OWNED)
            if recorded is not None and recorded.text == written.text:
                return result(recorded)
        version = book.version_store(
            book_,
            cluster=cluster,
            text=written.text,
            source=DeviceConfigSource.PUBLISHED,
            actor=job.actor,
            reason=job.reason,
            resource_version=written.resource_version,
        )
        after: dict[str, Any] = {
            "version": version.number,
            "resource_version": written.resource_version,
            "diff": diff,
            "forced": forced,
            "rollback_of": job.rollback_of,
        }
        before: dict[str, Any] = {
            "version": baseline.number if baseline is not None else None,
            "resource_version": live.resource_version,
        }
        if job.checks.recorded is not None:
            job.checks.recorded(written.document, before, after)
        audit_record(
            actor=job.actor,
            actor_name=job.actor_name,
            action=f"{book_.action}.publish",
            target=version,
            cluster=cluster,
            before=before,
            after=after,
            reason=job.reason,
        )
    return result(version)


def _require_admin_for_force(actor: Any) -> None:
    # None is the command line: whoever runs manage.py owns the portal.
    role = user_role(actor) if actor is not None else Role.ADMIN
    if role is None or not role.allows(Role.ADMIN):
        raise PermissionDenied(
            _("publishing over drift (force) needs the admin role"),
            detail={"force": [_("only an admin may publish over someone else's edit")]},
        )


def _drift_conflict(
    job: _Publish,
    baseline: Version | None,
    live: LiveConfigMap,
    proposed: str,
    message: str,
) -> Drift:
    last_seen = f"v{_number(baseline)} (last seen)"
    base_text = baseline.text if baseline is not None else ""
    live_label = (
        f"live (resourceVersion {live.resource_version})"
        if live.exists
        else "live (no ConfigMap)"
    )
    return Drift(
        f"cluster {job.cluster.name!r}: {message}",
        detail={
            "baseline_version": baseline.number if baseline is not None else None,
            "live_resource_version": live.resource_version,
            "live_exists": live.exists,
            "last_seen": base_text,
            "live": live.text,
            "proposed": proposed,
            "diff_live": text_diff(
                base_text, live.text, before_label=last_seen, after_label=live_label
            ),
            "diff_proposed": text_diff(
                base_text, proposed, before_label=last_seen, after_label="proposed"
            ),
        },
    )


def _safe_propose(propose: Propose, live: LiveConfigMap, baseline: Any) -> str:
    # The proposal only illustrates a conflict here; never fail while explaining one.
    try:
        return propose(live, baseline)
    except (DeviceConfigError, ValidationFailed, ValueError):
        return ""


def _put(gateway: Gateway, cluster: Cluster, live: LiveConfigMap, text: str) -> str:
    """PUT the object just read with only the text changed (POST a new one when
    there was none); returns the new resourceVersion."""
    if not live.exists:
        # Creating: the API server answers 409 AlreadyExists to a racing creator.
        namespace, name = live.namespace_name
        body = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": namespace},
            "data": {live.key: text},
        }
        answer = gateway.call("POST", live.path.rsplit("/", 1)[0], body=body)
    else:
        obj = dict(live.obj)
        obj["data"] = {**(live.obj.get("data") or {}), live.key: text}
        # The resourceVersion read with it makes the API server refuse a stale write.
        obj["metadata"] = {
            **(live.obj.get("metadata") or {}),
            "resourceVersion": live.resource_version,
        }
        answer = gateway.call("PUT", live.path, body=obj)
    return str((answer.get("metadata") or {}).get("resourceVersion", ""))


# --- the device config's target and checks ---------------------------------------


def _device_config_read(cluster: Cluster, gateway: Gateway) -> LiveConfigMap:
    # Looked up at call time: tests replace the module's reader.
    return live_device_config_read(cluster, gateway)


DEVICE_CONFIG = WriteTarget(
    book=DEVICE_CONFIG_BOOK,
    read=_device_config_read,
    # The scheduler's start must be known before a request is placed by the
    # config in effect (apps.inventory.deviceconfig.in_effect), whoever
    # records the version.
    written=lambda cluster: config_loaded_refresh_soon(cluster.pk),
)


def device_config_checks(
    cluster: Cluster,
    *,
    confirm_shape: bool,
    guard: Callable[[], None] | None = None,
    restores: bool = False,
) -> Checks:
    """How a device-config write is checked: valid, its ``vnpus`` shape
    readable by the running components (or confirmed), ``guard`` (running
    slices), and for a rollback the restored chip types made the portal's."""

    def recorded(
        document: DeviceConfigDocument, before: dict[str, Any], after: dict[str, Any]
    ) -> None:
        # A plain publish wrote the portal's own chip types; a rollback
        # makes the restored text the portal's copy again.
        before["chip_types"] = [dataclasses.asdict(s) for s in chip_type_specs(cluster)]
        services.chip_types_replace(cluster=cluster, specs=document.chip_types())
        after["chip_types"] = [dataclasses.asdict(s) for s in chip_type_specs(cluster)]

    return Checks(
        validate=_validated,
        confirm=lambda document: _shape_guard(cluster, document, confirm_shape),
        # Checked once a killed publish's own write is settled as the
        # baseline, so a break that write made is not blamed on this one.
        guard=(lambda live, baseline: guard()) if guard is not None else None,
        recorded=recorded if restores else None,
    )


def _validated(
    proposed: str, live: LiveConfigMap
) -> tuple[DeviceConfigDocument, tuple[Issue, ...]]:
    """Parse and validate the proposal; warnings compare with the live chip types."""
    document, _warnings = deviceconfig_parse(proposed)
    try:
        previous = parse_device_config(live.text).raw_configs
    except DeviceConfigError:
        previous = None
    return document, validate_configs(document.raw_configs, previous=previous).warnings


def _shape_guard(
    cluster: Cluster, document: DeviceConfigDocument, confirmed: bool
) -> tuple[ShapeReader, ...]:
    """Refuse a shape a running component cannot parse unless confirmed; return the warnings."""
    readers = tuple(shape_warnings(cluster, document))
    crashing = [r for r in readers if r.effect == "crash"]
    if crashing:
        said = "; ".join(f"{r.message} ({r.fix})" for r in crashing)
        refuse_unless_confirmed(UnreadableShape, "confirm_shape", said, confirmed)
    return readers
