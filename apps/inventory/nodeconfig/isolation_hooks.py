"""What isolation needs from the node config's publish and health check.

Placeholders until those land (integration replaces the bodies).
"""

from __future__ import annotations

from typing import Any

from apps.inventory.hami.nodeconfig import FILTER
from apps.inventory.models import Cluster
from apps.inventory.nodeconfig.health import node_config_health


def node_filter_set(
    *, cluster: Cluster, node: str, uuid: str, filtered: bool, actor: Any, reason: str
) -> int:
    """Publish ``node``'s filterDevices with ``uuid`` in (or out); the new version's number."""
    raise NotImplementedError


def node_config_unread(cluster: Cluster, node: str) -> str:
    """Why the plugin on ``node`` would not apply a chip filter ("" when it would).

    The node config must be read at all (the health check's blocking
    problems, each with its fix), and the node's plugin version must apply
    ``filterDevices`` (v1.4.0 on).
    """
    health = node_config_health(cluster)
    if not health["readable"]:
        return "; ".join(
            f"{c['message']} (fix: {c['fix']})" if c["fix"] else c["message"]
            for c in health["checks"]
            if c["check_status"] == "fail"
        )
    row = next((n for n in health["nodes"] if n["name"] == node), None)
    if row is None or FILTER not in row["applies"]:
        version = row["plugin_version"] if row else None
        return (
            f"device plugin {version or 'of unknown version'} does not apply"
            " filterDevices (it needs v1.4.0 or later)"
        )
    return ""
