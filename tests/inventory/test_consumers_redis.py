"""The cluster WebSocket on the Redis channel layer, as production runs it.

The other consumer tests use the in-memory layer. On Redis an idle consumer
crashed every 5 to 20 s (redis-py's read timeout equalled channels-redis's
blocking read), so a browser that watched a quiet cluster lost its updates.
These run against the server in ``REDIS_URL`` (CI always sets it).
"""

from __future__ import annotations

import asyncio
import os

import pytest
from channels.layers import channel_layers as layers
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator

from tests.inventory.live import write_guide_nodes_and_collect_chips
from tests.requires import missing
from vnpuportal.channel_layers import channel_layers

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.websockets,
    pytest.mark.slow,
]
REDIS_URL = os.environ.get("REDIS_URL", "")


@pytest.fixture
def redis_layer(settings):
    """The production CHANNEL_LAYERS on REDIS_URL, fresh for the test."""
    if not REDIS_URL:
        missing("REDIS_URL is not set (these need a Redis server)")
    settings.CHANNEL_LAYERS = channel_layers(REDIS_URL)
    layers.backends = {}
    yield get_channel_layer()
    layers.backends = {}


async def test_an_idle_layer_read_outlasts_the_blocking_pop(redis_layer):
    channel = await redis_layer.new_channel()
    # longer than the 5 s blocking pop: the read must time out quietly, not raise
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(redis_layer.receive(channel), 8)
    await redis_layer.send(channel, {"type": "probe"})
    assert await asyncio.wait_for(redis_layer.receive(channel), 5) == {"type": "probe"}


async def test_a_quiet_websocket_still_gets_the_next_delta(
    redis_layer, guide_cluster, fixtures_dir, viewer
):
    from vnpuportal.asgi import application

    communicator = WebsocketCommunicator(
        application,
        f"/ws/clusters/{guide_cluster.pk}/",
        headers=[(b"origin", b"http://localhost"), (b"host", b"localhost")],
    )
    communicator.scope["user"] = viewer
    connected, _ = await communicator.connect()
    assert connected
    assert (await communicator.receive_json_from(timeout=5))["type"] == "snapshot"

    await asyncio.sleep(8)  # a quiet cluster: nothing for longer than 5 s

    chips = await write_guide_nodes_and_collect_chips(
        communicator, guide_cluster, fixtures_dir, timeout=10
    )
    assert len(chips) == 12
    await communicator.disconnect()
