"""The real HAMi scheduler (v2.9.0) places the guide's vNPUs (``--scheduler hami``).

A stack of its own for this module: kubestack runs HAMi as its chart deploys
it (a kube-scheduler with HAMi's scheduler as extender, and HAMi's mutating
webhook), so what the portal assumes of HAMi's scheduler
(``apps/inventory/scheduler.py``: it honours the chip pin) is checked against
the real thing, not against simcluster's model of it.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client

from apps.inventory.hami.annotations import allocated_key, parse_pod_devices
from apps.inventory.hami.deviceconfig import parse_device_config
from apps.inventory.hami.template_rule import FitKind, Scheduler, fit_template
from apps.scheduling.models import Request
from apps.scheduling.pods import uuid_annotation
from harness.portal import (
    Running,
    approve_pending,
    ci_request,
    request_state,
    submit_urgent_vir04,
    token_client,
)
from harness.portal import wait_running as running
from kubestack import hami
from kubestack.scenarios import STOPS_ON_SIGTERM_SECONDS, slice_pod, wait_running
from kubestack.stack import KubeStack
from simcluster import guide_data
from simcluster.controllers.placement import DeviceRequest, hami_rules, pick_on_node
from tests.polling import wait_for
from tests.realstack.accounting import simcluster_node

pytestmark = [pytest.mark.realstack, pytest.mark.slow]

NODE_310P, NODE_910B = guide_data.NODE_310P, guide_data.NODE_910B
SICK = next(i for i, (_, healthy) in enumerate(guide_data.CHIPS_910B) if not healthy)


@pytest.fixture(scope="module")
def hami_stack() -> Iterator[KubeStack]:
    """The guide's cluster with HAMi's scheduler placing its vNPU pods."""
    stack = KubeStack(scenario="guide", seed=7, scheduler="hami").start()
    yield stack
    stack.stop()


@pytest.fixture
def hami_pods(hami_stack: KubeStack) -> Iterator[list[str]]:
    """Names of the pods a test creates in ``default``, deleted after it."""
    created: list[str] = []
    yield created
    for name in created:
        hami_stack.kubectl(
            "delete", "pod", name, "--grace-period=0", "--force", check=False
        )


def _pod(stack: KubeStack, name: str) -> dict[str, Any]:
    return json.loads(stack.kubectl("get", "pod", name, "-o", "json").stdout)


def _create(
    stack: KubeStack,
    created: list[str],
    name: str,
    chip_type: str,
    memory: int,
    annotations: dict[str, str] | None = None,
    grace_seconds: int | None = None,
) -> None:
    """A vNPU pod as a HAMi user writes it: no schedulerName (the webhook sets it)."""
    pod = slice_pod(name, chip_type, memory, grace_seconds=grace_seconds)
    del pod["spec"]["schedulerName"]
    pod["metadata"]["annotations"].update(annotations or {})
    created.append(name)
    stack.kubectl("create", "-f", "-", stdin=json.dumps(pod))


def _live_device_config(stack: KubeStack) -> str:
    """The device config HAMi's scheduler reads, as the ConfigMap holds it."""
    found = stack.kubectl(
        "get",
        "configmap",
        "-n",
        hami.NAMESPACE,
        hami.DEVICE_CONFIGMAP[1],
        "-o",
        "json",
    ).stdout
    return json.loads(found)["data"][hami.DEVICE_CONFIG_KEY]


def _chips(pod: dict[str, Any], chip_type: str) -> list[str]:
    annotations = pod["metadata"].get("annotations") or {}
    return [
        device.uuid
        for container in parse_pod_devices(annotations[allocated_key(chip_type)])
        for device in container
    ]


def _events(stack: KubeStack, name: str) -> list[dict[str, Any]]:
    found = stack.kubectl(
        "get",
        "events",
        "--field-selector",
        f"involvedObject.name={name}",
        "-o",
        "json",
    ).stdout
    return json.loads(found)["items"]


