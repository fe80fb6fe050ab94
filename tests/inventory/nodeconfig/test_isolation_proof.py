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


def test_isolating_waits_for_the_registration_and_the_kubelet_to_catch_up() -> None:
    def isolating(registered: bool, now: int | None, expected: int):
        return judge(
            "isolating",
            registered=registered,
            allocatable_now=now,
            allocatable_expected=expected,
        )

    still = isolating(True, 32, 32)
    assert still.state == ChipIsolation.ISOLATING
    assert "still registers" in still.seen
    # gone from the registration, but the kubelet still lists its slots
    half = isolating(False, 32, 28)
    assert half.state == ChipIsolation.ISOLATING
    assert "allocatable 32 (expected 28)" in half.seen
    # a plugin restart in between: the kubelet may show none at all
    assert isolating(False, 0, 28).state == ChipIsolation.ISOLATING
    assert isolating(False, 28, 28).state == ChipIsolation.ISOLATED
    # a sick chip's slots were never allocatable: nothing to drop
    assert isolating(False, None, 28).state == ChipIsolation.ISOLATED


def test_restoring_waits_for_the_chip_and_the_kubelet() -> None:
    def restoring(registered: bool, now: int, expected: int):
        return judge(
            "restoring",
            registered=registered,
            allocatable_now=now,
            allocatable_expected=expected,
        ).state

    assert restoring(False, 28, 28) == ChipIsolation.RESTORING
    assert restoring(True, 28, 32) == ChipIsolation.RESTORING
    assert restoring(True, 32, 32) == ChipIsolation.NONE
    # back but unhealthy: its slots are not expected, the registration proves it
    assert restoring(True, 28, 28) == ChipIsolation.NONE


@pytest.fixture
def node(fixtures_dir) -> dict:
    """The 910B4 node as a kubelet shows it: its sick chip's 4 slots are not
    allocatable (the fixture lists all 32)."""
    found = json.loads((fixtures_dir / "node-910b4.json").read_text())
    found["status"]["allocatable"][RESOURCE] = "28"
    return found


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
    assert chip.node.vnpu_allocatable == {WORD: 28}
    Chip.objects.filter(pk=chip.pk).update(isolation=ChipIsolation.ISOLATING)

    # The plugin stopped registering it but the kubelet has not shrunk allocatable yet.
    writer.apply_node_events([("MODIFIED", _without(node, chip.uuid, 28))])
    chip.refresh_from_db()
    assert (chip.registered, chip.isolation) == (False, ChipIsolation.ISOLATING)
    assert "allocatable 28 (expected 24)" in chip.isolation_seen
    assert Chip.objects.get(pk=other.pk).index == 2  # renumbered, same row by UUID

    writer.apply_node_events([("MODIFIED", _without(node, chip.uuid, 24))])
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
    writer.apply_node_events([("MODIFIED", _without(node, chip.uuid, 24))])
    assert not Chip.objects.filter(pk=chip.pk).exists()


@pytest.mark.django_db
def test_a_restore_is_proved_when_the_chip_registers_again(guide_cluster, node) -> None:
    writer = ClusterWriter(guide_cluster)
    writer.replace_nodes([node])
    chip = Chip.objects.get(node__name="npu-node-910b-01", index=2)
    Chip.objects.filter(pk=chip.pk).update(isolation=ChipIsolation.ISOLATED)
    writer.apply_node_events([("MODIFIED", _without(node, chip.uuid, 24))])
    Chip.objects.filter(pk=chip.pk).update(isolation=ChipIsolation.RESTORING)
    back = copy.deepcopy(node)
    back["metadata"]["resourceVersion"] = "3"
    writer.apply_node_events([("MODIFIED", back)])
    chip.refresh_from_db()
    assert (chip.registered, chip.isolation, chip.index) == (True, "", 2)
    assert AuditEvent.objects.filter(action="chip.restored").count() == 1
    assert not isolation_overdue(chip, chip.isolation_since)


@pytest.mark.django_db
def test_an_isolated_chip_registered_again_says_its_filter_was_lifted(
    guide_cluster, node
) -> None:
    writer = ClusterWriter(guide_cluster)
    writer.replace_nodes([node])
    chip = Chip.objects.get(node__name="npu-node-910b-01", index=2)
    Chip.objects.filter(pk=chip.pk).update(isolation=ChipIsolation.ISOLATED)
    writer.apply_node_events([("MODIFIED", _without(node, chip.uuid, 24))])
    back = copy.deepcopy(node)
    back["metadata"]["resourceVersion"] = "3"
    writer.apply_node_events([("MODIFIED", back)])
    chip.refresh_from_db()
    # still held out by the portal, and saying why a restore is due
    assert (chip.registered, chip.isolation) == (True, ChipIsolation.ISOLATED)
    assert "filter was lifted outside the portal" in chip.isolation_seen
    assert not chip.in_service
