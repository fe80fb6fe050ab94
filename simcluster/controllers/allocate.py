"""The device plugin's Allocate on a node: can the bound pod's vNPUs be created?

After a scheduler binds a pod with ``hami.io/<cw>-devices-to-allocate``, the
kubelet asks the node's device plugin to create the vNPUs on those chips. The
chips are hard-split: a vNPU is created only on a healthy chip with a free
slot and the memory, counting every pod on the node whose allocation
succeeded and that has not ended (a terminating pod still holds its vNPU until
its container exits). The schedulers may think otherwise (Volcano frees a
terminating victim's room at once and does not check chip health); this is
where the node says no. Used by simcluster's kubelet and kubestack's plugin.
"""

from __future__ import annotations

from typing import Any

from apps.inventory.hami.annotations import (
    BIND_PHASE,
    AnnotationError,
    ContainerDevice,
    DeviceInfo,
    parse_pod_devices,
)

Pod = dict[str, Any]


def pod_devices(
    annotations: dict[str, str], *, to_allocate: bool
) -> list[ContainerDevice]:
    """The chips a pod's ``-devices-to-allocate`` (or ``-devices-allocated``) name."""
    out: list[ContainerDevice] = []
    suffix = "-devices-to-allocate" if to_allocate else "-devices-allocated"
    for key, value in annotations.items():
        if key.startswith("hami.io/") and key.endswith(suffix):
            try:
                containers = parse_pod_devices(value)
            except AnnotationError:
                continue
            out.extend(device for container in containers for device in container)
    return out


def allocate_error(
    pod: Pod, node_pods: list[Pod], devices: dict[str, DeviceInfo]
) -> str | None:
    """Why the vNPUs of ``pod`` cannot be created on their chips, or None.

    Args:
        pod: The bound pod (API JSON).
        node_pods: The node's pods (``pod`` itself may be among them).
        devices: The node's registered chips by UUID.
    """
    annotations = pod["metadata"].get("annotations") or {}
    wanted = pod_devices(annotations, to_allocate=True)
    if not wanted:
        return "no devices-to-allocate annotation"
    used: dict[str, tuple[int, int]] = {}
    for other in node_pods:
        meta = other["metadata"]
        if meta.get("uid") == pod["metadata"].get("uid"):
            continue
        if (other.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            continue
        other_annotations = meta.get("annotations") or {}
        if other_annotations.get(BIND_PHASE) != "success":
            continue
        for device in pod_devices(other_annotations, to_allocate=False):
            slots, memory = used.get(device.uuid, (0, 0))
            used[device.uuid] = (slots + 1, memory + device.usedmem)
    for device in wanted:
        chip = devices.get(device.uuid)
        if chip is None:
            return f"chip {device.uuid} is not on this node"
        if not chip.health:
            return f"chip {device.uuid} is unhealthy"
        slots, memory = used.get(device.uuid, (0, 0))
        if slots + 1 > chip.count:
            return f"chip {device.uuid} has no free vNPU slot ({slots} of {chip.count} in use)"
        if memory + device.usedmem > chip.devmem:
            return (
                f"chip {device.uuid} cannot hold {device.usedmem} MB "
                f"({memory} of {chip.devmem} MB in use)"
            )
        used[device.uuid] = (slots + 1, memory + device.usedmem)
    return None


def allocate_failure_message(reason: str) -> str:
    """The pod's status message when the kubelet's Allocate call failed."""
    return f"Allocate failed due to rpc error: code = Unknown desc = {reason}, which is unexpected"
