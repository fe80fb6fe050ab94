"""The guarded read-modify-write of the device-config ConfigMap.

Shared by publish and rollback (``apps.inventory.deviceconfig.publishing``,
whose module docstring gives the rules): settle a killed publish's own
write, refuse someone else's edit unless forced, validate the proposal and
its shape, record the pending write, PUT with the resourceVersion read
(retrying when only metadata changed in between), then store the
``published`` version and its audit event in one transaction.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from apps.accounts.choices import Role
from apps.accounts.selectors import user_role
from apps.audit.services import audit_record
from apps.common.crashpoints import crash_point
from apps.common.exceptions import PermissionDenied, ValidationFailed
from apps.inventory import services
from apps.inventory.choices import DeviceConfigSource
from apps.inventory.deviceconfig.liveconfig import (
    DEVICE_CONFIG_KEY,
    LiveConfigMap,
    configmap_path,
    live_device_config_read,
)
from apps.inventory.deviceconfig.refresh import config_loaded_refresh_soon
from apps.inventory.deviceconfig.selectors import deviceconfig_baseline, text_diff
from apps.inventory.deviceconfig.services import (
    deviceconfig_parse,
    deviceconfig_pending_settle,
    deviceconfig_pending_write_claim,
    deviceconfig_pending_write_record,
    deviceconfig_version_store,
)
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
from apps.inventory.models import Cluster, DeviceConfigPendingWrite, DeviceConfigVersion

# A metadata-only write between our GET and PUT is retried this many times.
MAX_ATTEMPTS = 3

Propose = Callable[[LiveConfigMap, DeviceConfigVersion], str]


@dataclass(frozen=True)
class PublishResult:
    """What a publish (or rollback) wrote.

    Attributes:
        version: The new ``published`` version.
        diff: Unified diff from the live text it replaced to the new text.
        warnings: Validation warnings of the new text (slot counts...).
        previous_resource_version: The ConfigMap's resourceVersion before.
        forced: It was published over drift (``force``).
        rollback_of: The version number it restored, for a rollback.
        shape_warnings: Running components that cannot (or may not) read
            the written ``vnpus`` shape.
    """

    version: DeviceConfigVersion
    diff: str
    warnings: tuple[Issue, ...]
    previous_resource_version: str
    forced: bool = False
    rollback_of: int | None = None
    shape_warnings: tuple[ShapeReader, ...] = ()


@dataclass(frozen=True)
class _Publish:
    """One publish's inputs, as the caller gave them."""

    cluster: Cluster
    actor: Any
    actor_name: str
    reason: str
    force: bool
    propose: Propose
    confirm_shape: bool
    rollback_of: int | None
    guard: Callable[[], None] | None


@dataclass(frozen=True)
class _Written:
    """What the PUT wrote, and over what."""

    live: LiveConfigMap  # the object written over (its last read)
    text: str
    document: DeviceConfigDocument
    warnings: tuple[Issue, ...]
    readers: tuple[ShapeReader, ...]
    pending: DeviceConfigPendingWrite
    resource_version: str


