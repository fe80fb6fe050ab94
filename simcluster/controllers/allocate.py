"""A bound pod's vNPUs on its node: the plugin's Allocate, then the runtime.

After a scheduler binds a pod with ``hami.io/<cw>-devices-to-allocate``, the
kubelet asks the node's device plugin to allocate those chips, then starts
the container, and the runtime creates the vNPUs. Upstream
(Project-HAMi/ascend-device-plugin v1.1.0 to v1.4.0,
``internal/server/server.go`` ``Allocate`` and ``allocate.go``), Allocate
looks each chip up by the UUID the scheduler wrote and hands it out: it
checks **neither the chip's health nor its usage**. kubelet sees a sick chip's
vNPU IDs as Unhealthy and admits the pod with a healthy ID, so a pod bound to
a sick chip runs on it (:func:`allocate_error` answers only a chip that is not
on the node). The chips are hard-split, so a vNPU that does not fit its chip
(a slot or the memory, counting every pod on the node whose allocation
succeeded and that has not ended: a terminating pod still holds its vNPU
until its container exits) cannot be created: that shows when the container
starts, not at admission (INFERRED; :func:`create_error`). The schedulers may
think otherwise: Volcano frees a terminating victim's room at once and checks
no health. Used by simcluster's kubelet and kubestack's plugin.
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


def allocate_error(pod: Pod, devices: dict[str, DeviceInfo]) -> str | None:
    """Why the plugin's Allocate refuses ``pod``, or None.

    Allocate only looks the chips up (module docstring): a chip that is not
    on the node is the one refusal; health and usage are not checked.

    Args:
        pod: The bound pod (API JSON).
        devices: The node's registered chips by UUID.
    """
    annotations = pod["metadata"].get("annotations") or {}
    wanted = pod_devices(annotations, to_allocate=True)
    if not wanted:
        return "no devices-to-allocate annotation"
    for device in wanted:
        if device.uuid not in devices:
            return f"chip {device.uuid} is not on this node"
    return None


def create_error(
    pod: Pod, node_pods: list[Pod], devices: dict[str, DeviceInfo]
) -> str | None:
    """Why the runtime cannot create the vNPUs of ``pod`` on their chips, or None.

    Args:
        pod: The pod, allocated (its devices still named to allocate).
        node_pods: The node's pods (``pod`` itself may be among them).
        devices: The node's registered chips by UUID.
    """
    annotations = pod["metadata"].get("annotations") or {}
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
    for device in pod_devices(annotations, to_allocate=True):
        chip = devices.get(device.uuid)
        if chip is None:
            return f"chip {device.uuid} is not on this node"
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


#: What a container whose runtime failed to start it reports (containerd's
#: ``StartError``, exit code 128).
START_ERROR = "StartError"
START_ERROR_EXIT = 128


def create_failure_message(reason: str) -> str:
    """The container's message when its vNPU could not be created."""
    return f"failed to create containerd task: creating vNPU: {reason}"


def start_error_status(pod: Pod, reason: str, now: str, pod_ip: str) -> dict[str, Any]:
    """The status of a pod whose container could not start (restartPolicy
    Never: the pod ends Failed, its container terminated with StartError).

    The sandbox was made (it has an IP): only the container failed.
    """
    message = create_failure_message(reason)
    return {
        "phase": "Failed",
        "startTime": now,
        "podIP": pod_ip,
        "podIPs": [{"ip": pod_ip}],
        "containerStatuses": not_started(
            pod,
            {
                "terminated": {
                    "exitCode": START_ERROR_EXIT,
                    "reason": START_ERROR,
                    "message": message,
                    "startedAt": "1970-01-01T00:00:00Z",
                    "finishedAt": now,
                }
            },
        ),
    }


def not_started(pod: Pod, state: dict[str, Any]) -> list[dict[str, Any]]:
    """The status of each container of ``pod`` that never started, in ``state``."""
    return [
        {
            "name": c.get("name", ""),
            "image": c.get("image", ""),
            "imageID": "",
            "ready": False,
            "restartCount": 0,
            "started": False,
            "state": state,
        }
        for c in (pod.get("spec") or {}).get("containers") or []
    ]
