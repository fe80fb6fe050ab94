"""Sync against the real API server: the portal's inventory and per-chip usage
equal HAMi's accounting of what the real Volcano wrote."""

from __future__ import annotations

import pytest

from apps.inventory.models import Chip, Node, Slice
from apps.inventory.sync.engine import sync_once
from kubestack.scenarios import place_until_running, slice_pod
from tests.realstack.accounting import chips_by_uuid, portal_usage, usage_by_uuid

pytestmark = [pytest.mark.realstack, pytest.mark.slow]

ASCEND = ("Ascend310P", "Ascend910B4")


def _portal_chips(cluster) -> dict[str, dict]:
    return {
        chip.uuid: {
            "node": chip.node.name,
            "index": chip.index,
            "slots": chip.slots,
            "memory": chip.memory,
            "healthy": chip.healthy,
        }
        for chip in Chip.objects.filter(cluster=cluster).select_related("node")
    }


def test_inventory_and_usage_equal_hamis_accounting(
    kube_stack, kube_core, real_cluster, cleanup
):
    pods = [
        slice_pod("sync-310p-vir02", "Ascend310P", 6144, "batch-medium"),
        slice_pod("sync-910b-vir10", "Ascend910B4", 16384, "batch-low"),
        slice_pod("sync-910b-vir05", "Ascend910B4", 8000, "batch-low"),
    ]
    cleanup.extend(("default", p["metadata"]["name"]) for p in pods)
    # Volcano may bind a 910B4 pod to the sick chip 5, which the node refuses:
    # such a pod is recreated, as its owner would (issue 14 is about avoiding it)
    place_until_running(kube_stack, pods, timeout=90)

    sync_once(real_cluster)

    expected_chips = chips_by_uuid(kube_core, ASCEND)
    assert len(expected_chips) == 12  # 4 x 310P3 + 8 x 910B4, the sick one included
    assert _portal_chips(real_cluster) == expected_chips
    assert Node.objects.filter(cluster=real_cluster, ascend_enabled=True).count() == 2
    expected_usage = usage_by_uuid(kube_core, ASCEND)
    # the guide's two pods and these three: five slices, on the chips Volcano chose
    assert sum(row["slots_used"] for row in expected_usage.values()) == 5
    assert portal_usage(real_cluster) == expected_usage
    # 8000 MB was booked as vir05_1c_8g's 8192 (HAMi's rule), on the chip Volcano wrote
    booked = Slice.objects.get(cluster=real_cluster, pod_name="sync-910b-vir05")
    pod = kube_core.read_namespaced_pod("sync-910b-vir05", "default")
    allocated = pod.metadata.annotations["hami.io/Ascend910B4-devices-allocated"]
    assert (booked.template, booked.memory) == ("vir05_1c_8g", 8192)
    assert allocated.startswith(f"{booked.chip_uuid},Ascend910B4,8192,")

    # a pod that ends frees its room in both accountings
    kube_stack.kubectl(
        "delete", "pod", "sync-910b-vir10", "--grace-period=0", "--force"
    )
    sync_once(real_cluster)
    assert portal_usage(real_cluster) == usage_by_uuid(kube_core, ASCEND)
    assert sum(row["slots_used"] for row in portal_usage(real_cluster).values()) == 4