def guarded_publish(
    *,
    cluster: Cluster,
    actor: Any,
    actor_name: str,
    reason: str,
    force: bool,
    propose: Propose,
    confirm_shape: bool = False,
    rollback_of: int | None = None,
    guard: Callable[[], None] | None = None,
) -> PublishResult:
    """Write ``propose``'s text over the live ConfigMap, guarded (see the module doc).

    ``guard`` runs before each write, once the baseline is settled; it
    raises to refuse the write.
    """
    job = _Publish(
        cluster=cluster,
        actor=actor,
        actor_name=actor_name,
        reason=_required_reason(reason),
        force=force,
        propose=propose,
        confirm_shape=confirm_shape,
        rollback_of=rollback_of,
        guard=guard,
    )
    if force:
        _require_admin_for_force(actor)
    baseline = deviceconfig_baseline(cluster)
    if baseline is None:
        raise NoBaseline(
            f"cluster {cluster.name!r} has no device config the portal owns yet: "
            "sync or adopt the live one first"
        )
    with cluster_gateway(cluster) as gateway:
        live = live_device_config_read(cluster, gateway)
        baseline = _settled_baseline(cluster, live, baseline)
        # The live text we may write over: the baseline, or with force the
        # drifted text the admin chose to replace.
        accepted = baseline.text
        if live.text != baseline.text:
            if not force:
                raise _drift_conflict(
                    cluster,
                    baseline,
                    live,
                    _safe_propose(propose, live, baseline),
                    "the device config was changed outside the portal since "
                    f"v{baseline.number}; adopt it or publish over it (force)",
                )
            accepted = live.text
        written = _write(job, gateway, live, baseline, accepted)
    crash_point("after_configmap_put")
    # The scheduler's start must be known before a request is placed by the
    # config in effect (apps.inventory.deviceconfig.in_effect), whoever records the version.
    config_loaded_refresh_soon(cluster.pk)
    return _record(job, written, baseline, forced=accepted != baseline.text)


def _required_reason(reason: str) -> str:
    reason = reason.strip()
    if not reason:
        raise ValidationFailed(
            "reason: required",
            detail={
                "reason": ["say why; it is kept with the version and the audit log"]
            },
        )
    return reason


def _settled_baseline(
    cluster: Cluster, live: LiveConfigMap, baseline: DeviceConfigVersion
) -> DeviceConfigVersion:
    """The baseline, once a publish killed after its PUT is recorded.

    Its live text is the portal's own: settled here, or by a sync that
    claimed the pending write first (then the baseline read again is that
    write).
    """
    if live.text == baseline.text:
        return baseline
    return (
        deviceconfig_pending_settle(
            cluster=cluster, text=live.text, resource_version=live.resource_version
        )
        or deviceconfig_baseline(cluster)
        or baseline
    )


def _write(
    job: _Publish,
    gateway: Gateway,
    live: LiveConfigMap,
    baseline: DeviceConfigVersion,
    accepted: str,
) -> _Written:
    """Validate, record the pending write and PUT; retried while only the
    ConfigMap's metadata changed since it was read."""
    for attempt in range(1, MAX_ATTEMPTS + 1):
        proposed = job.propose(live, baseline)
        document, warnings = _validated(proposed, live)
        if proposed == live.text:
            raise NoChange(
                "nothing to publish: the cluster already has this device config",
                detail={"non_field_errors": ["the live device config is the same"]},
            )
        if job.guard is not None:
            job.guard()
        readers = _shape_guard(job.cluster, document, job.confirm_shape)
        pending = deviceconfig_pending_write_record(
            cluster=job.cluster,
            text=proposed,
            actor=job.actor,
            actor_name=job.actor_name,
            reason=job.reason,
            forced=live.text != baseline.text,
            rollback_of=job.rollback_of,
            baseline_number=baseline.number,
            previous_resource_version=live.resource_version,
        )
        try:
            new_rv = _put(gateway, job.cluster, live, proposed)
        except KubeError as exc:
            if exc.status is not None and 400 <= exc.status < 500:
                # Refused: nothing was written. (After a 5xx or a lost
                # connection the write may have landed; the row stays.)
                deviceconfig_pending_write_claim(pending)
            if exc.status != 409:
                raise
        else:
            return _Written(
                live, proposed, document, warnings, readers, pending, new_rv
            )
        fresh = live_device_config_read(job.cluster, gateway)
        if fresh.text != accepted or attempt == MAX_ATTEMPTS:
            raise _drift_conflict(
                job.cluster,
                baseline,
                fresh,
                _safe_propose(job.propose, fresh, baseline),
                "someone wrote the ConfigMap while the portal was publishing; "
                "nothing was written",
            )
        live = fresh  # only metadata changed: retry on the new resourceVersion
    raise AssertionError("unreachable: the last attempt returns or raises")


