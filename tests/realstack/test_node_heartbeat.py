"""KWOK's nodes heartbeat as often as a kubelet does (every 10 s).

KWOK's own stage posted every 20 to 45 s against the node lifecycle
controller's 50 s grace: on a busy CI machine both nodes went NotReady and
tainted in the middle of the fault tests.
"""

from __future__ import annotations

import pytest

from kubestack import kwok
from tests.polling import wait_for

pytestmark = pytest.mark.realstack

NODE = "npu-node-310p-01"


def _heartbeat(kube_core) -> object:
    node = kube_core.read_node_status(NODE)
    return next(
        c.last_heartbeat_time for c in node.status.conditions if c.type == "Ready"
    )


def test_nodes_heartbeat_at_a_kubelets_pace(kube_core):
    allowance = (
        kwok.HEARTBEAT_SECONDS + kwok.HEARTBEAT_JITTER_SECONDS + 2
    )  # + a busy machine
    seen = [_heartbeat(kube_core)]

    def two_more() -> bool:
        """two heartbeats after the first one seen"""
        beat = _heartbeat(kube_core)
        if beat != seen[-1]:
            seen.append(beat)
        return len(seen) == 3

    # Two heartbeats after the first one seen: the second is at most one
    # allowance after the first, whenever in its period the test began.
    wait_for(two_more, lambda: f"two more heartbeats; seen: {seen}", 2 * allowance, 0.5)
    gap = (seen[2] - seen[1]).total_seconds()
    assert gap <= allowance, f"{gap} s between heartbeats (aim {allowance} s)"
