"""What isolation needs from the node config's publish and health check.

Kept apart so that isolation names the two steps it takes from them.
"""

from __future__ import annotations

from typing import Any

from apps.inventory.hami.nodeconfig import FILTER
from apps.inventory.models import Cluster
from apps.inventory.nodeconfig.health import node_config_health
from apps.inventory.nodeconfig.publishing import set_node_filter


def node_filter_set(
    *,
    cluster: Cluster,
    node: str,
    uuid: str,
    filtered: bool,
    actor: Any,
    reason: str,
    actor_name: str = "",
) -> int:
    """Publish ``node``'s filterDevices with ``uuid`` in (or out); the new version's number.

    The node config's own publish (validated, versioned, guarded against a
    hand edit). Warnings are confirmed: the admin asked for this one change,
    and a warning elsewhere in the file (a hand-written index filter) must
    not keep a failing chip in service; they stay on the version's record.
    ``actor`` is None for a system actor (the isolation policy), named by
    ``actor_name``: the version's author and its audit row say "policy".
    """
    change = {"add_uuids": [uuid]} if filtered else {"remove_uuids": [uuid]}
    result = set_node_filter(
        cluster=cluster,
        node_name=node,
        actor=actor,
        reason=reason,
        actor_name=actor_name,
        confirm_warnings=True,
        **change,
    )
    return int(result.version.number)


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
