"""The live contract: every message the cluster WebSocket sends, said once.

A cluster's socket sends a snapshot on connect, then deltas (``broadcast`` puts
them in the cluster's group). This module defines, for the server and (through
``manage.py live_contract``, which writes ``frontend/src/live/contract.ts``)
for the browser:

- ``Event``: the name of every delta;
- a payload type per event (``PAYLOADS``), and the functions that build them:
  call sites send ``broadcast(group, Event.X, x_payload(...))`` and never spell
  a name or a payload's keys themselves;
- ``ChipRow``: the columns of a chip row, shared by the snapshot, the ``chips``
  deltas and ``GET /api/clusters/<id>/chip-usage/``.

The builders take plain values (this is the ground floor: it imports no app);
the apps that own the models turn their rows into those values.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from itertools import islice
from typing import Annotated, Any, Final, NamedTuple, TypedDict, TypeVar, cast

#: The event (and the message type) of the snapshot the consumer sends on
#: connect and on a client's resync. It is never broadcast.
SNAPSHOT: Final = "snapshot"
#: The event (and the message type) the consumer sends as soon as it has
#: joined its group, before it reads the snapshot: every change from then on
#: reaches the client. Data a page asked for after it arrived needs no refetch
#: when the snapshot comes. It is never broadcast.
JOINED: Final = "joined"
#: At most this many chip rows (or nodes) in one delta: 8,000 chips are 8 messages.
BATCH: Final = 1000
#: At most this many slices, pods or requests in one delta (and characters of a
#: request's reason): the rest is a refetch away.
CAP: Final = 500


class Event(StrEnum):
    """The deltas of a cluster's group, by name (each one's payload: DeltaPayloads)."""

    CHIPS = "chips"
    NODES = "nodes"
    NODE_REMOVED = "node_removed"
    SLICES = "slices"
    SLICES_REMOVED = "slices_removed"
    PENDING = "pending"
    PENDING_REASON = "pending_reason"
    OBJECT = "object"
    OBJECT_REMOVED = "object_removed"
    CLUSTER = "cluster"
    REQUESTS = "requests"
    PROPOSAL = "proposal"


@dataclass(frozen=True)
class ApiSchema:
    """Marks a payload field as a type of the REST API's OpenAPI schema.

    ``Annotated[str, ApiSchema("SyncStateEnum")]`` is a ``str`` here and
    ``components["schemas"]["SyncStateEnum"]`` in the generated TypeScript.
    """

    name: str


# --- the chip row ------------------------------------------------------------------


class ChipRow(NamedTuple):
    """One chip as the browser gets it: an array, in these columns' order.

    At 8,000 chips a list of objects costs several times the bytes of the same
    data as arrays. The snapshot names the columns; deltas rely on the order.
    """

    id: int
    node: str
    common_word: str
    # The chip's index on its node. It hides tuple.index, which no row needs.
    index: int  # type: ignore[assignment]
    uuid: str
    healthy: bool
    cordoned: bool
    slots_used: int
    slots: int
    memory_used: int
    memory: int
    aicore_used: int
    aicore: int
    aicpu_used: int
    aicpu: int
    #: what the chip is doing, in one word (apps.inventory.chipstate): the
    #: heat map's look, the table's state column and its filter
    state: Annotated[str, ApiSchema("ChipStateEnum")]


#: The chip columns, in order.
CHIP_COLUMNS: Final[tuple[str, ...]] = ChipRow._fields


class ChipUsage(TypedDict):
    """Every chip of a cluster (the snapshot's ``chips``, and the REST chip-usage)."""

    cluster: str
    columns: list[str]
    rows: list[ChipRow]


# --- the payloads --------------------------------------------------------------------


class ChipsPayload(TypedDict):
    """Chips whose usage or state changed, to upsert by id (1,000 rows at most)."""

    rows: list[ChipRow]


class NodeDelta(TypedDict):
    """A node and whether it is Ready."""

    name: str
    ready: bool


class NodesPayload(TypedDict):
    """Nodes that joined or changed (one message for up to 1,000 nodes)."""

    nodes: list[NodeDelta]


class NodeRemovedPayload(TypedDict):
    """A node left the cluster (its chips go with it)."""

    name: str


class SliceDelta(TypedDict):
    """A slice (one container's vNPU) as the live feed shows it."""

    namespace: str
    pod_name: str
    chip_uuid: str
    template: str
    #: MB, as booked
    memory: int
    priority: int
    phase: str
    node_name: str
    common_word: str


#: The keys of a slice delta: the Slice columns the writer reads.
SLICE_DELTA_FIELDS: Final[tuple[str, ...]] = tuple(SliceDelta.__annotations__)


class SlicesPayload(TypedDict):
    """Slices placed or changed (the first 500)."""

    upserted: list[SliceDelta]


class SlicesRemovedPayload(TypedDict):
    """Slices released: their pods as ``namespace/name``, sorted (the first 500)."""

    pods: list[str]


class PendingPayload(TypedDict):
    """The cluster's pending pods changed: how many there are now."""

    count: int


class PendingReasonPayload(TypedDict):
    """The scheduler said why a pod (``namespace/name``) is pending."""

    pod: str
    reason: str


class ObjectPayload(TypedDict):
    """A control-plane object sync keeps (a ConfigMap, a DaemonSet...) changed."""

    kind: str
    namespace: str
    name: str
    resource_version: str


class ObjectRemovedPayload(TypedDict):
    """A control-plane object sync keeps is gone."""

    kind: str
    name: str


class ClusterPayload(TypedDict):
    """The cluster's sync state or last error changed."""

    id: int
    sync_state: Annotated[str, ApiSchema("SyncStateEnum")]
    last_sync_error: str
    #: ISO 8601; null: never synced
    last_sync_at: str | None


class RequestDelta(TypedDict):
    """A CI request's new state."""

    id: int
    state: Annotated[str, ApiSchema("RequestStateEnum")]
    reason: str


class RequestsPayload(TypedDict):
    """CI requests of the cluster changed (the first 500): pages refetch them."""

    rows: list[RequestDelta]


class ProposalPayload(TypedDict):
    """A preemption proposal changed."""

    id: int
    state: Annotated[str, ApiSchema("ProposalStateEnum")]
    request: int
    chip_uuid: str


#: Every event's payload type: what ``manage.py live_contract`` generates from.
PAYLOADS: Final[Mapping[Event, type]] = {
    Event.CHIPS: ChipsPayload,
    Event.NODES: NodesPayload,
    Event.NODE_REMOVED: NodeRemovedPayload,
    Event.SLICES: SlicesPayload,
    Event.SLICES_REMOVED: SlicesRemovedPayload,
    Event.PENDING: PendingPayload,
    Event.PENDING_REASON: PendingReasonPayload,
    Event.OBJECT: ObjectPayload,
    Event.OBJECT_REMOVED: ObjectRemovedPayload,
    Event.CLUSTER: ClusterPayload,
    Event.REQUESTS: RequestsPayload,
    Event.PROPOSAL: ProposalPayload,
}


class SnapshotPayload(TypedDict):
    """Everything a page needs to start from: sent on connect and on resync."""

    summary: Annotated[dict[str, Any], ApiSchema("ClusterSummary")]
    chips: ChipUsage
    #: The nodes the chips do not name (``summary.nodes`` counts them too):
    #: a delta about one of them is not a new node.
    nodes_without_chips: list[str]
    last_sync_error: str


# --- the builders ---------------------------------------------------------------------


T = TypeVar("T")


def _batches(items: Sequence[T], size: int = BATCH) -> Iterator[list[T]]:
    for start in range(0, len(items), size):
        yield list(items[start : start + size])


def chips_payloads(rows: Iterable[Sequence[Any]]) -> Iterator[ChipsPayload]:
    """``chips`` deltas for these rows (values in CHIP_COLUMNS order), BATCH a delta."""
    for batch in _batches([ChipRow._make(row) for row in rows]):
        yield {"rows": batch}


def nodes_payloads(nodes: Iterable[tuple[str, bool]]) -> Iterator[NodesPayload]:
    """``nodes`` deltas for these (name, ready) pairs, BATCH a delta."""
    deltas = [NodeDelta(name=name, ready=ready) for name, ready in nodes]
    for batch in _batches(deltas):
        yield {"nodes": batch}


def node_removed_payload(name: str) -> NodeRemovedPayload:
    return {"name": name}


def _slice_delta(values: Mapping[str, Any] | object) -> SliceDelta:
    if isinstance(values, Mapping):
        return cast(SliceDelta, {key: values[key] for key in SLICE_DELTA_FIELDS})
    return cast(SliceDelta, {key: getattr(values, key) for key in SLICE_DELTA_FIELDS})


def slices_payload(slices: Iterable[Mapping[str, Any] | object]) -> SlicesPayload:
    """A ``slices`` delta: the first CAP slices.

    Each slice is given by its column values (a mapping) or by a row with those
    attributes; SLICE_DELTA_FIELDS are the columns read.
    """
    return {"upserted": [_slice_delta(values) for values in islice(slices, CAP)]}


def slices_removed_payload(pods: Iterable[tuple[str, str]]) -> SlicesRemovedPayload:
    """A ``slices_removed`` delta for these (namespace, pod) pairs."""
    return {"pods": sorted({f"{namespace}/{pod}" for namespace, pod in pods})[:CAP]}


def pending_payload(count: int) -> PendingPayload:
    return {"count": count}


def pending_reason_payload(
    namespace: str, name: str, reason: str
) -> PendingReasonPayload:
    return {"pod": f"{namespace}/{name}", "reason": reason}


def object_payload(
    kind: str, namespace: str, name: str, resource_version: str
) -> ObjectPayload:
    return {
        "kind": kind,
        "namespace": namespace,
        "name": name,
        "resource_version": resource_version,
    }


def object_removed_payload(kind: str, name: str) -> ObjectRemovedPayload:
    return {"kind": kind, "name": name}


def cluster_payload(
    cluster_id: int,
    sync_state: str,
    last_sync_error: str,
    last_sync_at: datetime | None,
) -> ClusterPayload:
    return {
        "id": cluster_id,
        "sync_state": sync_state,
        "last_sync_error": last_sync_error,
        "last_sync_at": last_sync_at.isoformat() if last_sync_at else None,
    }


def requests_payload(requests: Iterable[tuple[int, str, str]]) -> RequestsPayload:
    """A ``requests`` delta: the first CAP of these (id, state, reason) triples.

    Reasons are cut to CAP characters.
    """
    return {
        "rows": [
            RequestDelta(id=pk, state=state, reason=reason[:CAP])
            for pk, state, reason in islice(requests, CAP)
        ]
    }


def proposal_payload(
    proposal_id: int, state: str, request_id: int, chip_uuid: str
) -> ProposalPayload:
    return {
        "id": proposal_id,
        "state": state,
        "request": request_id,
        "chip_uuid": chip_uuid,
    }


def snapshot_payload(
    summary: Mapping[str, Any],
    chips: ChipUsage,
    nodes_without_chips: list[str],
    last_sync_error: str,
) -> SnapshotPayload:
    """The snapshot: the cluster's summary (``last_sync_at`` becomes ISO 8601)."""
    at = summary.get("last_sync_at")
    return {
        "summary": {
            **summary,
            "last_sync_at": at.isoformat() if isinstance(at, datetime) else at,
        },
        "chips": chips,
        "nodes_without_chips": nodes_without_chips,
        "last_sync_error": last_sync_error,
    }


# --- the messages ---------------------------------------------------------------------


def delta_message(event: str, payload: Mapping[str, Any]) -> dict[str, Any]:
    """A delta as the socket sends it (``event`` is an Event, read back as text)."""
    return {"type": "delta", "event": event, "payload": payload}


def joined_message() -> dict[str, Any]:
    """The consumer is in its group: every later change comes as a delta."""
    return {"type": JOINED, "event": JOINED, "payload": {}}


def snapshot_message(payload: SnapshotPayload | None) -> dict[str, Any]:
    """The snapshot as the socket sends it (None: the cluster is gone)."""
    return {"type": SNAPSHOT, "event": SNAPSHOT, "payload": payload}