def test_the_guide_pods_are_placed_by_the_real_hami_scheduler(hami_stack):
    # Given the guide's two slice pods, created without a schedulerName
    # Then HAMi's webhook gave them HAMi's scheduler, and HAMi's extender
    # chose the chip (its annotations) and bound them (its events)
    assert hami_stack.scenario.placed == [
        ("default", "npu-pod-310p"),
        ("default", "npu-pod-910b"),
    ]
    for name, chip_type, node, template in (
        ("npu-pod-310p", "Ascend310P", NODE_310P, "vir01"),
        ("npu-pod-910b", "Ascend910B4", NODE_910B, "vir05_1c_8g"),
    ):
        pod = _pod(hami_stack, name)
        annotations = pod["metadata"]["annotations"]
        assert pod["spec"]["schedulerName"] == hami.SCHEDULER_NAME
        assert pod["spec"]["nodeName"] == node
        assert annotations["hami.io/vgpu-node"] == node
        assert annotations["hami.io/bind-phase"] == "success"
        assert len(_chips(pod, chip_type)) == 1
        runtime = json.loads(annotations[f"huawei.com/{chip_type}"])
        assert [entry.get("temp") for entry in runtime] == [template]
        events = _events(hami_stack, name)
        reasons = {event["reason"] for event in events}
        assert {"FilteringSucceed", "BindingSucceed"} <= reasons, reasons
        # kube-scheduler reports under its profile's name (events.k8s.io)
        assert any(
            event["reason"] == "Scheduled"
            and hami.SCHEDULER_NAME
            in (event.get("reportingComponent"), event["source"].get("component"))
            for event in events
        ), events


def test_the_webhook_trims_a_request_to_its_template(hami_stack, hami_pods):
    # Given a pod asking for 4000 MB of a 310P3
    _create(hami_stack, hami_pods, "hami-trim", "Ascend310P", 4000)
    # Then HAMi's webhook made it vir02's 6144 MB, and it runs as a vir02
    pod = _pod(hami_stack, "hami-trim")
    limits = pod["spec"]["containers"][0]["resources"]["limits"]
    assert limits["huawei.com/Ascend310P-memory"] == "6144"
    wait_running(hami_stack, [("default", "hami-trim")], timeout=90)
    runtime = json.loads(
        _pod(hami_stack, "hami-trim")["metadata"]["annotations"][
            "huawei.com/Ascend310P"
        ]
    )
    assert [entry.get("temp") for entry in runtime] == ["vir02"]


@pytest.mark.parametrize(
    ("chip_type", "chips", "index", "memory"),
    [
        ("Ascend310P", guide_data.CHIPS_310P, 3, 3072),
        ("Ascend910B4", guide_data.CHIPS_910B, 7, 16384),
    ],
)
def test_a_pod_pinned_to_a_chip_lands_on_that_chip(
    hami_stack, hami_pods, chip_type, chips, index, memory
):
    # Given a pod pinned, with the portal's own annotation, to one chip
    uuid = chips[index][0]
    name = f"hami-pin-{chip_type.lower()}"
    _create(
        hami_stack,
        hami_pods,
        name,
        chip_type,
        memory,
        {uuid_annotation(chip_type): uuid},
    )
    # Then HAMi's scheduler put its vNPU on that chip and the node created it
    wait_running(hami_stack, [("default", name)], timeout=90)
    assert _chips(_pod(hami_stack, name), chip_type) == [uuid]


def test_a_roll_of_the_hami_deployment_restarts_the_scheduler(hami_stack, hami_pods):
    # Given HAMi's scheduler process as started
    before = hami_stack.processes["hami-scheduler"]
    restarts = hami_stack.supervisor.hami_restarts
    # When its Deployment is rolled (as the portal does after a config edit)
    hami_stack.kubectl(
        "rollout", "restart", "-n", hami.NAMESPACE, f"deployment/{hami.DEPLOYMENT[1]}"
    )
    # Then a new process reads the device config and places pods again
    wait_for(
        lambda: hami_stack.supervisor.hami_restarts > restarts,
        "the supervisor to restart HAMi's scheduler",
        timeout=90,
    )
    assert hami_stack.processes["hami-scheduler"] is not before
    _create(hami_stack, hami_pods, "hami-after-roll", "Ascend310P", 3072)
    wait_running(hami_stack, [("default", "hami-after-roll")], timeout=90)


def test_hami_binds_a_pod_pinned_to_a_chip_marked_unhealthy_and_it_runs(
    hami_stack, hami_pods
):
    """HAMi v2.9.0's Ascend ``Fit`` (pkg/device/ascend/device.go) never reads a
    chip's health, and the device plugin's ``Allocate`` checks none either: a
    pod pinned to the chip the plugin registers unhealthy is bound there and
    runs. (simcluster's binder skipped sick chips under HAMi until this showed
    otherwise; the portal pins healthy chips only.)"""
    sick = guide_data.CHIPS_910B[SICK][0]
    registered = {
        device.id: device
        for device in hami_stack.device_plugin.registered[NODE_910B] or []
    }
    assert registered[sick].health is False
    _create(
        hami_stack,
        hami_pods,
        "hami-sick",
        "Ascend910B4",
        8192,
        {uuid_annotation("Ascend910B4"): sick},
    )
    wait_running(hami_stack, [("default", "hami-sick")], timeout=90)
    annotations = _pod(hami_stack, "hami-sick")["metadata"].get("annotations") or {}
    assert annotations[allocated_key("Ascend910B4")].split(",")[0] == sick
    assert not any(
        event["reason"] == "FilteringFailed"
        for event in _events(hami_stack, "hami-sick")
    )


