"""The ids of the configuration checks, as the tests expect them (one list)."""

from __future__ import annotations

ALL_CHECKS = (
    "volcano_config",
    "component_versions",
    "deviceshare_enabled",
    "known_geometries",
    "chip_policy",
    "node_lock",
    "predicates_plugin",
    "device_config_shape",
    "preempt_action",
    "device_plugin",
    "registrations",
    "slices_on_unhealthy_chips",
    "device_config_drift",
    "volcano_queues",
)
