"""Isolating a chip through the device plugin's node config, and restoring it.

Isolate (``chip_isolate``), in this order, so that a refusal changes nothing:

1. the chip must be in service; the node's plugin must read the node config
   (v1.4.0+, ``--node_config_file`` wired: otherwise nothing would ever prove
   the isolation, so it is refused with the fix);
2. the node's plugin pod is found and checked: restarting it must not apply a
   device config whose restart the admin has not confirmed;
3. the chip becomes "isolating": from this commit on the portal's allocator
   never books it (``Chip.in_service``);
4. the chip's UUID is published into that node's ``filterDevices`` (the node
   config's own publish: validated, guarded by resourceVersion, versioned);
5. that node's plugin pod is deleted; the DaemonSet recreates it, and the new
   pod no longer registers the chip.

Sync then proves it (``apps.inventory.nodeconfig.proof``). A refusal in 4
gives the chip back its earlier state (nothing reached the cluster); any
other failure in 4 or 5 keeps "isolating" with what happened in
``isolation_seen``, and every attempt that got that far is audited with its
outcome. Each step commits on its own (the REST action runs outside the
request's transaction), so nothing the cluster holds is rolled back here.
Restore is the same with the UUID taken out of the filter.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.audit.services import audit_record
from apps.common.exceptions import (
    Conflict,
    NotFound,
    PermissionDenied,
    ValidationFailed,
)
from apps.inventory.choices import ChipIsolation
from apps.inventory.errors import IsolationState, NoChange
from apps.inventory.kube import KubeError, cluster_gateway
from apps.inventory.models import Chip
from apps.inventory.nodeconfig.isolation_hooks import (
    node_config_unread,
    node_filter_set,
)
from apps.inventory.nodeconfig.plugin_pods import (
    restart_plugin_pod,
    restartable_plugin_pod,
)
from apps.inventory.services.cordon import chips_broadcast

#: The states each action starts from.
_ISOLATE_FROM = (ChipIsolation.NONE,)
_RESTORE_FROM = (ChipIsolation.ISOLATING, ChipIsolation.ISOLATED)


def chip_isolate(*, chip: Chip, actor: Any, reason: str, actor_name: str = "") -> Chip:
    """Take ``chip`` out of service through its node's ``filterDevices``.

    ``actor`` is the user; a system actor (the isolation policy) passes
    ``actor=None`` and its name in ``actor_name``.

    Raises:
        ValidationFailed: No reason given, or the node's plugin does not read
            the node config (``detail`` says why and how to fix it).
        IsolationState: The chip is not in service.
        PluginRestartBlocked: A device-config restart is pending unconfirmed.
        NotFound: No device plugin pod runs on the node.
        ClusterUnavailable: The cluster could not be reached.
    """
    return _act(chip, actor, reason, actor_name, isolate=True)


def chip_restore(*, chip: Chip, actor: Any, reason: str, actor_name: str = "") -> Chip:
    """Put an isolated (or isolating) chip back: lift its filter, restart the plugin.

    Raises: as :func:`chip_isolate` (IsolationState: the chip is not isolated).
    """
    return _act(chip, actor, reason, actor_name, isolate=False)


def _act(
    chip: Chip, actor: Any, reason: str, actor_name: str, *, isolate: bool
) -> Chip:
    reason = reason.strip()
    if not reason:
        raise ValidationFailed(
            _("a reason is required"), detail={"reason": [_("required")]}
        )
    allowed = _ISOLATE_FROM if isolate else _RESTORE_FROM
    verb = "isolate" if isolate else "restore"
    if chip.isolation not in allowed:
        said = (
            _("chip %(chip)s is %(state)s: nothing to isolate")
            if isolate
            else _("chip %(chip)s is %(state)s: nothing to restore")
        )
        raise IsolationState(
            said % {"chip": chip.uuid, "state": chip.isolation or "in service"},
            detail={"isolation": chip.isolation},
        )
    node = chip.node.name
    problem = node_config_unread(chip.cluster, node)
    if problem:
        raise ValidationFailed(
            _(
                "the device plugin on node %(node)s does not read the node config: "
                "%(problem)s"
            )
            % {"node": node, "problem": problem},
            detail={"node": [problem]},
        )
    with cluster_gateway(chip.cluster) as gateway:
        # NotFound, Conflict or PluginRestartBlocked before anything is written
        pod = restartable_plugin_pod(gateway, chip.cluster, node)
        before = (chip.isolation, chip.isolation_reason, chip.isolation_by)
        _start(chip, actor_name or _name(actor), reason, isolate=isolate)
        outcome = "failed"
        try:
            version = _publish_filter(chip, before, actor, actor_name, verb, reason)
            try:
                restart_plugin_pod(gateway, pod)
            except KubeError as exc:
                _seen(
                    chip,
                    f"node config {version} published; restarting {pod} failed: {exc}",
                )
                raise
            _seen(chip, f"node config {version} published; plugin pod {pod} deleted")
            outcome = "done"
        finally:
            # Whatever reached the cluster is on record, with who and why.
            audit_record(
                actor=actor,
                actor_name=actor_name,
                action=f"chip.{verb}",
                target=chip,
                reason=reason,
                after={"uuid": chip.uuid, "node": node, "pod": pod,
                       "outcome": outcome, "seen": chip.isolation_seen},
            )  # fmt: skip
    return chip


def _publish_filter(
    chip: Chip,
    before: tuple[str, str, str],
    actor: Any,
    actor_name: str,
    verb: str,
    reason: str,
) -> str:
    """Publish the chip's UUID into (or out of) its node's filter; the version's name.

    A refusal before the write (validation, a conflict, drift) puts the chip
    back as it was. A file that already says so is no error: the plugin
    restart still applies it. Any other failure may have reached the cluster,
    so the chip keeps waiting and sync tells what happened.
    """
    try:
        number = node_filter_set(
            cluster=chip.cluster,
            node=chip.node.name,
            uuid=chip.uuid,
            filtered=verb == "isolate",
            actor=actor,
            actor_name=actor_name,
            reason=f"{verb} chip {chip.uuid}: {reason}",
        )
    except NoChange:
        return "unchanged (it already says so)"
    except (ValidationFailed, Conflict, NotFound, PermissionDenied):
        _back(chip, *before)
        raise
    except Exception as exc:
        _seen(
            chip,
            f"publishing the node config failed, it may or may not have reached the cluster: {exc}",
        )
        raise
    return f"v{number}"


def _name(actor: Any) -> str:
    return getattr(actor, "username", "") or "system"


@transaction.atomic
def _start(chip: Chip, by: str, reason: str, *, isolate: bool) -> None:
    """Mark the chip waiting, re-checking its state under a row lock."""
    locked = Chip.objects.select_for_update().select_related("node").get(pk=chip.pk)
    allowed = _ISOLATE_FROM if isolate else _RESTORE_FROM
    if locked.isolation not in allowed:
        raise IsolationState(
            _("chip %(chip)s changed state meanwhile (%(state)s)")
            % {"chip": chip.uuid, "state": locked.isolation},
            detail={"isolation": locked.isolation},
        )
    chip.isolation = ChipIsolation.ISOLATING if isolate else ChipIsolation.RESTORING
    chip.isolation_since = timezone.now()
    chip.isolation_seen = ""
    if isolate:
        chip.isolation_reason = reason
    chip.isolation_by = by
    chip.save(
        update_fields=[
            "isolation",
            "isolation_since",
            "isolation_seen",
            "isolation_reason",
            "isolation_by",
        ]
    )
    chips_broadcast(chip.cluster_id, [chip.pk])


def _back(chip: Chip, isolation: str, reason: str, by: str) -> None:
    """Nothing reached the cluster: the chip is as it was."""
    chip.isolation, chip.isolation_reason, chip.isolation_by = isolation, reason, by
    chip.isolation_seen = ""
    chip.save(
        update_fields=[
            "isolation",
            "isolation_reason",
            "isolation_by",
            "isolation_seen",
        ]
    )
    chips_broadcast(chip.cluster_id, [chip.pk])


def _seen(chip: Chip, text: str) -> None:
    chip.isolation_seen = text
    chip.save(update_fields=["isolation_seen"])
