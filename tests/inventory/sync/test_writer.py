"""Sync's database side: derived chips, slices and usage from the fixture objects."""

from __future__ import annotations

import copy
import json
import threading

import pytest

from apps.inventory.models import Chip, ChipType, Cluster, Node, PendingPod, Slice
from apps.inventory.sync.writer import ClusterWriter
from tests.requires import missing

pytestmark = pytest.mark.django_db


@pytest.fixture
def objects(fixtures_dir):
    load = lambda name: json.loads((fixtures_dir / name).read_text())  # noqa: E731
    return {
        "nodes": [load("node-310p3.json"), load("node-910b4.json")],
        "pods": [load("pod-310p-vir01.json"), load("pod-910b4-vir05.json")],
    }


def test_full_list_derives_chips_slices_and_usage(guide_cluster, objects):
    writer = ClusterWriter(guide_cluster)
    writer.replace_nodes(objects["nodes"])
    writer.replace_pods(objects["pods"])
    assert Node.objects.filter(cluster=guide_cluster).count() == 2
    assert Chip.objects.filter(cluster=guide_cluster).count() == 12
    chip0 = Chip.objects.get(uuid="52E6B438-F2A74DE4-269E0D37-6513270E-A6A3A450")
    assert (chip0.index, chip0.slots, chip0.memory, chip0.aicore, chip0.aicpu) == (
        0,
        7,
        21527,
        8,
        7,
    )
    assert (
        chip0.slots_used,
        chip0.memory_used,
        chip0.aicore_used,
        chip0.aicpu_used,
    ) == (1, 3072, 1, 1)
    unhealthy = Chip.objects.get(node__name="npu-node-910b-01", index=5)
    assert unhealthy.healthy is False
    assert unhealthy.network_id == 1
    chip6 = Chip.objects.get(node__name="npu-node-910b-01", index=6)
    assert (chip6.memory_used, chip6.aicore_used, chip6.aicpu_used) == (8192, 5, 1)
    slice_ = Slice.objects.get(pod_name="npu-pod-910b")
    assert (slice_.template, slice_.memory, slice_.priority, slice_.chip_id) == (
        "vir05_1c_8g",
        8192,
        100000,
        chip6.id,
    )
    assert Slice.objects.count() == 2


def test_pods_before_nodes_link_up_later(guide_cluster, objects):
    writer = ClusterWriter(guide_cluster)
    writer.replace_pods(objects["pods"])
    assert Slice.objects.filter(chip__isnull=True).count() == 2
    writer.replace_nodes(objects["nodes"])
    assert Slice.objects.filter(chip__isnull=True).count() == 0
    assert Chip.objects.get(node__name="npu-node-310p-01", index=0).memory_used == 3072


def test_events_update_usage_and_terminal_pods_release(guide_cluster, objects):
    writer = ClusterWriter(guide_cluster)
    writer.replace_nodes(objects["nodes"])
    writer.replace_pods(objects["pods"])
    second = copy.deepcopy(objects["pods"][0])
    second["metadata"]["name"] = "second"
    writer.apply_pod_events([("ADDED", second)])
    chip0 = Chip.objects.get(node__name="npu-node-310p-01", index=0)
    assert (chip0.slots_used, chip0.memory_used) == (2, 6144)
    done = copy.deepcopy(second)
    done["status"]["phase"] = "Succeeded"
    writer.apply_pod_events([("MODIFIED", done)])
    chip0.refresh_from_db()
    assert (chip0.slots_used, chip0.memory_used) == (1, 3072)
    writer.apply_pod_events([("DELETED", objects["pods"][0])])
    chip0.refresh_from_db()
    assert (chip0.slots_used, chip0.memory_used, chip0.aicore_used) == (0, 0, 0)
    assert not Slice.objects.filter(pod_name="npu-pod-310p").exists()


def test_relist_converges_without_duplicates(guide_cluster, objects):
    writer = ClusterWriter(guide_cluster)
    for _ in range(3):
        writer.replace_nodes(objects["nodes"])
        writer.replace_pods(objects["pods"])
    assert Slice.objects.count() == 2
    assert Chip.objects.count() == 12
    writer.replace_pods(objects["pods"][:1])
    assert list(Slice.objects.values_list("pod_name", flat=True)) == ["npu-pod-310p"]
    assert Chip.objects.get(node__name="npu-node-910b-01", index=6).memory_used == 0


