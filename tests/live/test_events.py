"""One live-event contract: every delta sent names an Event, and its payload has
the type apps.live.events gives that event."""

from __future__ import annotations

import ast
import copy
import functools
import json
import types
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Union, get_args, get_origin, get_type_hints

import pytest
from drf_spectacular.generators import SchemaGenerator

from apps.live import events
from apps.live.events import PAYLOADS, Event

APPS = Path(__file__).resolve().parents[2] / "apps"
SENDERS = {"broadcast", "broadcast_on_commit"}


def _sends() -> list[tuple[str, ast.expr]]:
    """Every call of broadcast or broadcast_on_commit in apps/: (where, event argument)."""
    found = []
    for path in sorted(APPS.rglob("*.py")):
        if path == APPS / "live" / "realtime.py":  # where they are defined
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = (
                func.attr
                if isinstance(func, ast.Attribute)
                else getattr(func, "id", "")
            )
            if name in SENDERS:
                where = f"{path.relative_to(APPS)}:{node.lineno}"
                found.append((where, node.args[1]))
    return found


def test_every_delta_sent_names_an_event_and_every_event_is_sent():
    sends = _sends()
    assert len(sends) >= 12, sends  # the check looks in the right place
    named = {}
    for where, arg in sends:
        source = ast.unparse(arg)
        assert source.startswith("Event."), f"{where}: not an Event member: {source}"
        named[source.removeprefix("Event.")] = where
    assert set(named) == {event.name for event in Event}


def test_every_event_has_a_payload_type():
    assert set(PAYLOADS) == set(Event)


@functools.cache
def _api_schemas() -> dict[str, Any]:
    document = SchemaGenerator().get_schema(request=None, public=True)
    return document["components"]["schemas"]


def _conforms_to_api(value: Any, name: str, path: str) -> list[str]:
    """Where ``value`` differs from the REST schema's component ``name``."""
    schema = _api_schemas()[name]
    if "enum" in schema:
        return [] if value in schema["enum"] else [f"{path}: {value!r} is not {name}"]
    keys = set(value) if isinstance(value, dict) else set()
    if not set(schema.get("required", [])) <= keys <= set(schema["properties"]):
        return [f"{path}: the keys of {value!r} are not those of {name}"]
    return []


def _conforms(value: Any, tp: Any, path: str = "payload") -> list[str]:
    """Where ``value`` differs from the type ``tp`` of the contract (empty: nowhere)."""
    origin, args = get_origin(tp), get_args(tp)
    if origin is Annotated:
        api = [m for m in tp.__metadata__ if isinstance(m, events.ApiSchema)]
        if api:
            return _conforms_to_api(value, api[0].name, path)
        return _conforms(value, args[0], path)
    if origin in (Union, types.UnionType):
        if any(not _conforms(value, arg, path) for arg in args):
            return []
        return [f"{path}: {value!r} is none of {tp}"]
    if origin is list:
        if not isinstance(value, list | tuple):
            return [f"{path}: {value!r} is not a list"]
        return [
            e
            for i, v in enumerate(value)
            for e in _conforms(v, args[0], f"{path}[{i}]")
        ]
    if tp is type(None) or tp is None:
        return [] if value is None else [f"{path}: {value!r} is not null"]
    if tp is bool:
        return [] if isinstance(value, bool) else [f"{path}: {value!r} is not a bool"]
    if tp in (int, str):
        ok = isinstance(value, tp) and not isinstance(value, bool)
        return [] if ok else [f"{path}: {value!r} is not {tp.__name__}"]
    if tp is Any:
        return []
    hints = get_type_hints(tp, include_extras=True)
    if hasattr(tp, "_fields"):  # a NamedTuple: an array of its fields
        if not isinstance(value, list | tuple) or len(value) != len(hints):
            return [f"{path}: {value!r} is not a row of {len(hints)} columns"]
        value = dict(zip(hints, value, strict=True))
    elif not isinstance(value, dict) or set(value) != set(hints):
        return [f"{path}: the keys of {value!r} are not {sorted(hints)}"]
    return [e for k, t in hints.items() for e in _conforms(value[k], t, f"{path}.{k}")]


@pytest.fixture
def sent(monkeypatch) -> list[tuple[str, dict]]:
    """The deltas the writer, the sync engine and scheduling send, as JSON has them."""
    from apps.inventory.sync import state
    from apps.inventory.sync.writer import base, control_plane, nodes, pods
    from apps.scheduling import notify

    deltas: list[tuple[str, dict]] = []

    def record(group: str, event: Event, payload: dict) -> None:
        assert isinstance(event, Event)
        deltas.append((event.value, json.loads(json.dumps(payload))))

    for part in (base, control_plane, nodes, pods):  # the writer's modules
        if hasattr(part, "broadcast_on_commit"):
            monkeypatch.setattr(part, "broadcast_on_commit", record)
    monkeypatch.setattr(state, "broadcast", record)
    monkeypatch.setattr(notify, "broadcast_on_commit", record)
    return deltas