# --- the portal on the real HAMi scheduler -------------------------------------------


@pytest.fixture
def hami_cluster(db, hami_stack: KubeStack, settings, tmp_path) -> Iterator[Any]:
    """Cluster ``hami`` in the portal, pointing at the HAMi stack, synced once;
    the portal's requests are cleaned up after the test."""
    from apps.inventory.choices import ConnectionKind, SchedulerSetting
    from apps.inventory.services import cluster_create
    from apps.inventory.sync.engine import sync_once

    settings.LOCK_DIR = str(tmp_path / "locks")
    settings.PREEMPTION_AUTO_APPROVE_PRIORITY_GAP = None
    kubeconfig = hami_stack.write_kubeconfig(tmp_path / "kubeconfig")
    cluster = cluster_create(
        actor=None,
        name="hami",
        connection=ConnectionKind.KUBECONFIG,
        kubeconfig=kubeconfig.read_text(),
        scheduler=SchedulerSetting.HAMI,
    )
    sync_once(cluster)
    yield cluster
    hami_stack.force_delete_pods("default", "vnpu-portal/request")


def _portal_chip(request_id: int) -> str:
    return Request.objects.get(pk=request_id).chip_uuid


@pytest.mark.django_db(transaction=True)
def test_the_portal_books_a_chip_and_the_real_hami_runs_the_pod_there(
    hami_stack, hami_cluster
):
    """Under HAMi the chip the portal books is the chip the pod gets: the
    request shows it before the bind, and the pod's allocation is that chip."""
    ci = token_client("ci-bot", "operator")
    with Running(hami_cluster):
        submitted = ci.post("/api/requests/", ci_request(cluster="hami"), format="json")
        assert submitted.status_code == 201, submitted.json()
        request_id = submitted.json()["id"]
        booked = wait_for(
            lambda: request_state(ci, request_id)["chip_uuid"],
            "the booked chip to be shown before the bind",
            timeout=60,
        )
        shown = running(ci, request_id, timeout=90)
        pod = _pod(hami_stack, Request.objects.get(pk=request_id).pod_name)
    assert shown["chip_uuid"] == booked
    assert _chips(pod, "Ascend310P") == [booked]
    assert (shown["template_booked"], shown["memory_booked"]) == ("vir02", 6144)


@pytest.mark.django_db(transaction=True)
def test_an_approved_preemption_on_the_real_hami_ends_on_the_booked_chip(
    hami_stack, hami_cluster, hami_pods
):
    """Every 310P chip holds a batch-low vir04 (no second fits); an urgent
    vir04 is proposed one victim, approved, and runs on exactly the chip the
    proposal freed (HAMi honours the pin; Volcano would pick any freed chip)."""
    fillers = [f"hami-filler-{i}" for i in range(len(guide_data.CHIPS_310P))]
    for name in fillers:
        _create(
            hami_stack,
            hami_pods,
            name,
            "Ascend310P",
            12288,
            grace_seconds=STOPS_ON_SIGTERM_SECONDS,
        )
    wait_running(hami_stack, [("default", n) for n in fillers], timeout=90)
    operator, admin = (
        token_client("urgent-bot", "operator"),
        token_client("boss", "admin"),
    )
    with Running(hami_cluster) as running_portal:
        running_portal.wait_mirrored(("default", name) for name in fillers)
        request_id = submit_urgent_vir04(operator, "hami")
        proposal = approve_pending(admin, request_id)
        shown = running(operator, request_id, timeout=120)
    (victim,) = [v["pod"] for v in proposal["victims"]]
    assert victim in fillers
    assert shown["chip_uuid"] == proposal["chip_uuid"]
    assert _portal_chip(request_id) == proposal["chip_uuid"]


