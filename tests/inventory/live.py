"""What the WebSocket tests share: sync writes the guide's nodes, a client collects
the chip rows that arrive as deltas."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from asgiref.sync import sync_to_async

from apps.inventory.sync.writer import ClusterWriter


async def write_guide_nodes_and_collect_chips(
    communicator: Any, cluster: Any, fixtures_dir: Path, timeout: float = 5
) -> list[dict]:
    """Write the two guide nodes as sync would; return the 12 chip rows received."""
    nodes = [
        json.loads((fixtures_dir / n).read_text())
        for n in ("node-310p3.json", "node-910b4.json")
    ]
    await sync_to_async(lambda: ClusterWriter(cluster).replace_nodes(nodes))()
    chips: list[dict] = []
    while len(chips) < 12:
        message = await communicator.receive_json_from(timeout=timeout)
        if message.get("event") == "chips":
            chips.extend(message["payload"]["rows"])
    return chips
