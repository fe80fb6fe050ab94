"""From raw Kubernetes objects (JSON dicts) to the rows the portal stores.

Pure functions over plain dicts: no Django, no client. Usage is counted as HAMi
and Volcano count it (``getNodesUsage``): every pod with ``hami.io/vgpu-node``
whose phase is not Succeeded or Failed (terminating pods still count) books each
entry of its ``hami.io/<cw>-devices-allocated`` annotation.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from apps.inventory.hami import annotations as ann
from apps.inventory.hami.runtime_info import parse_runtime_info

log = logging.getLogger(__name__)

TERMINAL_PHASES = frozenset({"Succeeded", "Failed"})
VNPU_RESOURCE_PREFIX = "huawei.com/"


@dataclass(frozen=True)
class ChipState:
    """One chip as registered by the device plugin on a node."""

    uuid: str
    common_word: str
    index: int
    slots: int
    memory: int
    aicore: int
    healthy: bool
    network_id: int | None
    handshake: str
    handshake_at: datetime | None


@dataclass(frozen=True)
class NodeState:
    """A node and its chips."""

    name: str
    uid: str
    labels: Mapping[str, str]
    ready: bool
    ascend_enabled: bool
    hami_vnpu_core: bool
    unschedulable: bool
    resource_version: str
    chips: tuple[ChipState, ...]
    #: allocatable ``huawei.com/<commonWord>`` (the chips' slots the device
    #: plugin lists to the kubelet): shrinks when a chip is filtered out.
    vnpu_allocatable: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class SliceState:
    """One device entry of a pod's ``-devices-allocated`` annotation."""

    namespace: str
    pod_name: str
    pod_uid: str
    container_index: int
    chip_uuid: str
    common_word: str
    node_name: str
    template: str
    memory: int
    priority: int
    priority_class: str
    phase: str
    started_at: datetime | None
    preemptable: bool = True
    volcano_queue: str = "default"

    @property
    def key(self) -> tuple[str, str, str, int]:
        return (self.namespace, self.pod_name, self.chip_uuid, self.container_index)


@dataclass(frozen=True)
class PendingState:
    """A pod waiting for a vNPU (no node yet)."""

    namespace: str
    name: str
    uid: str
    common_word: str
    memory: int | None
    priority: int
    priority_class: str
    created_at: datetime | None
    message: str


def parse_time(value: str | None) -> datetime | None:
    """An RFC 3339 timestamp as the API server writes it ('2026-11-30T07:58:12Z')."""
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def node_state(node: Mapping[str, Any]) -> NodeState:
    """The NodeState of a Node object; bad registration annotations are logged and skipped."""
    meta = _meta(node)
    annotations = meta.get("annotations") or {}
    labels = meta.get("labels") or {}
    conditions = (node.get("status") or {}).get("conditions") or []
    ready = any(
        c.get("type") == "Ready" and c.get("status") == "True" for c in conditions
    )
    chips: list[ChipState] = []
    for key, value in annotations.items():
        if not key.startswith(ann.REGISTER_PREFIX):
            continue
        common_word = key[len(ann.REGISTER_PREFIX) :]
        try:
            devices = ann.parse_node_register(value)
        except ValueError as exc:
            log.warning("node %s: unreadable %s: %s", meta.get("name"), key, exc)
            continue
        kind, at = _handshake(annotations.get(ann.handshake_key(common_word)))
        for device in devices:
            chips.append(
                ChipState(
                    uuid=device.id,
                    common_word=device.type or common_word,
                    index=device.index,
                    slots=device.count,
                    memory=device.devmem,
                    aicore=device.devcore,
                    healthy=device.health,
                    network_id=device.network_id,
                    handshake=kind,
                    handshake_at=at,
                )
            )
    return NodeState(
        name=meta.get("name", ""),
        uid=meta.get("uid", ""),
        labels=dict(labels),
        ready=ready,
        ascend_enabled=labels.get("ascend") == "on",
        hami_vnpu_core=str(annotations.get("hami-vnpu-core", "")).lower() == "true",
        unschedulable=bool((node.get("spec") or {}).get("unschedulable")),
        resource_version=meta.get("resourceVersion", ""),
        chips=tuple(sorted(chips, key=lambda c: (c.common_word, c.index, c.uuid))),
        vnpu_allocatable=_vnpu_allocatable(node),
    )


