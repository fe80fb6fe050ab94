"""Publishing the device plugin's node config: publish, roll back, adopt, and
one node's filter for the parts of the portal that act on a chip.

The device config's rules hold (``apps.inventory.deviceconfig.publishing``),
through the same guarded write (``deviceconfig.guarded_write``): a GET of
the ConfigMap from the API server, a refusal (409 ``drift``) when it holds
what the portal does not own, a PUT carrying the resourceVersion read, a
pending-write row committed before it (a publish killed after its PUT is
settled as its own version, not drift), the version and its audit event in
one transaction. What the node config adds:

- **An expected version.** The caller says which version its edit was based
  on (``expected_version``, None: no version and no ConfigMap yet); when the
  portal's baseline is another one, the publish is refused with 409
  ``stale_version`` and nothing is written. ``expected_resource_version``,
  when given, must be the ConfigMap's too.
- **Strict validation** (``hami.nodeconfig`` and ``nodeconfig_rules``
  against the inventory) before anything reaches the cluster: an error is a
  400 naming its path (``nodes[0].filterDevices.uuid[0]``); warnings are
  refused (400 ``unconfirmed_warnings``) unless ``confirm_warnings``. An
  error the live text has already becomes a warning: an edit is not refused
  for a problem it did not make (another node's, or a chip filtered out long
  ago, which no longer registers and so is "not a chip of that node").
- **A ConfigMap that does not exist is refused** (404 with the ``kubectl
  create configmap`` command): the portal's RBAC updates it by name and never
  creates ConfigMaps, and a plugin that mounts it cannot start without it.
- **Per-node edits** are applied to the live document and written in the
  canonical form (``render_node_config``: JSON, which the plugin reads as
  YAML); a whole text is written as given.

A published file reaches a node only when that node's plugin pod restarts
(``nodeconfig.in_effect``); that restart is ``plugin_pods.node_plugin_restart``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from django.utils.translation import gettext as _

from apps.common.exceptions import NotFound, ValidationFailed
from apps.common.translated import translated
from apps.inventory.choices import DeviceConfigSource as Source
from apps.inventory.deviceconfig.guarded_write import (
    Checks,
    PublishResult,
    WriteTarget,
    guarded_publish,
)
from apps.inventory.deviceconfig.liveconfig import LiveConfigMap, live_configmap_read
from apps.inventory.deviceconfig.selectors import text_diff
from apps.inventory.errors import NoChange, StaleVersion
from apps.inventory.hami.nodeconfig import (
    NODE_CONFIG_KEY,
    FilterDevices,
    NodeConfigError,
    NodeEntry,
    parse_node_config,
    render_node_config,
)
from apps.inventory.hami.validation import Issue
from apps.inventory.kube import Gateway, cluster_gateway
from apps.inventory.models import Cluster, Node, NodeConfigVersion
from apps.inventory.nodeconfig.health import node_config_read_guard
from apps.inventory.nodeconfig.selectors import (
    nodeconfig_baseline,
    nodeconfig_mirror,
    nodeconfig_ref,
)
from apps.inventory.nodeconfig.services import (
    NODE_CONFIG_BOOK,
    live_errors,
    nodeconfig_import,
    nodeconfig_issues,
    nodeconfig_validate,
    warnings_confirmed,
)

#: ``expected_version`` of a caller that publishes on whatever is current
#: (the drift guard still holds): the portal's own programmatic edits.
CURRENT: Final = "current"


def nodeconfig_path() -> str:
    """API path of the node-config ConfigMap (``DEVICE_NODE_CONFIGMAP``)."""
    namespace, name = nodeconfig_ref()
    return f"/api/v1/namespaces/{namespace}/configmaps/{name}"


def live_node_config_read(cluster: Cluster, gateway: Gateway) -> LiveConfigMap:
    """GET the node-config ConfigMap now; absent reads as ``exists`` False."""
    return live_configmap_read(gateway, nodeconfig_path(), NODE_CONFIG_KEY)


NODE_CONFIG = WriteTarget(
    book=NODE_CONFIG_BOOK,
    read=lambda cluster, gateway: live_node_config_read(cluster, gateway),
)


@dataclass(frozen=True)
class NodeEdit:
    """A change to one node's entry; None leaves a value as it is.

    Attributes:
        name: The node.
        remove: Drop the node's entry (the plugin then runs on defaults).
        hami_vnpu_core: The slicing mode (a new entry takes the node's
            current mode when None: an entry must say it).
        v_device_count: Slots per chip; 0 clears it (the plugin's default).
        filter_uuids: Replace the chips ignored by UUID.
        add_uuids: Chips to ignore, added to those already ignored.
        remove_uuids: Chips to stop ignoring.
        filter_indexes: Replace the card ids ignored.
    """

    name: str
    remove: bool = False
    hami_vnpu_core: bool | None = None
    v_device_count: int | None = None
    filter_uuids: tuple[str, ...] | None = None
    add_uuids: tuple[str, ...] = ()
    remove_uuids: tuple[str, ...] = ()
    filter_indexes: tuple[int, ...] | None = None


def _edited(entry: NodeEntry, edit: NodeEdit) -> NodeEntry:
    uuids = list(
        edit.filter_uuids
        if edit.filter_uuids is not None
        else entry.filter_devices.uuids
    )
    uuids += [u for u in edit.add_uuids if u not in uuids]
    uuids = [u for u in uuids if u not in edit.remove_uuids]
    indexes = (
        edit.filter_indexes
        if edit.filter_indexes is not None
        else entry.filter_devices.indexes
    )
    count = entry.v_device_count
    if edit.v_device_count is not None:
        count = edit.v_device_count or None
    return replace(
        entry,
        hami_vnpu_core=entry.hami_vnpu_core
        if edit.hami_vnpu_core is None
        else edit.hami_vnpu_core,
        v_device_count=count,
        filter_devices=FilterDevices(uuids=tuple(uuids), indexes=tuple(indexes)),
    )


def apply_edits(cluster: Cluster, text: str | None, edits: Sequence[NodeEdit]) -> str:
    """The canonical text of ``text`` (None: no ConfigMap) with ``edits`` applied.

    Raises:
        ValidationFailed: The text has structural errors (a whole text must
            replace it), or an edit names a node twice.
    """
    entries = list(_live_entries(text)) if text is not None else []
    modes = dict(
        Node.objects.filter(cluster=cluster).values_list("name", "hami_vnpu_core")
    )
    for position, edit in enumerate(edits):
        if [e.name for e in edits].count(edit.name) > 1:
            raise ValidationFailed(
                f"nodes[{position}].name: "
                + _("%(node)s is edited twice") % {"node": edit.name},
                detail={
                    f"nodes[{position}].name": [
                        _("%(node)s is edited twice") % {"node": edit.name}
                    ]
                },
            )
        found = next((i for i, e in enumerate(entries) if e.name == edit.name), None)
        if edit.remove:
            entries = [e for e in entries if e.name != edit.name]
            continue
        if found is None:
            entries.append(
                NodeEntry(name=edit.name, hami_vnpu_core=modes.get(edit.name, False))
            )
            found = len(entries) - 1
        entries[found] = _edited(entries[found], edit)
    return render_node_config([replace(e, position=i) for i, e in enumerate(entries)])


def _live_entries(text: str) -> tuple[NodeEntry, ...]:
    """The entries of a live text that per-node edits can be applied to."""
    try:
        read = parse_node_config(text)
        problem = read.report.errors[0].message if not read.ok else ""
    except NodeConfigError as exc:
        problem = exc.message
    if problem:
        raise ValidationFailed(
            _("nodes: the live node config cannot be edited per node (%(problem)s)")
            % {"problem": translated(problem)},
            detail={
                "nodes": [
                    _(
                        "the live node config has errors (%(problem)s): publish a "
                        "whole text instead"
                    )
                    % {"problem": problem}
                ]
            },
        )
    return read.entries


def _checks(
    cluster: Cluster,
    *,
    confirm_warnings: bool,
    confirm_unread: bool = False,
    expected_version: int | str | None = CURRENT,
    expected_resource_version: str = "",
) -> Checks:
    def validate(
        proposed: str, live: LiveConfigMap
    ) -> tuple[tuple[Any, tuple[Issue, ...]], tuple[Issue, ...]]:
        tolerated = live_errors(live.text if live.exists else None, cluster)
        read, warnings = nodeconfig_validate(proposed, cluster, tolerated=tolerated)
        return (read, warnings), warnings

    def guard(live: LiveConfigMap, baseline: NodeConfigVersion | None) -> None:
        if not live.exists:
            # The portal may update this one ConfigMap but not create
            # ConfigMaps (deploy/10-rbac.yaml); a plugin that mounts it
            # cannot start without it anyway.
            namespace, name = live.namespace_name
            raise NotFound(
                _(
                    "ConfigMap %(namespace)s/%(name)s does not exist: create it "
                    "first, e.g. kubectl -n %(namespace)s create configmap %(name)s "
                    "--from-literal=%(key)s='nodes: []'; nothing was written"
                )
                % {"namespace": namespace, "name": name, "key": live.key},
                detail={"configmap": f"{namespace}/{name}"},
            )
        current = baseline.number if baseline is not None else None
        if expected_version != CURRENT and expected_version != current:
            raise StaleVersion(
                _(
                    "the node config is at v%(current)s, not v%(expected)s the edit "
                    "was based on: nothing was written; reload and edit again"
                )
                % {"current": current or 0, "expected": expected_version or 0},
                detail={
                    "expected_version": expected_version,
                    "current_version": current,
                },
            )
        if (
            expected_resource_version
            and live.resource_version != expected_resource_version
        ):
            raise StaleVersion(
                _(
                    "the ConfigMap is at resourceVersion %(live)s, not %(expected)s: "
                    "nothing was written"
                )
                % {
                    "live": live.resource_version or "-",
                    "expected": expected_resource_version,
                },
                detail={
                    "expected_resource_version": expected_resource_version,
                    "live_resource_version": live.resource_version,
                },
            )

    def confirm(document: tuple[Any, tuple[Issue, ...]]) -> tuple[Any, ...]:
        warnings_confirmed(document[1], confirm_warnings)
        # A file no plugin reads changes nothing on any node: refused unless
        # the caller says so (as the device config's shape guard).
        node_config_read_guard(cluster, confirm_unread)
        return ()

    return Checks(validate=validate, confirm=confirm, guard=guard)


def nodeconfig_publish(
    *,
    cluster: Cluster,
    actor: Any,
    reason: str,
    expected_version: int | str | None,
    text: str | None = None,
    edits: Sequence[NodeEdit] = (),
    confirm_warnings: bool = False,
    confirm_unread: bool = False,
    force: bool = False,
    expected_resource_version: str = "",
    actor_name: str = "",
) -> PublishResult:
    """Write a node config to the cluster: a whole ``text``, or ``edits`` of the live one.

    Args:
        cluster: The cluster.
        actor: The user (None for the command line).
        reason: Why; required, kept with the version and the audit log.
        expected_version: The version the edit was based on (None: none
            yet; ``CURRENT``: whatever it is).
        text: A whole ``node-config.yaml``, written as given.
        edits: Per-node changes, applied to the live document.
        confirm_warnings: Publish even with validation warnings.
        confirm_unread: Publish even where the device plugin does not read
            the node config (see ``node_config_read_guard``).
        force: Publish over a hand edit (admin only).
        expected_resource_version: The ConfigMap's resourceVersion the edit
            was based on ("" not checked).
        actor_name: Name recorded for a None actor.

    Raises:
        ValidationFailed: No reason, neither or both of text and edits, an
            error (by path), ``unconfirmed_warnings``, ``no_change``.
        Conflict: ``stale_version``, ``drift``, ``no_baseline``.
        PermissionDenied: ``force`` without the admin role.
        ClusterUnavailable: The cluster could not be reached.
    """
    if (text is None) == (not edits):
        raise ValidationFailed(
            _("text: give either a whole text or per-node edits"),
            detail={"text": [_("give either text or nodes, not both or neither")]},
        )

    def propose(live: LiveConfigMap, baseline: Any) -> str:
        if text is not None:
            return text
        return apply_edits(cluster, live.text if live.exists else None, edits)

    return guarded_publish(
        cluster=cluster,
        actor=actor,
        actor_name=actor_name,
        reason=reason,
        force=force,
        propose=propose,
        target=NODE_CONFIG,
        checks=_checks(
            cluster,
            confirm_warnings=confirm_warnings,
            confirm_unread=confirm_unread,
            expected_version=expected_version,
            expected_resource_version=expected_resource_version,
        ),
    )


def nodeconfig_rollback(
    *,
    cluster: Cluster,
    actor: Any,
    number: int,
    reason: str,
    confirm_warnings: bool = False,
    confirm_unread: bool = False,
    force: bool = False,
    actor_name: str = "",
) -> PublishResult:
    """Publish exactly the text of version ``number`` again (a new version).

    Any version, an imported draft included. Same guards as a publish.

    Raises:
        NotFound: No such version.
        ValidationFailed, Conflict, PermissionDenied, ClusterUnavailable: As
            :func:`nodeconfig_publish`.
    """
    target = NodeConfigVersion.objects.filter(cluster=cluster, number=number).first()
    if target is None:
        raise NotFound(
            _("cluster %(cluster)r has no node-config version %(version)s")
            % {"cluster": cluster.name, "version": number}
        )
    return guarded_publish(
        cluster=cluster,
        actor=actor,
        actor_name=actor_name,
        reason=reason,
        force=force,
        propose=lambda live, baseline: target.text,
        target=NODE_CONFIG,
        checks=_checks(
            cluster, confirm_warnings=confirm_warnings, confirm_unread=confirm_unread
        ),
        rollback_of=target.number,
    )


def nodeconfig_drift(cluster: Cluster) -> dict[str, Any]:
    """Whether the ConfigMap holds the portal's baseline now (read live), and the diff if not.

    Raises:
        ClusterUnavailable: The cluster could not be reached.
    """
    with cluster_gateway(cluster) as gateway:
        live = live_node_config_read(cluster, gateway)
    baseline = nodeconfig_baseline(cluster)
    base_text = baseline.text if baseline else ""
    in_sync = (baseline is None and not live.exists) or (
        baseline is not None and live.exists and live.text == base_text
    )
    label = (
        f"live (resourceVersion {live.resource_version})"
        if live.exists
        else "live (no ConfigMap)"
    )
    return {
        "in_sync": in_sync,
        "baseline_version": baseline.number if baseline else None,
        "live_resource_version": live.resource_version,
        "diff": ""
        if in_sync
        else text_diff(
            base_text,
            live.text,
            before_label=f"v{baseline.number if baseline else 0} (baseline)",
            after_label=label,
        ),
    }


def nodeconfig_adopt(
    *, cluster: Cluster, actor: Any, reason: str = "", actor_name: str = ""
) -> NodeConfigVersion:
    """Make the live node config the portal's (resolves drift the other way).

    Raises:
        NotFound: There is no ConfigMap (or no ``node-config.yaml`` in it).
        ValidationFailed: The live text already is the baseline
            (``no_change``).
        ClusterUnavailable: The cluster could not be reached.
    """
    with cluster_gateway(cluster) as gateway:
        live = live_node_config_read(cluster, gateway)
    if not live.exists or NODE_CONFIG_KEY not in (live.obj.get("data") or {}):
        raise NotFound(
            _("cluster %(cluster)r has no node config to adopt (%(path)s)")
            % {"cluster": cluster.name, "path": nodeconfig_path()}
        )
    baseline = nodeconfig_baseline(cluster)
    if baseline is not None and baseline.text == live.text:
        raise NoChange(
            _("nothing to adopt: the live node config is already v%(version)s")
            % {"version": baseline.number},
            detail={"non_field_errors": [_("the live node config is the portal's")]},
        )
    # What the plugin pods read, whatever its problems: adopting only moves
    # the baseline (the node config has no editable copy in the portal).
    version, _warnings = nodeconfig_import(
        cluster_name=cluster.name,
        text=live.text,
        actor=actor,
        strict=False,
        source=Source.ADOPTED,
        reason=reason.strip() or "adopted the live node config",
        resource_version=live.resource_version,
        actor_name=actor_name,
    )
    return version


def nodeconfig_draft_check(
    cluster: Cluster, *, text: str | None = None, edits: Sequence[NodeEdit] = ()
) -> dict[str, Any]:
    """What publishing a draft would find, from what sync mirrored (no write,
    no call to the cluster): the text it would write, its errors and warnings
    by path, as a publish over the mirrored text would judge them.

    Raises:
        ValidationFailed: Per-node edits of a live text that has errors.
    """
    mirror = nodeconfig_mirror(cluster)
    live = mirror.text if mirror.state == "present" else None
    proposed = text if text is not None else apply_edits(cluster, live, edits)
    _read, errors, warnings = nodeconfig_issues(
        proposed, cluster, tolerated=live_errors(live, cluster)
    )
    return {
        "valid": not errors,
        "text": proposed,
        "errors": [dataclasses.asdict(i) for i in errors],
        "warnings": [dataclasses.asdict(i) for i in warnings],
    }


def set_node_filter(
    *,
    cluster: Cluster,
    node_name: str,
    actor: Any,
    reason: str,
    add_uuids: Sequence[str] = (),
    remove_uuids: Sequence[str] = (),
    confirm_warnings: bool = False,
    actor_name: str = "",
) -> PublishResult:
    """Ignore (or stop ignoring) chips of one node by UUID, through the same publish.

    For the parts of the portal that act on a chip (isolation): the node's
    entry is created when missing (in the node's current mode), the rest of
    the file is kept, and every guard of a publish holds (drift, validation,
    the pending write, the audit event). The plugin on that node applies it
    when its pod restarts.

    Raises:
        As :func:`nodeconfig_publish`.
    """
    return nodeconfig_publish(
        cluster=cluster,
        actor=actor,
        actor_name=actor_name,
        reason=reason,
        expected_version=CURRENT,
        edits=[
            NodeEdit(
                name=node_name,
                add_uuids=tuple(add_uuids),
                remove_uuids=tuple(remove_uuids),
            )
        ],
        confirm_warnings=confirm_warnings,
    )
