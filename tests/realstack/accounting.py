"""HAMi's accounting of a real cluster, computed from the API objects alone.

Independent of the portal's sync: chips from each node's registration
annotation, usage from every pod HAMi still counts (bound, vNPUs written, not
Succeeded or Failed; a terminating pod still holds its vNPU).
"""

from __future__ import annotations

from typing import Any

from apps.inventory.hami.annotations import (
    VGPU_NODE,
    parse_node_register,
    pod_slices,
    register_key,
)


def chips_by_uuid(
    core: Any, common_words: tuple[str, ...]
) -> dict[str, dict[str, Any]]:
    """``uuid -> {node, index, slots, memory, healthy}`` from node registrations."""
    out: dict[str, dict[str, Any]] = {}
    for node in core.list_node().items:
        annotations = node.metadata.annotations or {}
        for cw in common_words:
            value = annotations.get(register_key(cw))
            if not value:
                continue
            for device in parse_node_register(value):
                out[device.id] = {
                    "node": node.metadata.name,
                    "index": device.index,
                    "slots": device.count,
                    "memory": device.devmem,
                    "healthy": device.health,
                }
    return out


def usage_by_uuid(
    core: Any, common_words: tuple[str, ...]
) -> dict[str, dict[str, int]]:
    """``uuid -> {slots_used, memory_used}`` over the pods HAMi counts."""
    out: dict[str, dict[str, int]] = {}
    for pod in core.list_pod_for_all_namespaces().items:
        annotations = pod.metadata.annotations or {}
        if not annotations.get(VGPU_NODE) or pod.status.phase in (
            "Succeeded",
            "Failed",
        ):
            continue
        for _, device in pod_slices(annotations, common_words=common_words):
            row = out.setdefault(device.uuid, {"slots_used": 0, "memory_used": 0})
            row["slots_used"] += 1
            row["memory_used"] += device.usedmem
    return out


def portal_usage(cluster: Any) -> dict[str, dict[str, int]]:
    """The portal's ledger in the shape of :func:`usage_by_uuid` (chips in use only)."""
    from apps.inventory.models import Chip

    return {
        uuid: {"slots_used": slots, "memory_used": memory}
        for uuid, slots, memory in Chip.objects.filter(cluster=cluster)
        .exclude(slots_used=0, memory_used=0)
        .values_list("uuid", "slots_used", "memory_used")
    }


def simcluster_node(core: Any, node: str, common_word: str) -> Any:
    """The real node's chips of one type, with the usage HAMi counts, as
    simcluster's placement sees a node (``simcluster.controllers.placement``),
    for asking simcluster's model where a pod would go on the real cluster."""
    from simcluster.controllers.placement import ChipState, NodeInfo

    used = usage_by_uuid(core, (common_word,))
    info = NodeInfo(node, {}, False)
    info.chips = [
        ChipState(
            node,
            chip["index"],
            uuid,
            common_word,
            chip["slots"],
            chip["memory"],
            chip["healthy"],
            used.get(uuid, {}).get("slots_used", 0),
            used.get(uuid, {}).get("memory_used", 0),
        )
        for uuid, chip in chips_by_uuid(core, (common_word,)).items()
        if chip["node"] == node
    ]
    return info
