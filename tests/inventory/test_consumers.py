"""The cluster WebSocket: refuses anonymous callers, sends a snapshot, then deltas."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser

from tests.inventory.live import write_guide_nodes_and_collect_chips
from vnpuportal.asgi import application

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.websockets]


def _communicator(path: str, user=None, headers=None) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(
        application,
        path,
        headers=[
            (b"origin", b"http://localhost"),
            (b"host", b"localhost"),
            *(headers or []),
        ],
    )
    if user is not None:
        communicator.scope["user"] = user
    return communicator


async def test_anonymous_is_refused(guide_cluster):
    communicator = _communicator(f"/ws/clusters/{guide_cluster.pk}/", AnonymousUser())
    connected, code = await communicator.connect()
    assert not connected
    assert code == 4401


async def test_bad_token_is_refused(guide_cluster):
    communicator = _communicator(
        f"/ws/clusters/{guide_cluster.pk}/",
        headers=[(b"authorization", b"Bearer vnp_nope_nope")],
    )
    connected, _ = await communicator.connect()
    assert not connected


async def test_token_client_gets_snapshot_then_delta(guide_cluster, fixtures_dir):
    from apps.accounts.services import token_create, user_ensure

    user = await sync_to_async(user_ensure)(username="watcher", role="viewer")
    issued = await sync_to_async(token_create)(user=user)
    communicator = _communicator(
        f"/ws/clusters/{guide_cluster.pk}/",
        headers=[(b"authorization", f"Bearer {issued.plaintext}".encode())],
    )
    connected, _ = await communicator.connect()
    assert connected
    snapshot = await communicator.receive_json_from(timeout=5)
    assert snapshot["type"] == "snapshot"
    assert snapshot["payload"]["summary"]["cluster"] == "guide"
    assert snapshot["payload"]["chips"]["rows"] == []

    # when sync writes the guide's nodes, then chip rows arrive as a delta
    chips = await write_guide_nodes_and_collect_chips(
        communicator, guide_cluster, fixtures_dir, timeout=5
    )
    assert len(chips) == 12
    await communicator.disconnect()


async def test_unknown_cluster_is_refused(viewer):
    communicator = _communicator("/ws/clusters/999/", viewer)
    connected, code = await communicator.connect()
    assert not connected
    assert code == 4404


async def test_a_change_right_after_the_snapshot_is_read_still_arrives(
    guide_cluster, viewer, monkeypatch
):
    """The socket joins its group before it reads the snapshot: a change
    committed while the snapshot is built (150 ms at 8,000 chips) comes as a
    delta after it, instead of being lost until that chip changes again."""
    from channels.layers import get_channel_layer

    from apps.inventory import consumers
    from apps.live.events import Event
    from apps.live.realtime import EVENT_TYPE, cluster_group

    read_snapshot = consumers._snapshot
    row = ["a change made after the snapshot's read"]

    async def snapshot_then_a_change(cluster_id: int):
        snapshot = await read_snapshot(cluster_id)
        await get_channel_layer().group_send(
            cluster_group(cluster_id),
            {"type": EVENT_TYPE, "event": str(Event.CHIPS), "payload": {"rows": row}},
        )
        return snapshot

    monkeypatch.setattr(consumers, "_snapshot", snapshot_then_a_change)
    communicator = _communicator(f"/ws/clusters/{guide_cluster.pk}/", viewer)
    connected, _ = await communicator.connect()
    assert connected
    first = await communicator.receive_json_from(timeout=5)
    assert first["type"] == "snapshot"
    then = await communicator.receive_json_from(timeout=5)
    assert (then["type"], then["event"], then["payload"]["rows"]) == (
        "delta",
        str(Event.CHIPS),
        row,
    )
    await communicator.disconnect()


async def test_a_client_that_asks_is_told_when_the_socket_joined(guide_cluster, viewer):
    """With ?joined=1 (the web app) a "joined" message comes before the
    snapshot; without it the snapshot is still the first message."""
    path = f"/ws/clusters/{guide_cluster.pk}/"
    asking = _communicator(path + "?joined=1", viewer)
    connected, _ = await asking.connect()
    assert connected
    first = await asking.receive_json_from(timeout=5)
    assert first == {"type": "joined", "event": "joined", "payload": {}}
    assert (await asking.receive_json_from(timeout=5))["type"] == "snapshot"
    await asking.disconnect()

    plain = _communicator(path, viewer)
    connected, _ = await plain.connect()
    assert connected
    assert (await plain.receive_json_from(timeout=5))["type"] == "snapshot"
    await plain.disconnect()
