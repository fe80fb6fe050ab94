"""The live device-config ConfigMap and its drift from the portal's baseline.

A GET to the API server, never the database, because a publish must compare
with what is there *now* (``deviceconfig_drift(live=False)`` answers from what
sync recorded instead, cheap enough for a UI that polls).

Every failure to talk to the cluster becomes ``ClusterUnavailable`` (503)
naming the cluster, so callers never see a 500 for a cluster being down.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext as _

from apps.common.exceptions import NotFound
from apps.inventory.deviceconfig.selectors import (
    deviceconfig_baseline,
    deviceconfig_drift_recorded,
    text_diff,
)
from apps.inventory.kube import Gateway, cluster_gateway
from apps.inventory.models import Cluster

DEVICE_CONFIG_KEY = "device-config.yaml"


@dataclass(frozen=True)
class LiveConfigMap:
    """A ConfigMap key as the API server returned it (the device config's, the node config's).

    Attributes:
        text: The key's text ("" when the key or the ConfigMap is missing).
        resource_version: ``metadata.resourceVersion``, the guard of a write.
        obj: The whole object, to write back with only the text changed.
        key: The data key read.
        path: The ConfigMap's API path.
        exists: False when the ConfigMap does not exist (only readers that
            allow it say so; the device config's raises NotFound).
    """

    text: str
    resource_version: str
    obj: dict[str, Any]
    key: str = DEVICE_CONFIG_KEY
    path: str = ""
    exists: bool = True

    @property
    def namespace_name(self) -> tuple[str, str]:
        """``(namespace, name)`` from the path."""
        parts = self.path.split("/")
        return parts[parts.index("namespaces") + 1], parts[-1]


def live_configmap_read(gateway: Gateway, path: str, key: str) -> LiveConfigMap:
    """GET one ConfigMap key; an absent ConfigMap reads as ``exists`` False."""
    obj = gateway.get(path)
    if obj is None:
        return LiveConfigMap(
            text="", resource_version="", obj={}, key=key, path=path, exists=False
        )
    return LiveConfigMap(
        text=(obj.get("data") or {}).get(key, ""),
        resource_version=(obj.get("metadata") or {}).get("resourceVersion", ""),
        obj=obj,
        key=key,
        path=path,
    )


def configmap_path(cluster: Cluster) -> str:
    """API path of the cluster's device-config ConfigMap."""
    return (
        f"/api/v1/namespaces/{cluster.device_config_namespace}"
        f"/configmaps/{cluster.device_config_name}"
    )


def live_device_config_read(
    cluster: Cluster, gateway: Gateway | None = None
) -> LiveConfigMap:
    """GET the device-config ConfigMap from the cluster (never from the database).

    Args:
        cluster: The cluster.
        gateway: An open gateway from :func:`cluster_gateway`; one is opened
            when None.

    Raises:
        NotFound: The ConfigMap does not exist.
        ClusterUnavailable: The cluster could not be reached.
    """
    if gateway is None:
        with cluster_gateway(cluster) as opened:
            return live_device_config_read(cluster, opened)
    live = live_configmap_read(gateway, configmap_path(cluster), DEVICE_CONFIG_KEY)
    if not live.exists:
        raise NotFound(
            _("%(kind)s %(object)s does not exist in cluster %(cluster)r")
            % {
                "kind": "ConfigMap",
                "object": f"{cluster.device_config_namespace}/{cluster.device_config_name}",
                "cluster": cluster.name,
            }
        )
    return live


def deviceconfig_drift(cluster: Cluster, *, live: bool = True) -> dict[str, Any]:
    """Whether the ConfigMap still holds the portal's baseline, and the diff if not.

    Args:
        cluster: The cluster.
        live: GET the ConfigMap now (True), or use what sync recorded (False,
            cheap enough for a UI that polls).

    Returns:
        ``in_sync``, ``baseline_version``, ``live_version`` (the matching or
        observed version number, when known), ``live_resource_version`` and
        ``diff`` (unified, baseline to live), plus ``checked`` ("live" or
        "recorded").
    """
    if not live:
        return {**deviceconfig_drift_recorded(cluster), "checked": "recorded"}
    current = live_device_config_read(cluster)
    baseline = deviceconfig_baseline(cluster)
    base_text = baseline.text if baseline else ""
    in_sync = baseline is not None and current.text == base_text
    label = f"v{baseline.number} (baseline)" if baseline else "(no baseline)"
    return {
        "in_sync": in_sync,
        "baseline_version": baseline.number if baseline else None,
        "live_version": baseline.number if in_sync and baseline else None,
        "live_resource_version": current.resource_version,
        "diff": ""
        if in_sync
        else text_diff(
            base_text,
            current.text,
            before_label=label,
            after_label=f"live (resourceVersion {current.resource_version})",
        ),
        "checked": "live",
    }
