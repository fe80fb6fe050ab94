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
    """The device-config ConfigMap as the API server returned it.

    Attributes:
        text: Its ``device-config.yaml`` ("" when the key is missing).
        resource_version: ``metadata.resourceVersion``, the guard of a write.
        obj: The whole object, to write back with only the text changed.
    """

    text: str
    resource_version: str
    obj: dict[str, Any]


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
    obj = gateway.get(configmap_path(cluster))
    if obj is None:
        raise NotFound(
            f"ConfigMap {cluster.device_config_namespace}/{cluster.device_config_name}"
            f" does not exist in cluster {cluster.name!r}"
        )
    return LiveConfigMap(
        text=(obj.get("data") or {}).get(DEVICE_CONFIG_KEY, ""),
        resource_version=(obj.get("metadata") or {}).get("resourceVersion", ""),
        obj=obj,
    )


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
