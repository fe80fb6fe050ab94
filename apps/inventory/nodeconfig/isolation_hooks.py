"""What isolation needs from the node config's publish and health check.

Placeholders until those land (integration replaces the bodies).
"""

from __future__ import annotations

from typing import Any

from apps.inventory.models import Cluster


def node_filter_set(
    *, cluster: Cluster, node: str, uuid: str, filtered: bool, actor: Any, reason: str
) -> int:
    """Publish ``node``'s filterDevices with ``uuid`` in (or out); the new version's number."""
    raise NotImplementedError


def node_config_unread(cluster: Cluster, node: str) -> str:
    """Why the plugin on ``node`` does not read the node config ("" when it does)."""
    return ""