def test_node_removed_and_chip_unregistered(guide_cluster, objects):
    writer = ClusterWriter(guide_cluster)
    writer.replace_nodes(objects["nodes"])
    writer.apply_node_events([("DELETED", objects["nodes"][1])])
    assert Chip.objects.count() == 4
    node = copy.deepcopy(objects["nodes"][0])
    devices = json.loads(
        node["metadata"]["annotations"]["hami.io/node-register-Ascend310P"]
    )[:2]
    node["metadata"]["annotations"]["hami.io/node-register-Ascend310P"] = json.dumps(
        devices
    )
    writer.apply_node_events([("MODIFIED", node)])
    assert Chip.objects.count() == 2


def test_pending_pod_with_reason(guide_cluster, objects):
    writer = ClusterWriter(guide_cluster)
    pod = copy.deepcopy(objects["pods"][0])
    pod["metadata"]["name"] = "waiting"
    pod["metadata"]["annotations"] = {}
    pod["spec"].pop("nodeName")
    pod["status"] = {"phase": "Pending"}
    writer.apply_pod_events([("ADDED", pod)])
    pending = PendingPod.objects.get(name="waiting")
    assert (pending.common_word, pending.memory, pending.priority) == (
        "Ascend310P",
        3072,
        100,
    )
    writer.apply_scheduling_events(
        [
            (
                "ADDED",
                {
                    "involvedObject": {
                        "kind": "Pod",
                        "namespace": "default",
                        "name": "waiting",
                    },
                    "reason": "FailedScheduling",
                    "message": "no chip with 3072 MB free",
                },
            )
        ]
    )
    pending.refresh_from_db()
    assert pending.reason == "no chip with 3072 MB free"
    pod["spec"]["nodeName"] = "npu-node-310p-01"
    pod["status"]["phase"] = "Running"
    writer.apply_pod_events([("MODIFIED", pod)])
    assert not PendingPod.objects.exists()


def test_chip_history_records_placements_and_releases(
    guide_cluster, objects, viewer_client
):
    writer = ClusterWriter(guide_cluster)
    writer.replace_nodes(objects["nodes"])
    writer.replace_pods(objects["pods"])
    from apps.inventory.models import ChipEvent

    assert not ChipEvent.objects.exists()  # the first list is not history
    second = copy.deepcopy(objects["pods"][0])
    second["metadata"]["name"] = "second"
    writer.apply_pod_events([("ADDED", second)])
    writer.apply_pod_events([("DELETED", second)])
    chip0 = Chip.objects.get(node__name="npu-node-310p-01", index=0)
    history = viewer_client.get(f"/api/chips/{chip0.pk}/history/").json()["results"]
    assert [(e["kind"], e["pod_name"], e["template"]) for e in history] == [
        ("released", "second", "vir01"),
        ("placed", "second", "vir01"),
    ]


@pytest.mark.parametrize(
    ("meta", "preemptable"),
    [
        ({}, True),
        ({"annotations": {"volcano.sh/preemptable": "false"}}, False),
        ({"labels": {"volcano.sh/preemptable": "False"}}, False),
        ({"labels": {"volcano.sh/preemptable": "true"}}, True),
        # Volcano reads the annotation first
        (
            {
                "annotations": {"volcano.sh/preemptable": "true"},
                "labels": {"volcano.sh/preemptable": "false"},
            },
            True,
        ),
    ],
)
def test_a_slice_records_whether_volcano_may_evict_it_and_its_queue(
    guide_cluster, objects, meta, preemptable
):
    pod = copy.deepcopy(objects["pods"][0])
    for part, values in meta.items():
        pod["metadata"].setdefault(part, {}).update(values)
    pod["metadata"]["annotations"]["scheduling.volcano.sh/queue-name"] = "research"
    writer = ClusterWriter(guide_cluster)
    writer.replace_nodes(objects["nodes"])
    writer.replace_pods([pod, objects["pods"][1]])

    marked = Slice.objects.get(pod_name=pod["metadata"]["name"])
    assert (marked.preemptable, marked.volcano_queue) == (preemptable, "research")
    other = Slice.objects.get(pod_name=objects["pods"][1]["metadata"]["name"])
    assert (other.preemptable, other.volcano_queue) == (True, "default")


def test_an_event_touches_only_its_own_namespaces_pod(guide_cluster, objects):
    # given the same pod name in two namespaces
    writer = ClusterWriter(guide_cluster)
    writer.replace_nodes(objects["nodes"])
    twin = copy.deepcopy(objects["pods"][0])
    twin["metadata"]["namespace"] = "other-team"
    writer.replace_pods([*objects["pods"], twin])
    name = twin["metadata"]["name"]
    assert Slice.objects.filter(pod_name=name).count() == 2
    # when one of them ends, in a batch with another pod of the first namespace
    # (the stored slices are read by namespace and by name: the batch's pairs
    # cross to the first namespace's twin, which the batch does not name)
    done = copy.deepcopy(twin)
    done["status"]["phase"] = "Failed"
    writer.apply_pod_events([("MODIFIED", done), ("MODIFIED", objects["pods"][1])])
    # then only its slice goes; the other namespace's twin stays as it was
    left = Slice.objects.filter(pod_name=name)
    assert list(left.values_list("namespace", flat=True)) == [
        objects["pods"][0]["metadata"]["namespace"]
    ]
    chip0 = Chip.objects.get(node__name="npu-node-310p-01", index=0)
    assert (chip0.slots_used, chip0.memory_used) == (1, 3072)


