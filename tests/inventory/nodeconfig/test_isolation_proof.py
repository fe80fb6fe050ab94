"""Sync proves an isolation (and a restore) from the node, and keeps the chip's row meanwhile."""

from __future__ import annotations

import copy
import dataclasses
import json

import pytest

from apps.audit.models import AuditEvent
from apps.inventory.choices import ChipIsolation
from apps.inventory.hami.annotations import (
    parse_node_register,
    register_key,
    render_node_register,
)
from apps.inventory.models import Chip
from apps.inventory.nodeconfig.proof import isolation_overdue, judge
from apps.inventory.sync.writer import ClusterWriter

WORD = "Ascend910B4"
RESOURCE = f"huawei.com/{WORD}"


def test_isolating_waits_for_both_the_registration_and_the_allocatable() -> None:
    def isolating(registered: bool, now: int | None, bound: int | None):
        return judge(
            "isolating",
            registered=registered,
            healthy=True,
            allocatable_now=now,
            allocatable_bound=bound,
        )

    still = isolating(True, 32, 28)
    assert still.state == ChipIsolation.ISOLATING
    assert "still registers" in still.seen
    half = isolating(False, 32, 28)
    assert half.state == ChipIsolation.ISOLATING
    assert "allocatable 32 (expected at most 28)" in half.seen
    assert isolating(False, 28, 28).state == ChipIsolation.ISOLATED
    assert isolating(False, None, None).state == ChipIsolation.ISOLATED


def test_restoring_waits_for_the_chip_to_come_back_and_the_count_to_grow() -> None:
    def restoring(registered: bool, healthy: bool, now: int, bound: int | None):
        return judge(
            "restoring",
            registered=registered,
            healthy=healthy,
            allocatable_now=now,
            allocatable_bound=bound,
        ).state

    assert restoring(False, False, 28, 32) == ChipIsolation.RESTORING
    assert restoring(True, True, 28, 32) == ChipIsolation.RESTORING
    assert restoring(True, True, 32, 32) == ChipIsolation.NONE
    # back but unhealthy: its slots are not allocatable, the registration is the proof
    assert restoring(True, False, 28, 32) == ChipIsolation.NONE
    # a chip that never left the registration: nothing to grow
    assert restoring(True, True, 32, None) == ChipIsolation.NONE


@pytest.fixture
def node(fixtures_dir) -> dict:
    return json.loads((fixtures_dir / "node-910b4.json").read_text())


def _without(node: dict, uuid: str, allocatable: int) -> dict:
    """The node as the plugin leaves it once it filters ``uuid``: renumbered, fewer devices."""
    changed = copy.deepcopy(node)
    annotations = changed["metadata"]["annotations"]
    kept = [
        d for d in parse_node_register(annotations[register_key(WORD)]) if d.id != uuid
    ]
    renumbered = [dataclasses.replace(d, index=i) for i, d in enumerate(kept)]
    annotations[register_key(WORD)] = render_node_register(renumbered, pair_scores=True)
    changed["status"]["allocatable"][RESOURCE] = str(allocatable)
    changed["metadata"]["resourceVersion"] = "2"
    return changed


@pytest.mark.django_db
def test_sync_keeps_an_isolating_chip_unregistered_and_proves_the_isolation(
    guide_cluster, node
) -> None:
    writer = ClusterWriter(guide_cluster)
    writer.replace_nodes([node])
    chip = Chip.objects.get(node__name="npu-node-910b-01", index=2)
    other = Chip.objects.get(node__name="npu-node-910b-01", index=3)
    assert chip.node.vnpu_allocatable == {WORD: 32}
    Chip.objects.filter(pk=chip.pk).update(
        isolation=ChipIsolation.ISOLATING, isolation_allocatable_bound=28
    )

    # The plugin stopped registering it but the kubelet has not shrunk allocatable yet.
    writer.apply_node_events([("MODIFIED", _without(node, chip.uuid, 32))])
    chip.refresh_from_db()
    assert (chip.registered, chip.isolation) == (False, ChipIsolation.ISOLATING)
    assert "allocatable 32 (expected at most 28)" in chip.isolation_seen
    assert Chip.objects.get(pk=other.pk).index == 2  # renumbered, same row by UUID

    writer.apply_node_events([("MODIFIED", _without(node, chip.uuid, 28))])
    chip.refresh_from_db()
    assert (chip.registered, chip.isolation) == (False, ChipIsolation.ISOLATED)
    proved = AuditEvent.objects.get(action="chip.isolated")
    assert proved.object_id == str(chip.pk)
    assert proved.actor_name == "sync"


@pytest.mark.django_db
def test_a_chip_in_service_that_leaves_the_registration_is_gone(
    guide_cluster, node
) -> None:
    writer = ClusterWriter(guide_cluster)
    writer.replace_nodes([node])
    chip = Chip.objects.get(node__name="npu-node-910b-01", index=2)
    writer.apply_node_events([("MODIFIED", _without(node, chip.uuid, 28))])
    assert not Chip.objects.filter(pk=chip.pk).exists()


@pytest.mark.django_db
def test_a_restore_is_proved_when_the_chip_registers_again(guide_cluster, node) -> None:
    writer = ClusterWriter(guide_cluster)
    writer.replace_nodes([node])
    chip = Chip.objects.get(node__name="npu-node-910b-01", index=2)
    Chip.objects.filter(pk=chip.pk).update(
        isolation=ChipIsolation.ISOLATED, isolation_allocatable_bound=28
    )
    writer.apply_node_events([("MODIFIED", _without(node, chip.uuid, 28))])
    Chip.objects.filter(pk=chip.pk).update(
        isolation=ChipIsolation.RESTORING, isolation_allocatable_bound=32
    )
    back = copy.deepcopy(node)
    back["metadata"]["resourceVersion"] = "3"
    writer.apply_node_events([("MODIFIED", back)])
    chip.refresh_from_db()
    assert (chip.registered, chip.isolation, chip.index) == (True, "", 2)
    assert AuditEvent.objects.filter(action="chip.restored").count() == 1
    assert not isolation_overdue(chip, chip.isolation_since)
