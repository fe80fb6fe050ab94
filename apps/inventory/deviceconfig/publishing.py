"""Publishing the portal's device config to the cluster, and the writes around it.

This replaces ``kubectl edit cm hami-scheduler-device``. The rules, and why:

- **Never overwrite someone else's edit.** The baseline ("last seen") is the
  portal's newest own version (imported, published or adopted). A publish
  GETs the ConfigMap from the API server (not from the database, which sync
  may not have refreshed yet) and refuses with a 409 ``drift`` when its text
  differs from the baseline, showing last seen, live and proposed. An admin
  may pass ``force`` to publish over it deliberately.
- **Read-modify-write guarded by resourceVersion.** The write is a PUT of the
  object just read, with its resourceVersion; if anyone wrote in between the
  API server answers 409. When only metadata changed (a label, an annotation)
  the write is retried on the new object; when the text changed it becomes
  the same 409 ``drift`` with fresh data.
- **Keep what the portal does not manage.** The proposed text is rendered from
  the *live* document, so its shape (list or wrapper), other vendors' keys,
  unknown keys and comments come from the cluster; only ``vnpus`` entries
  come from the portal's chip types. Other data keys, labels and annotations
  of the ConfigMap are written back untouched.
- **Never publish an invalid config** (400 with the errors by field), and
  refuse a publish that would change nothing (400 ``no_change``): it would
  add a version and mark every component "restart pending" for nothing.
- **Never write a shape a running component cannot read unasked.** The
  ``vnpus`` shape of the proposal is checked against the versions of the
  running Volcano, HAMi scheduler and device plugin (from their images,
  ``apps.inventory.deviceconfig.versions``). A shape that one of them cannot parse (it
  would crash at its next start) is refused with a 400 naming
  ``confirm_shape`` unless the caller sends ``confirm_shape: true``; one it
  silently replaces by its default, or whose reader's version is unknown,
  is written with a warning (``shape_warnings``, also in the preview of
  ``GET /api/clusters/<id>/device-config/``).
- **No version unless the PUT succeeded.** Then one transaction stores the
  ``published`` version (author, reason, the resourceVersion the PUT
  returned) and the audit event with the diff.
- **A write the portal made is never drift.** Before the PUT a pending-write
  row records the text about to be written (committed on its own, so the
  publish endpoints run outside ATOMIC_REQUESTS). If the process dies after
  the PUT, the next publish or sync finds the live text equal to that row and
  records it as the ``published`` version it was meant to be, then goes on;
  no adopt is needed. A refused PUT (4xx) drops the row.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from django.utils import timezone
from django.utils.translation import gettext as _

from apps.audit.services import audit_record
from apps.common.exceptions import (
    NotFound,
)
from apps.inventory.choices import DeviceConfigSource
from apps.inventory.deviceconfig.guarded_write import (
    DEVICE_CONFIG,
    PublishResult,
    device_config_checks,
    guarded_publish,
)
from apps.inventory.deviceconfig.liveconfig import (
    LiveConfigMap,
    live_device_config_read,
)
from apps.inventory.deviceconfig.restarts import (
    RESTARTED_AT,
    restart_component_get,
    restart_states,
)
from apps.inventory.deviceconfig.selectors import deviceconfig_baseline
from apps.inventory.deviceconfig.services import (
    deviceconfig_import,
    deviceconfig_parse,
)
from apps.inventory.deviceconfig.specs import chip_type_specs
from apps.inventory.deviceconfig.whatif import (
    slice_name,
    slice_template,
    slices_broken_by_draft,
)
from apps.inventory.errors import (
    BreaksRunningSlices,
    NoChange,
)
from apps.inventory.hami.deviceconfig import (
    DeviceConfigError,
    parse_device_config,
    render_device_config,
)
from apps.inventory.kube import KubeError, cluster_gateway
from apps.inventory.models import Cluster, DeviceConfigVersion


def deviceconfig_publish(
    *,
    cluster: Cluster,
    actor: Any,
    reason: str,
    force: bool = False,
    confirm_shape: bool = False,
    confirm_breaking: Collection[str] = (),
    confirm_breaking_templates: Collection[str] = (),
    actor_name: str = "",
) -> PublishResult:
    """Write the portal's chip types and templates to the cluster's ConfigMap.

    Args:
        cluster: The cluster.
        actor: The user publishing (None for the command line).
        reason: Why; required, it goes to the version and the audit log.
        force: Publish even when the live text differs from the baseline
            (admin only).
        confirm_shape: Write even a ``vnpus`` shape that a running
            component cannot parse (it crashes at its next start).
        confirm_breaking: The running slices (``namespace/pod``) the caller
            agrees this publish breaks (their template removed or resized).
        confirm_breaking_templates: The templates (``commonWord/template``)
            whose running slices the caller agrees to break, whichever pods
            run them when the publish lands (pods come and go between a
            preview and a click). Every slice it breaks must be named by pod
            or by template.
        actor_name: Name recorded for a None actor.

    Returns:
        The new version, the diff, the validation and shape warnings.

    Raises:
        ValidationFailed: No reason, an invalid config, nothing to change
            (code ``no_change``), or a shape a running component cannot
            parse without ``confirm_shape`` (code ``unreadable_shape``), or
            running slices it breaks not all named in ``confirm_breaking``
            or ``confirm_breaking_templates`` (code ``breaks_running_slices``).
        Conflict: ``drift`` (someone else's edit; detail has the three-way
            diff) or ``no_baseline`` (adopt the live config first).
        PermissionDenied: ``force`` without the admin role.
        NotFound: The ConfigMap does not exist.
        ClusterUnavailable: The cluster could not be reached.
    """
    specs = chip_type_specs(cluster)

    def propose(live: LiveConfigMap, baseline: DeviceConfigVersion) -> str:
        # Unmanaged keys come from the cluster; a live text too broken to
        # parse (only ever written over with force) yields to the baseline.
        try:
            document = parse_device_config(live.text)
        except DeviceConfigError:
            document = parse_device_config(baseline.text)
        return render_device_config(document, specs)

    return guarded_publish(
        cluster=cluster,
        actor=actor,
        actor_name=actor_name,
        reason=reason,
        force=force,
        propose=propose,
        target=DEVICE_CONFIG,
        checks=device_config_checks(
            cluster,
            confirm_shape=confirm_shape,
            guard=lambda: _breaking_guard(
                cluster, confirm_breaking, confirm_breaking_templates
            ),
        ),
    )


def deviceconfig_rollback(
    *,
    cluster: Cluster,
    actor: Any,
    number: int,
    reason: str,
    force: bool = False,
    confirm_shape: bool = False,
    actor_name: str = "",
) -> PublishResult:
    """Publish exactly the text of version ``number`` again, then make it the portal's copy.

    A rollback is a new publish (a new version), with the same drift guard;
    the text is the old one verbatim, unmanaged keys and comments included,
    and the portal's chip types and templates are set from it.

    Args:
        cluster: The cluster.
        actor: The user (None for the command line).
        number: The version number to restore (``v3`` is 3).
        reason: Why; required.
        force: Publish over drift (admin only).
        confirm_shape: As for :func:`deviceconfig_publish`.
        actor_name: Name recorded for a None actor.

    Raises:
        NotFound: No such version.
        ValidationFailed: That version is not a valid config, no reason, it
            is what the cluster already has (``no_change``), or its shape is
            unreadable (``unreadable_shape``, as for publish).
        Conflict: As for :func:`deviceconfig_publish`.
        PermissionDenied: ``force`` without the admin role.
        ClusterUnavailable: The cluster could not be reached.
    """
    target = DeviceConfigVersion.objects.filter(cluster=cluster, number=number).first()
    if target is None:
        raise NotFound(
            _("cluster %(cluster)r has no device-config version %(version)s")
            % {"cluster": cluster.name, "version": number}
        )
    deviceconfig_parse(target.text)  # refuse an invalid one before any call
    return guarded_publish(
        cluster=cluster,
        actor=actor,
        actor_name=actor_name,
        reason=reason,
        force=force,
        propose=lambda live, baseline: target.text,
        target=DEVICE_CONFIG,
        checks=device_config_checks(
            cluster, confirm_shape=confirm_shape, restores=True
        ),
        rollback_of=target.number,
    )


def deviceconfig_adopt(
    *, cluster: Cluster, actor: Any, reason: str = "", actor_name: str = ""
) -> DeviceConfigVersion:
    """Make the live ConfigMap content the portal's (resolves drift the other way).

    The live text becomes an ``adopted`` version and the portal's chip types
    and templates are replaced with its own.

    Raises:
        ValidationFailed: The live config is invalid (``errors`` by field; an
            invalid config cannot be adopted), or it already is the baseline
            (``no_change``).
        NotFound: The ConfigMap does not exist.
        ClusterUnavailable: The cluster could not be reached.
    """
    live = live_device_config_read(cluster)
    baseline = deviceconfig_baseline(cluster)
    if baseline is not None and baseline.text == live.text:
        raise NoChange(
            _("nothing to adopt: the live device config is already v%(version)s")
            % {"version": baseline.number},
            detail={"non_field_errors": [_("the live device config is the portal's")]},
        )
    return deviceconfig_import(
        cluster_name=cluster.name,
        text=live.text,
        actor=actor,
        source=DeviceConfigSource.ADOPTED,
        reason=reason.strip() or "adopted the live device config",
        resource_version=live.resource_version,
        actor_name=actor_name,
    )


def workload_restart(
    *, cluster: Cluster, component: str, actor: Any, actor_name: str = ""
) -> dict[str, Any]:
    """Rollout-restart a component so that it reads the device config again.

    Same as ``kubectl rollout restart``: a strategic-merge PATCH of
    ``kubectl.kubernetes.io/restartedAt`` on the pod template, which makes the
    controller replace every pod. The caller confirms first (the API asks for
    ``confirm: true``); running pods are replaced.

    Returns:
        The component's restart state right after the PATCH, with
        ``restarted_at``.

    Raises:
        NotFound: Unknown component, or its workload does not exist.
        ClusterUnavailable: The cluster could not be reached.
    """
    target = restart_component_get(component)
    stamp = timezone.now().strftime("%Y-%m-%dT%H:%M:%SZ")
    body = {"spec": {"template": {"metadata": {"annotations": {RESTARTED_AT: stamp}}}}}
    with cluster_gateway(cluster) as gateway:
        try:
            gateway.call(
                "PATCH",
                target.path,
                body=body,
                content_type="application/strategic-merge-patch+json",
            )
        except KubeError as exc:
            if exc.status != 404:
                raise
            raise NotFound(
                _("%(kind)s %(object)s does not exist in cluster %(cluster)r")
                % {
                    "kind": target.kind,
                    "object": f"{target.namespace}/{target.name}",
                    "cluster": cluster.name,
                }
            ) from exc
    audit_record(
        actor=actor,
        actor_name=actor_name,
        action="component.restart",
        cluster=cluster,
        after={
            "component": target.name,
            "kind": target.kind,
            "namespace": target.namespace,
            "restarted_at": stamp,
        },
    )
    return restart_states(cluster, only=target)["components"][0]


# --- what a publish must not break unasked ---------------------------------------


def _breaking_guard(
    cluster: Cluster, pods: Collection[str], templates: Collection[str] = ()
) -> None:
    """Refuse to break running slices the caller has not accepted, by pod
    (``namespace/pod``) or by template (``commonWord/template``).

    A pod whose template is removed or resized keeps running, but HAMi and
    the device plugin no longer agree with what it holds; the person
    publishing must see and accept it, not click past a count. Accepting a
    template accepts whichever pods run it when the publish lands: on a busy
    cluster the pod list is stale by the time it is clicked.
    """
    broken = slices_broken_by_draft(cluster)
    accepted_pods, accepted_templates = set(pods), set(templates)
    unconfirmed = [
        row
        for row in broken
        if slice_name(row) not in accepted_pods
        and slice_template(row) not in accepted_templates
    ]
    if not unconfirmed:
        return
    listed = "; ".join(f"{slice_name(r)} ({r['reason']})" for r in unconfirmed[:20])
    more = (
        _(" and %(count)d more") % {"count": len(unconfirmed) - 20}
        if len(unconfirmed) > 20
        else ""
    )
    named = ", ".join(sorted({slice_template(r) for r in unconfirmed}))
    raise BreaksRunningSlices(
        _("this publish breaks %(count)d running slice(s): %(slices)s")
        % {"count": len(unconfirmed), "slices": listed + more},
        detail={
            "confirm_breaking": [
                _(
                    "this publish breaks %(count)d running slice(s): %(slices)s; "
                    "name each one (namespace/pod) in confirm_breaking, or their "
                    "templates in confirm_breaking_templates, to publish anyway"
                )
                % {"count": len(unconfirmed), "slices": listed + more}
            ],
            "confirm_breaking_templates": [
                f"the slices it breaks use {named}: name these in "
                "confirm_breaking_templates to accept whichever pods run them"
            ],
        },
    )
