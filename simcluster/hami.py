"""The HAMi wire-format helpers simcluster uses, from ``apps.inventory.hami``.

That package is pure Python (no Django); importing it through this module keeps
one place to adapt if its API moves. The template rule comes from the allocator
(``apps.inventory.hami.template_rule``, also pure): simcluster hands out
the template the portal books because both call the same function.
"""

from __future__ import annotations

from apps.inventory.hami.annotations import (
    BIND_PHASE,
    VGPU_NODE,
    AnnotationError,
    ContainerDevice,
    DeviceInfo,
    allocated_common_word,
    allocated_key,
    encode_pod_devices,
    handshake_key,
    no_use_uuid_key,
    parse_node_register,
    parse_pod_devices,
    register_key,
    render_handshake_reported,
    render_node_register,
    runtime_key,
    to_allocate_key,
    use_uuid_key,
)
from apps.inventory.hami.deviceconfig import ChipTypeSpec, parse_device_config
from apps.inventory.hami.runtime_info import (
    RuntimeInfo,
    parse_runtime_info,
    render_runtime_info,
)
from apps.inventory.hami.template_rule import (
    FitKind,
    FitResult,
    Scheduler,
    fit_template,
)
from apps.inventory.hami.validation import slots_per_chip

__all__ = [
    "BIND_PHASE",
    "VGPU_NODE",
    "AnnotationError",
    "ChipTypeSpec",
    "ContainerDevice",
    "DeviceInfo",
    "FitKind",
    "FitResult",
    "RuntimeInfo",
    "Scheduler",
    "allocated_common_word",
    "allocated_key",
    "encode_pod_devices",
    "fit_template",
    "handshake_key",
    "no_use_uuid_key",
    "parse_device_config",
    "parse_node_register",
    "parse_pod_devices",
    "parse_runtime_info",
    "register_key",
    "render_handshake_reported",
    "render_node_register",
    "render_runtime_info",
    "runtime_key",
    "slots_per_chip",
    "to_allocate_key",
    "use_uuid_key",
]


def chip_types_from_text(text: str) -> list[ChipTypeSpec]:
    """Parse ``device-config.yaml`` text into chip types (empty on any error)."""
    try:
        return parse_device_config(text).chip_types()
    except Exception:
        return []