def _vnpu_allocatable(node: Mapping[str, Any]) -> dict[str, int]:
    """The node's allocatable ``huawei.com/*`` counts (unreadable ones left out)."""
    allocatable = (node.get("status") or {}).get("allocatable") or {}
    counts: dict[str, int] = {}
    for resource, quantity in allocatable.items():
        if not resource.startswith(VNPU_RESOURCE_PREFIX):
            continue
        try:
            counts[resource[len(VNPU_RESOURCE_PREFIX) :]] = int(str(quantity))
        except ValueError:
            continue
    return counts


def _handshake(value: str | None) -> tuple[str, datetime | None]:
    if not value:
        return "", None
    try:
        kind, at = ann.parse_handshake(value)
    except ValueError:
        return value[:64], None
    if at is not None and at.tzinfo is None:
        at = at.replace(tzinfo=UTC)
    return kind, at


def _runtime_templates(
    annotations: Mapping[str, str], common_word: str
) -> dict[str, str]:
    raw = annotations.get(ann.runtime_key(common_word))
    if not raw:
        return {}
    try:
        return {item.uuid: item.temp for item in parse_runtime_info(raw)}
    except ValueError:
        return {}


def _allocations(
    annotations: Mapping[str, str], common_words: Collection[str] | None
) -> Iterator[tuple[str, str, str]]:
    """(commonWord, key, value) of each ``hami.io/<cw>-devices-allocated`` annotation."""
    if common_words:
        # Two dict lookups per pod instead of a scan of every key: this runs
        # 30,000 times on a reference-scale first list.
        for common_word in common_words:
            key = ann.allocated_key(common_word)
            value = annotations.get(key)
            if value is not None:
                yield common_word, key, value
        return
    for key, value in annotations.items():
        common_word = ann.allocated_common_word(key)
        if common_word is not None:
            yield common_word, key, value


def pod_slices(
    pod: Mapping[str, Any], common_words: Collection[str] | None = None
) -> list[SliceState]:
    """The slices a pod holds, counted as HAMi counts them (empty for terminal pods).

    ``common_words`` limits them to those chip types: HAMi's other vendors use
    the same key pattern (``hami.io/vgpu-devices-allocated`` for NVIDIA).
    """
    meta = _meta(pod)
    annotations = meta.get("annotations") or {}
    status = pod.get("status") or {}
    phase = status.get("phase", "")
    node_name = annotations.get(ann.VGPU_NODE)
    if not node_name or phase in TERMINAL_PHASES:
        return []
    spec = pod.get("spec") or {}
    slices: list[SliceState] = []
    for common_word, key, value in _allocations(annotations, common_words):
        try:
            containers = ann.parse_pod_devices(value)
        except ValueError as exc:
            log.warning(
                "pod %s/%s: unreadable %s: %s",
                meta.get("namespace"),
                meta.get("name"),
                key,
                exc,
            )
            continue
        templates = _runtime_templates(annotations, common_word)
        for container_index, devices in enumerate(containers):
            for device in devices:
                slices.append(
                    SliceState(
                        namespace=meta.get("namespace", ""),
                        pod_name=meta.get("name", ""),
                        pod_uid=meta.get("uid", ""),
                        container_index=container_index,
                        chip_uuid=device.uuid,
                        common_word=device.type or common_word,
                        node_name=node_name,
                        template=templates.get(device.uuid, ""),
                        memory=device.usedmem,
                        priority=int(spec.get("priority") or 0),
                        priority_class=spec.get("priorityClassName", ""),
                        phase=phase,
                        started_at=parse_time(status.get("startTime")),
                        preemptable=pod_preemptable(meta),
                        volcano_queue=(annotations.get(VOLCANO_QUEUE_KEY) or "default"),
                    )
                )
    return slices


PREEMPTABLE_KEY = "volcano.sh/preemptable"
VOLCANO_QUEUE_KEY = "scheduling.volcano.sh/queue-name"


def pod_preemptable(meta: Mapping[str, Any]) -> bool:
    """Volcano's rule: a pod is a possible victim unless its annotation or
    label ``volcano.sh/preemptable`` is ``"false"`` (the annotation first)."""
    for part in ("annotations", "labels"):
        value = (meta.get(part) or {}).get(PREEMPTABLE_KEY)
        if value is not None:
            return str(value).strip().lower() != "false"
    return True