@pytest.mark.django_db
def test_the_deltas_sent_have_their_events_payload_types(
    guide_cluster, fixtures_dir, sent
):
    from apps.inventory.models import Cluster
    from apps.inventory.sync.state import refresh_cluster_state
    from apps.inventory.sync.writer import ClusterWriter
    from apps.scheduling import notify

    load: Callable[[str], dict] = lambda name: json.loads(  # noqa: E731
        (fixtures_dir / name).read_text()
    )
    nodes = [load("node-310p3.json"), load("node-910b4.json")]
    pods = [load("pod-310p-vir01.json"), load("pod-910b4-vir05.json")]
    writer = ClusterWriter(guide_cluster)
    writer.replace_nodes(nodes)  # nodes, chips
    writer.replace_pods(pods)  # slices, chips
    writer.replace_pods(pods[:1])  # slices_removed
    writer.apply_node_events([("DELETED", nodes[1])])  # node_removed
    waiting = copy.deepcopy(pods[0])
    waiting["metadata"].update(name="waiting", annotations={})
    waiting["spec"].pop("nodeName")
    waiting["status"] = {"phase": "Pending"}
    writer.apply_pod_events([("ADDED", waiting)])  # pending
    writer.set_pending_reason("default", "waiting", "no room")  # pending_reason
    configmap = {"metadata": {"namespace": "ns", "name": "cm", "resourceVersion": "7"}}
    writer.replace_objects("ConfigMap", "ns", "cm", [configmap])  # object
    writer.replace_objects("ConfigMap", "ns", "cm", [])  # object_removed
    Cluster.objects.filter(pk=guide_cluster.pk).update(sync_state="ok")
    refresh_cluster_state(guide_cluster.pk)  # cluster
    request = types.SimpleNamespace(pk=1, state="pending", reason="waits")
    notify.requests_changed(guide_cluster.pk, [request])  # requests
    proposal = types.SimpleNamespace(
        pk=2, cluster_id=guide_cluster.pk, state="pending", request_id=1, chip_uuid="U"
    )
    notify.proposal_changed(proposal)  # proposal

    assert {event for event, _ in sent} == {event.value for event in Event}
    for event, payload in sent:
        assert _conforms(payload, PAYLOADS[Event(event)], event) == []
    chips = [payload for event, payload in sent if event == Event.CHIPS]
    assert len(chips[0]["rows"][0]) == len(events.CHIP_COLUMNS)


@pytest.mark.django_db
def test_the_snapshot_has_its_payload_type(guide_cluster, fixtures_dir):
    from apps.inventory.consumers import cluster_snapshot
    from apps.inventory.sync.writer import ClusterWriter

    nodes = [
        json.loads((fixtures_dir / name).read_text())
        for name in ("node-310p3.json", "node-910b4.json")
    ]
    ClusterWriter(guide_cluster).replace_nodes(nodes)
    snapshot = json.loads(json.dumps(cluster_snapshot(guide_cluster.pk)))
    assert _conforms(snapshot, events.SnapshotPayload, "snapshot") == []
    assert len(snapshot["chips"]["rows"]) == 12
    assert snapshot["chips"]["columns"] == list(events.CHIP_COLUMNS)
    assert snapshot["nodes_without_chips"] == []


def test_the_snapshot_names_the_nodes_its_chips_do_not(guide_cluster, fixtures_dir):
    """The summary counts every node; the client must know which nodes a later
    delta may name without it being a new one."""
    from apps.inventory.consumers import cluster_snapshot
    from apps.inventory.sync.writer import ClusterWriter

    npu = json.loads((fixtures_dir / "node-310p3.json").read_text())
    cpu = {
        "metadata": {"name": "master-0", "labels": {}, "annotations": {}},
        "status": {"conditions": [{"type": "Ready", "status": "True"}]},
    }
    ClusterWriter(guide_cluster).replace_nodes([npu, cpu])
    snapshot = cluster_snapshot(guide_cluster.pk)
    assert snapshot["summary"]["nodes"] == 2
    assert snapshot["nodes_without_chips"] == ["master-0"]
    assert {row[1] for row in snapshot["chips"]["rows"]} == {npu["metadata"]["name"]}


def test_the_check_sees_a_payload_off_the_contract():
    assert _conforms({"name": "n"}, events.NodeRemovedPayload) == []
    assert _conforms({"name": 1}, events.NodeRemovedPayload)
    assert _conforms({"name": "n", "extra": 1}, events.NodeRemovedPayload)
    assert _conforms({"rows": [[1, "n"]]}, events.ChipsPayload)
    cluster = {"id": 1, "sync_state": "ok", "last_sync_error": "", "last_sync_at": None}
    assert _conforms(cluster, events.ClusterPayload) == []
    assert _conforms({**cluster, "last_sync_at": 0}, events.ClusterPayload)
    assert _conforms({**cluster, "sync_state": "fine"}, events.ClusterPayload)


def test_the_builders_cap_what_a_delta_carries():
    rows = [
        [i, "n", "T", 0, "U", True, False, 0, 7, 0, 1, 0, 8, 0, 7, "healthy"]
        for i in range(2500)
    ]
    assert [len(p["rows"]) for p in events.chips_payloads(rows)] == [1000, 1000, 500]
    pods = [("ns", f"p{i:04}") for i in range(600)]
    assert events.slices_removed_payload(pods)["pods"][:2] == ["ns/p0000", "ns/p0001"]
    assert len(events.slices_removed_payload(pods)["pods"]) == events.CAP
    many = [(i, "failed", "x" * 900) for i in range(600)]
    rows_ = events.requests_payload(many)["rows"]
    assert len(rows_) == events.CAP
    assert len(rows_[0]["reason"]) == events.CAP
