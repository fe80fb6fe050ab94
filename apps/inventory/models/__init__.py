"""The inventory's models: clusters and what they hold, their configs' history,
and what sync keeps. Every row belongs to a cluster. Chip types and templates
are the portal's editable copy of the ``vnpus`` section of the cluster's
device-config; the version rows keep every full text (device and node config)
seen or written.
"""

from apps.inventory.models.clusters import (
    Chip,
    ChipType,
    Cluster,
    Node,
    Slice,
    Template,
    cluster_name_not_numeric,
    name_validator,
)
from apps.inventory.models.configs import (
    ConfigVersionBase,
    DeviceConfigPendingWrite,
    DeviceConfigVersion,
    NodeConfigPendingWrite,
    NodeConfigVersion,
    PendingWriteBase,
)
from apps.inventory.models.mirror import (
    ChipEvent,
    ClusterObject,
    PendingPod,
    PriorityClass,
    SyncCursor,
    UsageSample,
)

__all__ = [
    "Chip",
    "ChipEvent",
    "ChipType",
    "Cluster",
    "ClusterObject",
    "ConfigVersionBase",
    "DeviceConfigPendingWrite",
    "DeviceConfigVersion",
    "Node",
    "NodeConfigPendingWrite",
    "NodeConfigVersion",
    "PendingPod",
    "PendingWriteBase",
    "PriorityClass",
    "Slice",
    "SyncCursor",
    "Template",
    "UsageSample",
    "cluster_name_not_numeric",
    "name_validator",
]