def test_a_changed_slice_is_updated_in_place(guide_cluster, objects):
    writer = ClusterWriter(guide_cluster)
    writer.replace_nodes(objects["nodes"])
    writer.replace_pods(objects["pods"])
    before = Slice.objects.get(pod_name="npu-pod-910b")
    moved = copy.deepcopy(objects["pods"][1])
    moved["spec"]["priority"] = 7
    moved["spec"]["priorityClassName"] = "low"
    writer.apply_pod_events([("MODIFIED", moved)])
    after = Slice.objects.get(pod_name="npu-pod-910b")
    assert after.id == before.id
    assert (after.priority, after.priority_class) == (7, "low")
    assert (after.template, after.memory, after.chip_id) == (
        before.template,
        before.memory,
        before.chip_id,
    )


# Real transactions: inside the test's own, the setting would last until its end.
@pytest.mark.django_db(transaction=True)
def test_sync_transactions_do_not_wait_for_the_disk(guide_cluster):
    """The mirror's transactions commit with synchronous_commit off (a crash
    loses at most the last moments, which the next watch brings back); the
    setting is the transaction's own and does not outlive it."""
    from django.db import connection, transaction

    if connection.vendor != "postgresql":
        missing("needs PostgreSQL: synchronous_commit is PostgreSQL's")

    def setting() -> str:
        with connection.cursor() as cursor:
            cursor.execute("SHOW synchronous_commit")
            return cursor.fetchone()[0]

    def locked_elsewhere() -> bool:
        """Whether another connection finds the cluster row locked."""
        from django.db import DatabaseError
        from django.db import connection as its_connection

        found: list[bool] = []

        def probe() -> None:
            try:
                with transaction.atomic():
                    list(
                        Cluster.objects.select_for_update(nowait=True)
                        .filter(pk=guide_cluster.pk)
                        .values_list("pk", flat=True)
                    )
                found.append(False)
            except DatabaseError as exc:
                # lock_not_available, not any failure of the probe
                found.append(getattr(exc.__cause__, "sqlstate", None) == "55P03")
            finally:
                its_connection.close()

        thread = threading.Thread(target=probe)
        thread.start()
        thread.join(10)
        return found == [True]

    writer = ClusterWriter(guide_cluster)
    with transaction.atomic():
        writer._serialize()
        assert setting() == "off"
        # the same statement takes the row lock that makes writers take turns
        assert locked_elsewhere()
    assert setting() == "on"
    assert not locked_elsewhere()


def test_chip_type_shapes_are_read_in_one_query_templates_or_none(
    guide_cluster, django_assert_num_queries
):
    """Every watch batch reads the shapes: one query, and a chip type with no
    templates (yet) is still a chip type whose pods' slices are kept."""

    def chip_type(chip: str, **fields) -> ChipType:
        return ChipType.objects.create(
            cluster=guide_cluster,
            common_word=f"Ascend{chip}",
            chip_name=chip,
            resource_name=f"huawei.com/Ascend{chip}",
            resource_memory_name=f"huawei.com/Ascend{chip}-memory",
            memory_allocatable=8192,
            memory_capacity=8192,
            **fields,
        )

    chip_type("310B", ai_cpu=3)
    unset = chip_type("310C")  # AICPU not set, nor its template's
    unset.templates.create(name="vir02", memory=4096)
    writer = ClusterWriter(guide_cluster)
    with django_assert_num_queries(1):
        writer.refresh_chip_types()
    expected = {
        ct.common_word: {
            t.name: (t.ai_core or 0, t.ai_cpu or 0) for t in ct.templates.all()
        }
        for ct in ChipType.objects.filter(cluster=guide_cluster)
    }
    assert writer._shapes == expected
    assert writer._shapes["Ascend310B"] == {}
    assert writer._shapes["Ascend310C"] == {"vir02": (0, 0)}
    assert writer._chip_aicpu["Ascend310C"] == 0
    assert sum(len(v) for v in expected.values()) >= 5  # the guide's templates
    assert writer._chip_aicpu == {
        ct.common_word: ct.ai_cpu or 0
        for ct in ChipType.objects.filter(cluster=guide_cluster)
    }
