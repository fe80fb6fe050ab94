"""Node and pod annotations written by HAMi, Volcano and the Ascend plugin.

Formats from the facts file, sections 2 and 3 (the device plugin's runtime
info, ``huawei.com/<commonWord>``, is in ``apps.inventory.hami.runtime_info``). Parsers are as lenient as the
Go code where it is deliberate (case-insensitive JSON keys, missing keys
meaning zero) and strict where Go would silently misread (non-numeric
memory). Renderers reproduce the Go output byte for byte.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from ._annotation_json import AnnotationError, fold_keys, json_field, load_json_list
from ._gojson import go_map, marshal

__all__ = [
    "ALLOCATED_SUFFIX",
    "ANNOTATION_PREFIX",
    "BIND_PHASE",
    "BIND_TIME",
    "GPU_SCHEDULER_POLICY",
    "HAMI_VNPU_CORE",
    "HANDSHAKE_PREFIX",
    "MINDCLUSTER_NPU_CORE",
    "MINDCLUSTER_REAL_USE",
    "NODE_LOCK",
    "NODE_SCHEDULER_POLICY",
    "PREDICATE_TIME",
    "REGISTER_PREFIX",
    "REPORTED_TIME_FORMAT",
    "REQUESTING_TIME_FORMAT",
    "RUNTIME_PREFIX",
    "TO_ALLOCATE_SUFFIX",
    "VGPU_NODE",
    "VGPU_TIME",
    "VNPU_MODE",
    "VNPU_MODE_HAMI_CORE",
    "AnnotationError",
    "BindPhase",
    "ContainerDevice",
    "DeviceInfo",
    "HandshakeState",
    "allocated_common_word",
    "allocated_key",
    "encode_pod_devices",
    "handshake_key",
    "no_use_uuid_key",
    "node_locks",
    "parse_handshake",
    "parse_node_register",
    "parse_pod_devices",
    "pod_slices",
    "register_key",
    "registrations",
    "render_handshake_reported",
    "render_handshake_requesting",
    "render_node_register",
    "runtime_key",
    "to_allocate_key",
    "use_uuid_key",
]

# --- node annotations (device plugin, scheduler) --------------------------
REGISTER_PREFIX = "hami.io/node-register-"
HANDSHAKE_PREFIX = "hami.io/node-handshake-"
#: Node-level soft-split capability, "true"/"false" (no prefix).
HAMI_VNPU_CORE = "hami-vnpu-core"
#: HAMi's node lock ("<RFC3339>,<ns>,<pod>"). Volcano's Ascend devices lock
#: under the chip type's common word instead ("Ascend310P": "<RFC3339>"):
#: ``nodelock.LockNode(node, ads.Type)`` in Volcano v1.15.1, see :func:`node_locks`.
NODE_LOCK = "hami.io/mutex.lock"

# --- pod annotations (scheduler / Volcano, then the device plugin) --------
ANNOTATION_PREFIX = "hami.io/"
VGPU_NODE = "hami.io/vgpu-node"
VGPU_TIME = "hami.io/vgpu-time"
PREDICATE_TIME = "predicate-time"
BIND_PHASE = "hami.io/bind-phase"
BIND_TIME = "hami.io/bind-time"
ALLOCATED_SUFFIX = "-devices-allocated"
TO_ALLOCATE_SUFFIX = "-devices-to-allocate"
RUNTIME_PREFIX = "huawei.com/"

# --- pod annotations set by users (HAMi) ---------------------------------
NODE_SCHEDULER_POLICY = "hami.io/node-scheduler-policy"
GPU_SCHEDULER_POLICY = "hami.io/gpu-scheduler-policy"
VNPU_MODE = "huawei.com/vnpu-mode"
VNPU_MODE_HAMI_CORE = "hami-core"

# --- Volcano's MindCluster mode (not HAMi), for recognising such pods -----
MINDCLUSTER_NPU_CORE = "huawei.com/npu-core"
MINDCLUSTER_REAL_USE = "huawei.com/AscendReal"

#: Go layout "2006.01.02 15:04:05" of the device plugin's "Reported_" stamp.
REPORTED_TIME_FORMAT = "%Y.%m.%d %H:%M:%S"
#: Go layout ``time.DateTime`` of the scheduler's "Requesting_" stamp.
REQUESTING_TIME_FORMAT = "%Y-%m-%d %H:%M:%S"

_DEVICE_FIELDS = 4  # uuid,type,usedmem,usedcores


class BindPhase(StrEnum):
    """Values of ``hami.io/bind-phase``."""

    ALLOCATING = "allocating"
    SUCCESS = "success"
    FAILED = "failed"


class HandshakeState(StrEnum):
    """Known states of ``hami.io/node-handshake-<commonWord>``."""

    REPORTED = "Reported"
    REQUESTING = "Requesting"
    DELETED = "Deleted"


def register_key(common_word: str) -> str:
    """Return ``hami.io/node-register-<commonWord>``."""
    return f"{REGISTER_PREFIX}{common_word}"


def handshake_key(common_word: str) -> str:
    """Return ``hami.io/node-handshake-<commonWord>``."""
    return f"{HANDSHAKE_PREFIX}{common_word}"


def allocated_key(common_word: str) -> str:
    """Return ``hami.io/<commonWord>-devices-allocated``."""
    return f"{ANNOTATION_PREFIX}{common_word}{ALLOCATED_SUFFIX}"


def to_allocate_key(common_word: str) -> str:
    """Return ``hami.io/<commonWord>-devices-to-allocate``."""
    return f"{ANNOTATION_PREFIX}{common_word}{TO_ALLOCATE_SUFFIX}"


def runtime_key(common_word: str) -> str:
    """Return ``huawei.com/<commonWord>`` (the pod's runtime info)."""
    return f"{RUNTIME_PREFIX}{common_word}"


def use_uuid_key(common_word: str) -> str:
    """Return ``hami.io/use-<commonWord>-uuid``."""
    return f"{ANNOTATION_PREFIX}use-{common_word}-uuid"


def no_use_uuid_key(common_word: str) -> str:
    """Return ``hami.io/no-use-<commonWord>-uuid``."""
    return f"{ANNOTATION_PREFIX}no-use-{common_word}-uuid"


def allocated_common_word(key: str) -> str | None:
    """Return the commonWord of a ``hami.io/<cw>-devices-allocated`` key.

    Args:
        key: An annotation key.

    Returns:
        The commonWord, or None for any other key.
    """
    if key.startswith(ANNOTATION_PREFIX) and key.endswith(ALLOCATED_SUFFIX):
        word = key[len(ANNOTATION_PREFIX) : -len(ALLOCATED_SUFFIX)]
        return word or None
    return None


# --- node registration ----------------------------------------------------


@dataclass(frozen=True)
class DeviceInfo:
    """One chip as the device plugin registers it (HAMi ``DeviceInfo``).

    Attributes:
        id: Chip die ID (five 8-hex-digit groups).
        index: Position on the node, from 0.
        count: Slices per chip (``VDeviceCount()``).
        devmem: memoryAllocatable, MB.
        devcore: aiCore, or 100 in hami-core mode.
        type: The commonWord.
        numa: NUMA node (always 0 for Ascend).
        mode: Device mode (unused for Ascend).
        health: False when the chip is unhealthy (the key is then absent).
        custominfo: Extra data, e.g. ``{"NetworkID": 1}`` on 910 chips.
    """

    id: str
    index: int = 0
    count: int = 0
    devmem: int = 0
    devcore: int = 0
    type: str = ""
    numa: int = 0
    mode: str = ""
    health: bool = False
    custominfo: Mapping[str, Any] = field(default_factory=dict, hash=False)

    @property
    def network_id(self) -> int | None:
        """The ``NetworkID`` of ``custominfo`` (key matched case-insensitively)."""
        for key, value in self.custominfo.items():
            if key.lower() != "networkid" or isinstance(value, bool):
                continue
            if isinstance(value, int):
                return value
            if isinstance(value, float) and value.is_integer():
                return int(value)
        return None


def _device_info(item: Any, what: str) -> DeviceInfo:
    fields = fold_keys(item, what)
    custominfo = fields.get("custominfo")
    if custominfo is not None and not isinstance(custominfo, dict):
        raise AnnotationError(
            f"{what}: custominfo must be an object, got {custominfo!r}"
        )
    return DeviceInfo(
        id=json_field(fields, "id", str, what),
        index=json_field(fields, "index", int, what),
        count=json_field(fields, "count", int, what),
        devmem=json_field(fields, "devmem", int, what),
        devcore=json_field(fields, "devcore", int, what),
        type=json_field(fields, "type", str, what),
        numa=json_field(fields, "numa", int, what),
        mode=json_field(fields, "mode", str, what),
        health=json_field(fields, "health", bool, what),
        custominfo=custominfo or {},
    )


def parse_node_register(value: str) -> list[DeviceInfo]:
    """Parse ``hami.io/node-register-<commonWord>``.

    Args:
        value: The annotation value, a JSON array of devices.

    Returns:
        The devices in annotation order.

    Raises:
        AnnotationError: Not a JSON array of objects, or a field has the
            wrong JSON type.
    """
    items = load_json_list(value, "node-register")
    return [_device_info(item, f"node-register[{n}]") for n, item in enumerate(items)]


def _device_json(device: DeviceInfo) -> dict[str, Any]:
    # Go field order, every field `omitempty`.
    pairs: list[tuple[str, Any]] = [
        ("id", device.id),
        ("index", device.index),
        ("count", device.count),
        ("devmem", device.devmem),
        ("devcore", device.devcore),
        ("type", device.type),
        ("numa", device.numa),
        ("mode", device.mode),
        ("health", device.health),
        ("custominfo", go_map(device.custominfo)),
    ]
    return {key: value for key, value in pairs if value}


def render_node_register(
    devices: Sequence[DeviceInfo], *, pair_scores: bool = False
) -> str:
    """Render devices as the Ascend device plugin writes them.

    Args:
        devices: The chips of one commonWord on one node.
        pair_scores: Add ``"devicepairscore":{}`` to each chip, as every
            released plugin does (the field has no ``omitempty``; it is last).

    Returns:
        Compact JSON identical to Go's ``json.Marshal`` output.
    """
    chips = [_device_json(device) for device in devices]
    if pair_scores:
        chips = [{**chip, "devicepairscore": {}} for chip in chips]
    return marshal(chips)


def registrations(annotations: Mapping[str, str]) -> dict[str, list[DeviceInfo]]:
    """Read every ``hami.io/node-register-*`` annotation of a node.

    Args:
        annotations: The node's annotations.

    Returns:
        commonWord → devices.

    Raises:
        AnnotationError: A registration cannot be parsed (the message names
            the key).
    """
    found: dict[str, list[DeviceInfo]] = {}
    for key, value in annotations.items():
        word = key[len(REGISTER_PREFIX) :] if key.startswith(REGISTER_PREFIX) else ""
        if not word:
            continue
        try:
            found[word] = parse_node_register(value)
        except AnnotationError as exc:
            raise AnnotationError(f"{key}: {exc}") from exc
    return found


def node_locks(annotations: Mapping[str, str]) -> dict[str, datetime]:
    """The node locks a node carries: annotation key → when it was taken.

    A scheduler locks a node while it writes a pod's devices, and unlocks it
    a few milliseconds later. HAMi's lock is :data:`NODE_LOCK`
    (``"<RFC3339>,<ns>,<pod>"``); Volcano's Ascend devices lock under each
    registered chip type's common word (``"Ascend310P": "<RFC3339>"``). Both
    count a lock older than five minutes as expired. Volcano leaves its lock
    behind when writing the pod's annotations fails (the pod was deleted, the
    API server went away), so an old lock is a leak, not work in progress.
    Values that are not a time are not locks and are left out.
    """
    keys = [NODE_LOCK] + [
        key[len(REGISTER_PREFIX) :]
        for key in annotations
        if key.startswith(REGISTER_PREFIX) and len(key) > len(REGISTER_PREFIX)
    ]
    found: dict[str, datetime] = {}
    for key in keys:
        value = annotations.get(key)
        if not value:
            continue
        try:
            at = datetime.fromisoformat(value.split(",", 1)[0].strip())
        except ValueError:
            continue
        found[key] = at if at.tzinfo else at.replace(tzinfo=UTC)
    return found


def parse_handshake(value: str) -> tuple[str, datetime | None]:
    """Parse ``hami.io/node-handshake-<commonWord>``.

    Args:
        value: e.g. ``"Reported_2026.11.30 08:15:02"`` (device plugin) or
            ``"Requesting_2026-11-30 08:15:02"`` (scheduler).

    Returns:
        The state (a :class:`HandshakeState` when known, else the raw text)
        and the timestamp, or None when it does not parse. The stamp has no
        zone: it is the writer's local time, taken as UTC (the usual zone of
        the plugin and scheduler containers).
    """
    state, _, stamp = value.partition("_")
    known = {member.value: member for member in HandshakeState}
    parsed_state: str = known.get(state, state)
    for layout in (REPORTED_TIME_FORMAT, REQUESTING_TIME_FORMAT):
        try:
            return parsed_state, datetime.strptime(stamp, layout).replace(tzinfo=UTC)
        except ValueError:
            continue
    return parsed_state, None


def render_handshake_reported(moment: datetime) -> str:
    """Render the device plugin's ``Reported_<2006.01.02 15:04:05>`` value.

    Args:
        moment: The time to stamp; an aware time is converted to UTC, a
            naive one is written as it is.

    Returns:
        The annotation value.
    """
    return f"{HandshakeState.REPORTED}_{_utc(moment).strftime(REPORTED_TIME_FORMAT)}"


def render_handshake_requesting(moment: datetime) -> str:
    """Render the scheduler's ``Requesting_<2006-01-02 15:04:05>`` value.

    Args:
        moment: The time to stamp; an aware time is converted to UTC, a
            naive one is written as it is.

    Returns:
        The annotation value.
    """
    return (
        f"{HandshakeState.REQUESTING}_{_utc(moment).strftime(REQUESTING_TIME_FORMAT)}"
    )


def _utc(moment: datetime) -> datetime:
    return moment if moment.tzinfo is None else moment.astimezone(UTC)


# --- pod device lists -----------------------------------------------------


@dataclass(frozen=True)
class ContainerDevice:
    """One device (slice) assigned to a container.

    Attributes:
        uuid: Chip ID.
        type: commonWord.
        usedmem: MB booked on the chip.
        usedcores: Cores booked (0 in template mode).
    """

    uuid: str
    type: str
    usedmem: int
    usedcores: int


def _pod_int(text: str, entry: str, field: str) -> int:
    # As Go's strconv.Atoi: an optional sign, then ASCII digits only. Without a
    # regex, and the message only made on failure: this runs twice per slice,
    # 40,000 times on a first list.
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not (digits.isascii() and digits.isdigit()):
        raise AnnotationError(
            f"device entry {entry!r} {field}: {text!r} is not an integer"
        )
    return int(text)


def _container_device(entry: str) -> ContainerDevice:
    parts = entry.split(",")
    # Go requires at least four fields and ignores any further ones.
    if len(parts) < _DEVICE_FIELDS:
        raise AnnotationError(
            f"device entry {entry!r}: expected uuid,type,memory,cores"
        )
    uuid, kind, memory, cores = parts[:4]
    return ContainerDevice(
        uuid=uuid,
        type=kind,
        usedmem=_pod_int(memory, entry, "memory"),
        usedcores=_pod_int(cores, entry, "cores"),
    )


def parse_pod_devices(value: str) -> list[list[ContainerDevice]]:
    """Parse ``hami.io/<cw>-devices-allocated`` or ``-devices-to-allocate``.

    Each container is ``"<uuid>,<type>,<mem>,<cores>:"`` per device followed
    by ``";"``; init containers come first. Containers without devices are
    kept (as empty lists) so positions match the pod spec.

    Args:
        value: The annotation value; a missing final ``";"`` is tolerated.

    Returns:
        One list of devices per container.

    Raises:
        AnnotationError: An entry lacks fields or has a non-integer number.
    """
    if not isinstance(value, str):
        raise AnnotationError(f"expected a string, got {type(value).__name__}")
    if not value:
        return []
    body = value.removesuffix(";")
    return [
        [_container_device(entry) for entry in container.split(":") if entry]
        for container in body.split(";")
    ]


def encode_pod_devices(containers: Sequence[Sequence[ContainerDevice]]) -> str:
    """Encode devices per container as HAMi's ``EncodePodSingleDevice`` does.

    Args:
        containers: One sequence of devices per container, init first.

    Returns:
        The annotation value.

    Raises:
        AnnotationError: A uuid or type contains a separator (``,:;``).
    """
    parts: list[str] = []
    for devices in containers:
        for device in devices:
            for text in (device.uuid, device.type):
                if any(separator in text for separator in ",:;"):
                    raise AnnotationError(
                        f"{text!r} contains a separator (',', ':' or ';')"
                    )
            parts.append(
                f"{device.uuid},{device.type},{device.usedmem},{device.usedcores}:"
            )
        parts.append(";")
    return "".join(parts)


def pod_slices(
    pod_annotations: Mapping[str, str], *, common_words: Collection[str] | None = None
) -> list[tuple[str, ContainerDevice]]:
    """List every slice a pod holds, from its ``-devices-allocated`` keys.

    Args:
        pod_annotations: The pod's annotations.
        common_words: Only these commonWords (e.g. the Ascend ones; HAMi's
            other vendors use the same key pattern); None for all.

    Returns:
        (commonWord, device) pairs, in annotation and container order.

    Raises:
        AnnotationError: A value cannot be parsed (the message names the key).
    """
    slices: list[tuple[str, ContainerDevice]] = []
    for key, value in pod_annotations.items():
        word = allocated_common_word(key)
        if word is None or (common_words is not None and word not in common_words):
            continue
        try:
            containers = parse_pod_devices(value)
        except AnnotationError as exc:
            raise AnnotationError(f"{key}: {exc}") from exc
        slices.extend((word, device) for devices in containers for device in devices)
    return slices
