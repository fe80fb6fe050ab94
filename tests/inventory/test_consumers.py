"""The cluster WebSocket: refuses anonymous callers, sends a snapshot, then deltas."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import AnonymousUser

from tests.inventory.live import write_guide_nodes_and_collect_chips
from vnpuportal.asgi import application

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.websockets]


async def _connected(path: str, user) -> WebsocketCommunicator:
    communicator = _communicator(path, user)
    connected, _ = await communicator.connect()
    assert connected
    return communicator


def _pending_delta(count: int) -> dict:
    """A ``pending`` delta as sync puts it in a cluster's group."""
    from apps.live.events import Event
    from apps.live.realtime import EVENT_TYPE

    return {
        "type": EVENT_TYPE,
        "event": str(Event.PENDING),
        "payload": {"count": count},
    }


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


async def test_token_client_gets_snapshot_then_delta(
    guide_cluster, ci_queue, fixtures_dir
):
    from apps.accounts.services import token_create, user_ensure

    user = await sync_to_async(user_ensure)(username="watcher", role="viewer")
    issued = await sync_to_async(token_create)(user=user, queues=["ci"])
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


async def test_an_unknown_cluster_is_closed_with_4404_after_the_handshake(viewer):
    """Accepted, then closed: a browser never reads the code of a refused
    handshake (it sees 1006 and would reconnect forever), and the app says
    "This cluster no longer exists" on 4404."""
    communicator = _communicator("/ws/clusters/999/", viewer)
    connected, _ = await communicator.connect()
    assert connected
    closed = await communicator.receive_output(timeout=5)
    assert closed == {"type": "websocket.close", "code": 4404}


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
    communicator = await _connected(f"/ws/clusters/{guide_cluster.pk}/", viewer)
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
    snapshot, once the socket is in its group: a change made right after it
    arrives (after the snapshot). Without it the snapshot is the first message."""
    from channels.layers import get_channel_layer

    from apps.live.events import Event
    from apps.live.realtime import cluster_group

    path = f"/ws/clusters/{guide_cluster.pk}/"
    asking = await _connected(path + "?joined=1", viewer)
    first = await asking.receive_json_from(timeout=5)
    assert first == {"type": "joined", "event": "joined", "payload": {}}
    await get_channel_layer().group_send(
        cluster_group(guide_cluster.pk), _pending_delta(3)
    )
    assert (await asking.receive_json_from(timeout=5))["type"] == "snapshot"
    then = await asking.receive_json_from(timeout=5)
    assert (then["event"], then["payload"]) == (str(Event.PENDING), {"count": 3})
    await asking.disconnect()

    plain = await _connected(path, viewer)
    assert (await plain.receive_json_from(timeout=5))["type"] == "snapshot"
    await plain.disconnect()


async def test_a_burst_while_the_snapshot_is_built_follows_it_whole_and_in_order(
    guide_cluster, viewer, monkeypatch
):
    """The consumer keeps taking deltas off the channel layer while a big
    snapshot is built (the layer holds at most 100 per channel, and drops
    the rest), and sends them after it in the order they came."""
    import asyncio

    from channels.layers import get_channel_layer

    from apps.inventory import consumers
    from apps.live.realtime import cluster_group

    read_snapshot = consumers._snapshot
    burst = 300

    async def slow_snapshot(cluster_id: int):
        snapshot = await read_snapshot(cluster_id)
        for n in range(burst):
            await get_channel_layer().group_send(
                cluster_group(cluster_id), _pending_delta(n)
            )
            # The build goes on (in a thread in the real one): the loop is free.
            await asyncio.sleep(0.002)
        return snapshot

    monkeypatch.setattr(consumers, "_snapshot", slow_snapshot)
    communicator = await _connected(f"/ws/clusters/{guide_cluster.pk}/", viewer)
    assert (await communicator.receive_json_from(timeout=5))["type"] == "snapshot"
    counts = [
        (await communicator.receive_json_from(timeout=5))["payload"]["count"]
        for _ in range(burst)
    ]
    assert counts == list(range(burst))
    await communicator.disconnect()


async def test_a_cluster_deleted_while_its_snapshot_is_built_closes_with_4404(
    guide_cluster, viewer, monkeypatch
):
    from apps.inventory import consumers

    async def gone(cluster_id: int):
        return None

    monkeypatch.setattr(consumers, "_snapshot", gone)
    communicator = await _connected(
        f"/ws/clusters/{guide_cluster.pk}/?joined=1", viewer
    )
    assert (await communicator.receive_json_from(timeout=5))["type"] == "joined"
    closed = await communicator.receive_output(timeout=5)
    assert closed == {"type": "websocket.close", "code": 4404}


async def test_with_the_outbox_a_change_made_as_the_first_socket_joins_arrives(
    guide_cluster, viewer, monkeypatch, settings
):
    """With the outbox (sync in another process), the web process's relay
    starts from the newest event when the first socket joins. The socket waits
    for that start, so a change written while its snapshot is read comes."""
    import asyncio

    from asgiref.sync import sync_to_async

    from apps.inventory import consumers
    from apps.live import realtime
    from apps.live.events import Event

    settings.REALTIME_OUTBOX = True
    monkeypatch.setattr(realtime, "_relay_task", None)
    monkeypatch.setattr(realtime, "_relay_ready", None, raising=False)
    read_outbox = realtime._fetch.func  # the sync reader under sync_to_async

    @sync_to_async(thread_sensitive=False)
    def fetch(after):
        from django.db import connection

        try:
            return read_outbox(after)
        finally:
            connection.close()  # a pool thread's session would outlive the test

    async def slow_first_fetch(after):
        if after is None:  # a relay starting on a busy database
            await asyncio.sleep(0.3)
        return await fetch(after)

    monkeypatch.setattr(realtime, "_fetch", slow_first_fetch)
    read_snapshot = consumers._snapshot

    async def snapshot_while_a_change_is_written(cluster_id: int):
        await sync_to_async(realtime.broadcast)(
            realtime.cluster_group(cluster_id), Event.PENDING, {"count": 9}
        )
        return await read_snapshot(cluster_id)

    monkeypatch.setattr(consumers, "_snapshot", snapshot_while_a_change_is_written)
    communicator = _communicator(f"/ws/clusters/{guide_cluster.pk}/", viewer)
    try:
        connected, _ = await communicator.connect(timeout=10)
        assert connected
        assert (await communicator.receive_json_from(timeout=5))["type"] == "snapshot"
        then = await communicator.receive_json_from(timeout=5)
        assert (then["event"], then["payload"]) == (str(Event.PENDING), {"count": 9})
        await communicator.disconnect()
    finally:
        if realtime._relay_task is not None:
            realtime._relay_task.cancel()