def _record(
    job: _Publish, written: _Written, baseline: DeviceConfigVersion, *, forced: bool
) -> PublishResult:
    """Store the ``published`` version and its audit event, in one transaction."""
    cluster, live = job.cluster, written.live
    diff = text_diff(
        live.text,
        written.text,
        before_label=f"live (resourceVersion {live.resource_version})",
        after_label=f"published (resourceVersion {written.resource_version})",
    )

    def result(version: DeviceConfigVersion) -> PublishResult:
        return PublishResult(
            version=version,
            diff=diff,
            warnings=written.warnings,
            previous_resource_version=live.resource_version,
            forced=forced,
            rollback_of=job.rollback_of,
            shape_warnings=written.readers,
        )

    with transaction.atomic():
        if not deviceconfig_pending_write_claim(written.pending):
            # Sync saw the new text first and recorded this very write.
            recorded = deviceconfig_baseline(cluster)
            if recorded is not None and recorded.text == written.text:
                return result(recorded)
        before_specs = [dataclasses.asdict(s) for s in chip_type_specs(cluster)]
        version = deviceconfig_version_store(
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
            "version": baseline.number,
            "resource_version": live.resource_version,
        }
        if job.rollback_of is not None:
            # A plain publish wrote the portal's own chip types; a rollback
            # makes the restored text the portal's copy again.
            services.chip_types_replace(
                cluster=cluster, specs=written.document.chip_types()
            )
            before["chip_types"] = before_specs
            after["chip_types"] = [
                dataclasses.asdict(s) for s in chip_type_specs(cluster)
            ]
        audit_record(
            actor=job.actor,
            actor_name=job.actor_name,
            action="deviceconfig.publish",
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
            "publishing over drift (force) needs the admin role",
            detail={"force": ["only an admin may publish over someone else's edit"]},
        )


def _drift_conflict(
    cluster: Cluster,
    baseline: DeviceConfigVersion,
    live: LiveConfigMap,
    proposed: str,
    message: str,
) -> Drift:
    last_seen = f"v{baseline.number} (last seen)"
    return Drift(
        f"cluster {cluster.name!r}: {message}",
        detail={
            "baseline_version": baseline.number,
            "live_resource_version": live.resource_version,
            "last_seen": baseline.text,
            "live": live.text,
            "proposed": proposed,
            "diff_live": text_diff(
                baseline.text,
                live.text,
                before_label=last_seen,
                after_label=f"live (resourceVersion {live.resource_version})",
            ),
            "diff_proposed": text_diff(
                baseline.text, proposed, before_label=last_seen, after_label="proposed"
            ),
        },
    )


def _safe_propose(
    propose: Propose, live: LiveConfigMap, baseline: DeviceConfigVersion
) -> str:
    # The proposal only illustrates a conflict here; never fail while explaining one.
    try:
        return propose(live, baseline)
    except DeviceConfigError:
        return ""


def _validated(
    proposed: str, live: LiveConfigMap
) -> tuple[DeviceConfigDocument, tuple[Issue, ...]]:
    """Parse and validate the proposal; warnings compare with the live chip types."""
    document, _ = deviceconfig_parse(proposed)
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


def _put(gateway: Gateway, cluster: Cluster, live: LiveConfigMap, text: str) -> str:
    """PUT the object just read with only the text changed; returns the new resourceVersion."""
    obj = dict(live.obj)
    obj["data"] = {**(live.obj.get("data") or {}), DEVICE_CONFIG_KEY: text}
    # The resourceVersion read with it makes the API server refuse a stale write.
    obj["metadata"] = {
        **(live.obj.get("metadata") or {}),
        "resourceVersion": live.resource_version,
    }
    answer = gateway.call("PUT", configmap_path(cluster), body=obj)
    return str((answer.get("metadata") or {}).get("resourceVersion", ""))