def _vnpu_request(spec: Mapping[str, Any]) -> tuple[str, int | None] | None:
    """(commonWord, memory MB or None) of the first container limit on a vNPU resource."""
    containers = [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]
    for container in containers:
        limits = {
            **((container.get("resources") or {}).get("requests") or {}),
            **((container.get("resources") or {}).get("limits") or {}),
        }
        for name in limits:
            if not name.startswith(VNPU_RESOURCE_PREFIX) or name.endswith(
                ("-memory", "-core")
            ):
                continue
            common_word = name[len(VNPU_RESOURCE_PREFIX) :]
            memory = limits.get(f"{name}-memory")
            try:
                return common_word, int(str(memory)) if memory is not None else None
            except ValueError:
                return common_word, None
    return None


def pod_pending(pod: Mapping[str, Any]) -> PendingState | None:
    """A PendingState when the pod waits for a vNPU (Pending and not yet bound)."""
    status = pod.get("status") or {}
    spec = pod.get("spec") or {}
    if not _waits_for_a_node(status, spec):
        return None
    request = _vnpu_request(spec)
    if request is None:
        return None
    meta = _meta(pod)
    message = ""
    for condition in status.get("conditions") or []:
        if (
            condition.get("type") == "PodScheduled"
            and condition.get("status") == "False"
        ):
            message = condition.get("message") or condition.get("reason") or ""
    return PendingState(
        namespace=meta.get("namespace", ""),
        name=meta.get("name", ""),
        uid=meta.get("uid", ""),
        common_word=request[0],
        memory=request[1],
        priority=int(spec.get("priority") or 0),
        priority_class=spec.get("priorityClassName", ""),
        created_at=parse_time(meta.get("creationTimestamp")),
        message=message,
    )


def _waits_for_a_node(status: Mapping[str, Any], spec: Mapping[str, Any]) -> bool:
    return status.get("phase") == "Pending" and not spec.get("nodeName")


# What ``slim_pod`` keeps: everything ``pod_slices``, ``pod_pending`` and a
# skipped object's record read, and nothing else.
_SLIM_METADATA = ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
_SLIM_ANNOTATION_PREFIXES = (ann.ANNOTATION_PREFIX, ann.RUNTIME_PREFIX)
_SLIM_ANNOTATIONS = frozenset((VOLCANO_QUEUE_KEY, PREEMPTABLE_KEY))
_SLIM_SPEC = ("priority", "priorityClassName", "nodeName")
_SLIM_STATUS = ("phase", "startTime")


def slim_pod(pod: Any) -> Any:
    """The parts of a listed pod that sync reads, as a pod of the same shape.

    A full list of pods is held whole until it is written, and most of a pod
    (its containers, volumes, managed fields, conditions, other annotations)
    is never read: at 300,000 pods the list alone was 1.8 GiB, and touching
    that much fresh memory was a third of parsing it. Each page of the list is
    slimmed as it arrives, so only what is read outlives it. Containers and
    conditions are kept for a pod that waits for a node (``pod_pending``
    reads them). A pod not shaped as expected is kept whole, for the
    functions that read it to judge (and skip) as before.
    """
    if type(pod) is not dict:
        return pod
    meta, spec, status = pod.get("metadata"), pod.get("spec"), pod.get("status")
    parts = (meta, spec or {}, status or {})
    if not all(type(part) is dict for part in parts):
        return pod
    annotations, labels = meta.get("annotations") or {}, meta.get("labels") or {}
    if type(annotations) is not dict or type(labels) is not dict:
        return pod
    spec, status = parts[1], parts[2]
    kept_meta = {key: meta[key] for key in _SLIM_METADATA if key in meta}
    kept_meta["annotations"] = {
        key: value
        for key, value in annotations.items()
        if key in _SLIM_ANNOTATIONS or key.startswith(_SLIM_ANNOTATION_PREFIXES)
    }
    if PREEMPTABLE_KEY in labels:
        kept_meta["labels"] = {PREEMPTABLE_KEY: labels[PREEMPTABLE_KEY]}
    kept_spec = {key: spec[key] for key in _SLIM_SPEC if key in spec}
    kept_status = {key: status[key] for key in _SLIM_STATUS if key in status}
    if _waits_for_a_node(status, spec):
        for key in ("initContainers", "containers"):
            if key in spec:
                kept_spec[key] = spec[key]
        if "conditions" in status:
            kept_status["conditions"] = status["conditions"]
    slim = {"metadata": kept_meta, "spec": kept_spec, "status": kept_status}
    if "kind" in pod:
        slim["kind"] = pod["kind"]
    return slim
