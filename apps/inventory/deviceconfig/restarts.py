"""Restart state of the components that read the device config only when they start.

The HAMi scheduler, the Ascend device plugin and volcano-scheduler (named by
settings), from their pods listed live.

Every failure to talk to the cluster becomes ``ClusterUnavailable`` (503)
naming the cluster, so callers never see a 500 for a cluster being down.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from django.conf import settings
from django.utils.translation import gettext as _

from apps.common.exceptions import NotFound
from apps.inventory.deviceconfig.in_effect import (
    config_in_effect,
    loaded_version,
    oldest_running_start,
)
from apps.inventory.deviceconfig.selectors import deviceconfig_changed_at
from apps.inventory.kube import Gateway, cluster_gateway
from apps.inventory.models import Cluster

RESTARTED_AT = "kubectl.kubernetes.io/restartedAt"

RestartState = Literal["restart_pending", "rolling", "in_effect", "missing", "unknown"]


@dataclass(frozen=True)
class Component:
    """A workload that reads the device config at start (name = its API name)."""

    kind: Literal["Deployment", "DaemonSet"]
    namespace: str
    name: str

    @property
    def path(self) -> str:
        plural = "deployments" if self.kind == "Deployment" else "daemonsets"
        return f"/apis/apps/v1/namespaces/{self.namespace}/{plural}/{self.name}"


def restart_components() -> list[Component]:
    """The Deployments of ``WATCHED_DEPLOYMENTS`` and the ``DEVICE_PLUGIN_DAEMONSET``."""
    found: list[Component] = []
    for ref in settings.WATCHED_DEPLOYMENTS:
        namespace, name = ref.split("/", 1)
        found.append(Component("Deployment", namespace, name))
    namespace, name = settings.DEVICE_PLUGIN_DAEMONSET.split("/", 1)
    found.append(Component("DaemonSet", namespace, name))
    return found


def restart_component_get(name: str) -> Component:
    """The component called ``name``; NotFound lists the known ones."""
    components = restart_components()
    for component in components:
        if component.name == name:
            return component
    known = ", ".join(c.name for c in components)
    raise NotFound(
        _("no component %(name)r; known: %(known)s") % {"name": name, "known": known}
    )


def _parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


def _ready(pod: Mapping[str, Any]) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(
        c.get("type") == "Ready" and c.get("status") == "True" for c in conditions
    )


def _pod_row(pod: Mapping[str, Any], changed: datetime | None) -> dict[str, Any]:
    meta = pod.get("metadata") or {}
    started = _parse_time((pod.get("status") or {}).get("startTime")) or _parse_time(
        meta.get("creationTimestamp")
    )
    # Kubernetes stamps whole seconds: a pod that started in the second of the
    # change counts as new, or a restart right after a publish would show
    # "pending" forever. Portal and cluster clocks are assumed NTP-synced.
    stale = (
        changed is not None
        and started is not None
        and started < changed.replace(microsecond=0)
    )
    return {
        "name": meta.get("name", ""),
        "node": (pod.get("spec") or {}).get("nodeName") or "",
        "started_at": started,
        "ready": _ready(pod),
        "terminating": bool(meta.get("deletionTimestamp")),
        "stale": stale,
    }


def _state(
    pods: list[dict[str, Any]], changed: datetime | None, restarted: datetime | None
) -> tuple[RestartState, str]:
    if not pods:
        return "unknown", _("no pods")
    if any(p["started_at"] is None for p in pods):
        return "unknown", _("a pod has no start time yet")
    stale = [p for p in pods if p["stale"]]
    if stale:
        names = ", ".join(p["name"] for p in stale)
        # A restart asked for after the change is under way; otherwise the
        # pods still run the old config and someone has to restart them.
        if (
            changed is not None
            and restarted is not None
            and restarted >= changed.replace(microsecond=0)
        ):
            return "rolling", _("restart in progress; still running: %(pods)s") % {
                "pods": names
            }
        return "restart_pending", _("started before the change: %(pods)s") % {
            "pods": names
        }
    current = [p for p in pods if not p["terminating"]]
    if not current or not all(p["ready"] for p in current):
        return "rolling", _("new pods are not all Ready yet")
    return "in_effect", _("every pod started after the change and is Ready")


def _component_state(
    gateway: Gateway, component: Component, changed: datetime | None
) -> dict[str, Any]:
    row: dict[str, Any] = {
        "component": component.name,
        "kind": component.kind,
        "namespace": component.namespace,
        "restarted_at": None,
        "pods": [],
    }
    workload = gateway.get(component.path)
    if workload is None:
        return {
            **row,
            "restart_state": "missing",
            "message": _("%(kind)s not found") % {"kind": component.kind},
        }
    spec = workload.get("spec") or {}
    template_meta = (spec.get("template") or {}).get("metadata") or {}
    restarted = _parse_time((template_meta.get("annotations") or {}).get(RESTARTED_AT))
    labels = (spec.get("selector") or {}).get("matchLabels") or {}
    if not labels:
        # matchExpressions-only selectors are not evaluated here.
        return {
            **row,
            "restarted_at": restarted,
            "restart_state": "unknown",
            "message": _("the workload has no matchLabels selector"),
        }
    selector = ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
    listed = gateway.call(
        "GET",
        f"/api/v1/namespaces/{component.namespace}/pods",
        query={"labelSelector": selector},
    )
    pods = [_pod_row(p, changed) for p in listed.get("items") or []]
    pods.sort(key=lambda p: p["name"])
    state, message = _state(pods, changed, restarted)
    return {
        **row,
        "restarted_at": restarted,
        "pods": pods,
        "restart_state": state,
        "message": message,
    }


def _loaded_number(cluster: Cluster, pods: list[dict[str, Any]]) -> int | None:
    """The device-config version the component's oldest running pod read when it started."""
    started = oldest_running_start(pods)
    version = loaded_version(cluster, started) if started else None
    return version.number if version else None


def restart_states(
    cluster: Cluster, *, only: Component | None = None
) -> dict[str, Any]:
    """Restart state of each component, from its pods listed live.

    "restart_pending": a pod started before the config last changed (see
    ``deviceconfig_changed_at``) and no restart was asked for since;
    "rolling": a restart is under way or new pods are not Ready yet;
    "in_effect": every pod started after the change and is Ready;
    "missing": the workload does not exist; "unknown": no pods or no start time.
    Each row also says which version its oldest pod loaded (``loaded_version``).

    Args:
        cluster: The cluster.
        only: Limit the answer to this component.

    Raises:
        ClusterUnavailable: The cluster could not be reached.
    """
    version = deviceconfig_changed_at(cluster)
    changed = version.created_at if version else None
    components = [only] if only else restart_components()
    with cluster_gateway(cluster) as gateway:
        rows = [_component_state(gateway, c, changed) for c in components]
    for row in rows:
        row["loaded_version"] = _loaded_number(cluster, row["pods"])
    return {
        "cluster": cluster.name,
        "config_version": version.number if version else None,
        "config_changed_at": changed,
        "components": rows,
        "in_effect": config_in_effect(cluster),
    }