def test_the_fit_answer_is_the_real_hami_webhooks_template_for_every_size(
    hami_stack, hami_pods
):
    """At every template's edges (one below, at, one above) and at the
    card's, the memory HAMi's webhook writes into the pod (its template rule,
    ``pkg/device/ascend/device.go`` ``MutateAdmission`` / ``trimMemory``) is
    the portal's fit answer under HAMi (``fit_template``)."""
    text = _live_device_config(hami_stack)
    compared = 0
    for chip_type in parse_device_config(text).chip_types():
        word = chip_type.common_word
        sizes = {1, chip_type.memory_allocatable}
        for template in chip_type.templates:
            sizes |= {template.memory - 1, template.memory, template.memory + 1}
        for size in sorted(s for s in sizes if 0 < s <= chip_type.memory_allocatable):
            fit = fit_template(chip_type, size, scheduler=Scheduler.HAMI)
            if fit.kind is not FitKind.TEMPLATE:
                continue
            name = f"fit-{word.lower()}-{size}"
            _create(hami_stack, hami_pods, name, word, size)
            limits = _pod(hami_stack, name)["spec"]["containers"][0]["resources"][
                "limits"
            ]
            assert limits[f"huawei.com/{word}-memory"] == str(fit.memory), (
                f"{word} {size} MB: webhook {limits}, portal {fit}"
            )
            compared += 1
    assert compared >= 12


def test_the_real_hami_holds_a_terminating_pods_room(hami_stack, hami_pods):
    """HAMi v2.9.0 keeps a terminating pod in its cache with its devices
    (``pkg/scheduler/scheduler.go`` ``onAddPod``: ``IsPodTerminating`` ->
    ``UpdatePod``; only a Failed or Succeeded pod, or the delete event, frees
    them), so a pod pinned to that room waits, where Volcano binds into it at
    once (tests/realstack/test_node_side.py). It binds once the pod is gone."""
    uuid = guide_data.CHIPS_310P[3][0]
    pin = {uuid_annotation("Ascend310P"): uuid}
    _create(hami_stack, hami_pods, "room-holder", "Ascend310P", 12288, pin)
    wait_running(hami_stack, [("default", "room-holder")], timeout=90)
    # no second vir04 fits the chip (21527 MB): the holder leaves, slowly
    hami_stack.kubectl("delete", "pod", "room-holder", "--wait=false")  # 30 s grace
    _create(hami_stack, hami_pods, "room-taker", "Ascend310P", 12288, pin)

    def refused() -> bool:
        return any(
            event["reason"] in ("FailedScheduling", "FilteringFailed")
            for event in _events(hami_stack, "room-taker")
        )

    wait_for(refused, "HAMi to refuse the taker while the holder terminates", 60)
    holder = _pod(hami_stack, "room-holder")
    assert holder["metadata"].get("deletionTimestamp"), "still terminating"
    assert not _pod(hami_stack, "room-taker")["spec"].get("nodeName")
    # once the holder is gone, the taker is bound to the pinned chip and runs
    hami_stack.kubectl(
        "delete", "pod", "room-holder", "--grace-period=0", "--force", check=False
    )
    wait_running(hami_stack, [("default", "room-taker")], timeout=120)
    assert _chips(_pod(hami_stack, "room-taker"), "Ascend310P") == [uuid]


def test_simclusters_hami_picks_the_chip_the_real_hami_picks(hami_stack, hami_pods):
    """Differential: before each of a run of unpinned vir01 and vir02 pods,
    simcluster's placement (``pick_on_node`` under ``hami_rules``, the chart's
    ``spread``) is asked for the chip from the real cluster's usage; the real
    HAMi scheduler then places the pod on that same chip, every time."""
    text = _live_device_config(hami_stack)
    (chip_type,) = [
        c
        for c in parse_device_config(text).chip_types()
        if c.common_word == "Ascend310P"
    ]
    core = client.CoreV1Api(hami_stack.kubernetes_client())
    for step, memory in enumerate([3072, 6144, 3072, 3072, 6144, 3072]):
        node = simcluster_node(core, NODE_310P, "Ascend310P")
        fit = fit_template(chip_type, memory, scheduler=Scheduler.HAMI)
        request = DeviceRequest(0, chip_type, 1, memory)
        (pick,) = pick_on_node(
            node, [request], [fit], {}, hami_rules("spread"), random.Random(0)
        )
        name = f"diff-{step}"
        _create(hami_stack, hami_pods, name, "Ascend310P", memory)
        wait_running(hami_stack, [("default", name)], timeout=90)
        assert _chips(_pod(hami_stack, name), "Ascend310P") == [pick.chip.uuid], (
            f"step {step}: simcluster picks chip {pick.chip.index}"
        )
