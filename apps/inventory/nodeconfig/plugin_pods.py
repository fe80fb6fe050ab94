"""Restarting the device plugin on one node, so that it reads the node config again.

The plugin reads ``hami-device-node-config`` (and the device config) only when
its process starts, and the upstream manifests mount both with ``subPath``, so
a running pod never sees a change. Deleting the one pod on the node is how a
node-config change reaches that node: the DaemonSet recreates it, and no other
node is touched (a rollout restart would restart every node's plugin).

The same restart also makes that node's plugin load the device config as it
is now. When a device-config publish is waiting for a restart the admin has
not asked for yet, restarting one plugin pod would apply it on that node
behind the admin's back, so it is refused (``PluginRestartBlocked``).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from django.conf import settings
from django.utils.translation import gettext as _

from apps.audit.services import audit_record
from apps.common.exceptions import NotFound, ValidationFailed
from apps.inventory.deviceconfig.restarts import RESTARTED_AT
from apps.inventory.deviceconfig.selectors import deviceconfig_changed_at
from apps.inventory.errors import PluginRestartBlocked
from apps.inventory.kube import Gateway, cluster_gateway
from apps.inventory.models import Cluster, Node
from apps.inventory.sync.derive import parse_time


def plugin_daemonset() -> tuple[str, str]:
    """The device plugin DaemonSet's (namespace, name), from settings."""
    namespace, name = settings.DEVICE_PLUGIN_DAEMONSET.split("/", 1)
    return namespace, name


def plugin_pod_on(gateway: Gateway, node: str) -> dict[str, Any]:
    """The device plugin pod running on ``node`` (the newest, if several).

    Raises:
        NotFound: No DaemonSet, or a DaemonSet without matchLabels.
        Conflict: No pod of it on the node right now.
    """
    namespace, name = plugin_daemonset()
    daemonset = gateway.get(f"/apis/apps/v1/namespaces/{namespace}/daemonsets/{name}")
    if daemonset is None:
        raise NotFound(
            _("the device plugin DaemonSet %(daemonset)s does not exist")
            % {"daemonset": f"{namespace}/{name}"}
        )
    labels = ((daemonset.get("spec") or {}).get("selector") or {}).get("matchLabels")
    if not labels:
        raise NotFound(
            _("the DaemonSet %(daemonset)s has no matchLabels selector")
            % {"daemonset": f"{namespace}/{name}"}
        )
    listed = gateway.call(
        "GET",
        f"/api/v1/namespaces/{namespace}/pods",
        query={
            "labelSelector": ",".join(f"{k}={v}" for k, v in sorted(labels.items())),
            "fieldSelector": f"spec.nodeName={node}",
        },
    )
    pods = [
        p
        for p in listed.get("items") or []
        if not (p.get("metadata") or {}).get("deletionTimestamp")
    ]
    if not pods:
        raise NotFound(
            _("no device plugin pod of %(daemonset)s runs on node %(node)s")
            % {"daemonset": f"{namespace}/{name}", "node": node}
        )
    return max(
        pods, key=lambda p: (p.get("metadata") or {}).get("creationTimestamp", "")
    )


def restart_refusal(
    pod: Mapping[str, Any],
    daemonset_restarted_at: datetime | None,
    config_changed_at: datetime | None,
    config_number: int | None,
) -> str:
    """Why restarting this plugin pod would apply an unconfirmed device config ("" if not).

    Pure. The pod loaded an older device config when it started before the
    last change; unless a rollout restart was asked for since (the admin's
    confirmation), a restart now would load the new one on this node alone.
    """
    if config_changed_at is None:
        return ""
    started = parse_time((pod.get("status") or {}).get("startTime")) or parse_time(
        (pod.get("metadata") or {}).get("creationTimestamp")
    )
    changed = config_changed_at.replace(microsecond=0)
    # Kubernetes stamps whole seconds: a pod stamped in the second of the
    # change may have started before it, so only a later second is safe.
    if started is None or started > changed:
        return ""
    if daemonset_restarted_at is not None and daemonset_restarted_at >= changed:
        return ""
    name = (pod.get("metadata") or {}).get("name", "")
    return (
        f"device config v{config_number} was published at {changed:%Y-%m-%d %H:%M:%S}Z"
        f" and its restart has not been confirmed; the device plugin pod {name}"
        " started before it, so restarting it now would load that device config on"
        " this node alone. Confirm the device plugin's restart first (Templates,"
        " restarts), then isolate or restore."
    )


def restartable_plugin_pod(gateway: Gateway, cluster: Cluster, node: str) -> str:
    """The name of the plugin pod on ``node``, once it is safe to restart it.

    Called before anything is written, so that a refusal changes nothing.

    Raises:
        NotFound: See :func:`plugin_pod_on`.
        PluginRestartBlocked: A device-config publish waits for a restart
            that was not confirmed (see the module's docstring).
    """
    pod = plugin_pod_on(gateway, node)
    namespace, name = plugin_daemonset()
    daemonset = gateway.get(f"/apis/apps/v1/namespaces/{namespace}/daemonsets/{name}")
    template = (((daemonset or {}).get("spec") or {}).get("template") or {}).get(
        "metadata"
    ) or {}
    restarted = parse_time((template.get("annotations") or {}).get(RESTARTED_AT))
    version = deviceconfig_changed_at(cluster)
    refusal = restart_refusal(
        pod,
        restarted,
        version.created_at if version else None,
        version.number if version else None,
    )
    if refusal:
        raise PluginRestartBlocked(refusal, detail={"node": node})
    return str((pod.get("metadata") or {}).get("name", ""))


def restart_plugin_pod(gateway: Gateway, pod: str) -> None:
    """Delete the device plugin pod ``pod``: its DaemonSet recreates it."""
    gateway.delete_pod(plugin_daemonset()[0], pod)


def node_plugin_restart(
    *, cluster: Cluster, node: str, actor: Any, reason: str, actor_name: str = ""
) -> str:
    """Restart the device plugin on one node so that it reads the node config again.

    The last step of changing a node's entry (its slicing mode, its slot
    count): the plugin reads the file only when its pod starts. Audited.

    Returns:
        The name of the deleted pod (its DaemonSet recreates it).

    Raises:
        ValidationFailed: No reason, or a node the cluster does not have.
        NotFound, PluginRestartBlocked: See :func:`restartable_plugin_pod`.
        ClusterUnavailable: The cluster could not be reached.
    """
    if not reason.strip():
        raise ValidationFailed(
            _("a reason is required"), detail={"reason": [_("required")]}
        )
    if not Node.objects.filter(cluster=cluster, name=node).exists():
        raise ValidationFailed(
            _("cluster %(cluster)r has no node %(node)r")
            % {"cluster": cluster.name, "node": node},
            detail={"node": [_("no node %(node)r") % {"node": node}]},
        )
    with cluster_gateway(cluster) as gateway:
        pod = restartable_plugin_pod(gateway, cluster, node)
        restart_plugin_pod(gateway, pod)
    audit_record(
        actor=actor,
        actor_name=actor_name,
        action="node.plugin_restart",
        cluster=cluster,
        reason=reason.strip(),
        after={"node": node, "pod": pod},
    )
    return pod
