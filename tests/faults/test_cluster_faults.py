"""simcluster faults (latency, 500s, 429s, 409s, dropped watches) during sync, publish and admission.

Whatever the API server does, the portal must end up with exactly the
cluster's state (sync), write the device config once or say why not
(publish), and create exactly one pod per request (admission): nothing lost,
nothing done twice.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection
from kubernetes import client
from kubernetes.client.rest import ApiException
from urllib3.exceptions import HTTPError

from apps.inventory.models import DeviceConfigVersion, Slice, Template
from apps.inventory.sync.engine import sync_once, sync_run
from tests.faults.figures import record_and_check
from tests.guide import POD_310P
from tests.polling import wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]
FAULTS = {
    "latency_ms": 5,
    "error_500_rate": 0.15,
    "error_429_rate": 0.1,
    "conflict_rate": 0.2,
    "watch_drop_after_events": 3,
}


def retrying(call: Callable[[], Any], timeout: float = 60) -> Any:
    """The test's own calls to the faulty server: try until one gets through
    (a failed call is "not yet"; the last failure is in the timeout's message)."""
    # A one-item list is truthy whatever the call answered.
    answered = wait_for(
        lambda: [call()],
        "a call to get through the faulty server",
        timeout,
        0.02,
        ignore=(ApiException, HTTPError, OSError),
    )
    return answered[0]


def _slice_pod(name: str, memory: int) -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "spec": {
            "schedulerName": "volcano",
            "containers": [
                {
                    "name": "main",
                    "image": "busybox",
                    "resources": {
                        "limits": {
                            "huawei.com/Ascend310P": 1,
                            "huawei.com/Ascend310P-memory": memory,
                        }
                    },
                }
            ],
        },
    }


def _holding(sim) -> set[tuple[str, str]]:
    """Pods that hold a slice in the cluster right now (HAMi's accounting)."""
    from simcluster import resources

    _, pods = sim.store.list(resources.POD)
    held = set()
    for pod in pods:
        annotations = pod.obj["metadata"].get("annotations") or {}
        phase = (pod.obj.get("status") or {}).get("phase")
        if phase in ("Succeeded", "Failed"):
            continue
        if any(k.endswith("-devices-allocated") and v for k, v in annotations.items()):
            held.add((pod.obj["metadata"]["namespace"], pod.obj["metadata"]["name"]))
    return held


def test_sync_under_every_fault_ends_equal_to_the_cluster(sim, sim_cluster, tmp_path):
    core = client.CoreV1Api(sim.kubernetes_client(tmp_path / "kc"))
    stop = threading.Event()

    def run() -> None:
        try:
            sync_run(sim_cluster.pk, seconds=120, watch_timeout=2, stop=stop)
        finally:
            connection.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        # given a faulty API server, when pods come and go
        sim.set_faults(**FAULTS)
        for i in range(24):
            retrying(
                lambda i=i: core.create_namespaced_pod(
                    "default", _slice_pod(f"fault-{i}", [3072, 6144][i % 2])
                )
            )
        for i in range(0, 24, 3):
            retrying(
                lambda i=i: core.delete_namespaced_pod(
                    f"fault-{i}", "default", grace_period_seconds=0
                )
            )

        def hit() -> bool:
            """the watch was dropped and calls failed while the pods changed"""
            done = sim.faults.injected
            return done.get("watch_drop", 0) > 0 and (
                done.get("500", 0) + done.get("429", 0) > 0
            )

        wait_for(hit, timeout=30)
        injected = dict(sim.faults.injected)
        sim.reset_faults()

        # then sync catches up by itself: exactly the slices the cluster holds
        def mirrored() -> bool:
            """the database's slices equal the cluster's"""
            stored = set(
                Slice.objects.filter(cluster=sim_cluster).values_list(
                    "namespace", "pod_name"
                )
            )
            return stored == _holding(sim) and any(
                n.startswith("fault-") for _, n in stored
            )

        wait_for(mirrored, timeout=40)
    finally:
        stop.set()
        thread.join(timeout=30)
    assert injected.get("watch_drop", 0) > 0
    assert injected.get("500", 0) + injected.get("429", 0) > 0
    holding = _holding(sim)
    stored = set(
        Slice.objects.filter(cluster=sim_cluster).values_list("namespace", "pod_name")
    )
    record_and_check(
        "sync under faults",
        injected=injected,
        pods_created=24,
        pods_deleted=8,
        slices=len(holding),
        lost=len(holding - stored),  # held on the cluster, missing in the portal
        duplicated=len(stored - holding),  # still shown after the pod went
    )


def test_publish_under_conflicts_and_errors_writes_once(
    sim, sim_cluster, operator_client, tmp_path
):
    template = Template.objects.get(chip_type__cluster=sim_cluster, name="vir01")
    edited = operator_client.patch(
        f"/api/templates/{template.pk}/", {"memory": 4096}, format="json"
    )
    assert edited.status_code == 200, edited.json()
    sim.set_faults(latency_ms=5, error_500_rate=0.3, conflict_rate=0.5)
    answers = []
    for _ in range(30):
        answer = operator_client.post(
            f"/api/clusters/{sim_cluster.pk}/publish/",
            {"reason": "under faults", "confirm_breaking": [POD_310P]},
            format="json",
        )
        answers.append(answer.status_code)
        body = answer.json()
        assert answer.status_code in (201, 409, 503), body
        assert body.get("code") or answer.status_code == 201
        if answer.status_code == 201:
            break
    injected = dict(sim.faults.injected)
    sim.reset_faults()
    assert answers[-1] == 201, answers
    # the ConfigMap holds exactly the published version, stored once
    core = client.CoreV1Api(sim.kubernetes_client(tmp_path / "kc"))
    live = core.read_namespaced_config_map("hami-scheduler-device", "kube-system").data[
        "device-config.yaml"
    ]
    published = DeviceConfigVersion.objects.filter(
        cluster=sim_cluster, source="published"
    )
    record_and_check(
        "publish under faults",
        injected=injected,
        attempts=len(answers),
        answers=answers,
        published=published.count(),
        lost=int("4096" not in live),  # the edit is not live
        duplicated=published.count() - 1,  # versions recorded for one publish
    )
    assert published.get().text == live


def test_admission_under_faults_creates_one_pod_per_request(
    sim, sim_cluster, operator, tmp_path
):
    from apps.scheduling.choices import RequestState
    from apps.scheduling.models import Request, Reservation
    from apps.scheduling.passes import scheduling_pass
    from apps.scheduling.services.requests import request_create

    core = client.CoreV1Api(sim.kubernetes_client(tmp_path / "kc"))
    sim.set_faults(
        latency_ms=5, error_500_rate=0.2, error_429_rate=0.1, conflict_rate=0.2
    )
    requests = []
    for i in range(6):
        created, _ = request_create(
            actor=operator,
            cluster=sim_cluster.pk,
            namespace="default",
            chip_type="Ascend310P",
            memory=3072,
            priority="batch-low",
            workload={"image": "busybox"},
            idempotency_key=f"fault-{i}",
        )
        requests.append(created)

    pass_errors: list[str] = []

    def step() -> None:
        # A pass or a sync that fails is retried by the next one (beat's job);
        # the failures are counted, not hidden.
        for work in (
            lambda: scheduling_pass(sim_cluster.pk),
            lambda: sync_once(sim_cluster),
        ):
            try:
                work()
            except Exception as exc:
                pass_errors.append(type(exc).__name__)

    for _ in range(15):
        step()
    injected = dict(sim.faults.injected)
    sim.reset_faults()

    def all_running() -> bool:
        """every request Running"""
        step()
        states = set(
            Request.objects.filter(pk__in=[r.pk for r in requests]).values_list(
                "state", flat=True
            )
        )
        return states == {RequestState.RUNNING}

    wait_for(all_running, timeout=40)
    # exactly one pod per request, and no reservation left behind
    pods_per_request = [
        len(
            retrying(
                lambda request=request: core.list_namespaced_pod(
                    "default", label_selector=f"vnpu-portal/request={request.pk}"
                )
            ).items
        )
        for request in requests
    ]
    assert (
        not Reservation.objects.filter(request__state=RequestState.RUNNING)
        .exclude(request__in=requests)
        .exists()
    )
    ours = [
        p
        for p in core.list_namespaced_pod("default").items
        if p.metadata.name.startswith("vnpu-req-")
    ]
    record_and_check(
        "admission under faults",
        injected=injected,
        requests=len(requests),
        pods=len(ours),
        lost=pods_per_request.count(0),
        duplicated=sum(n - 1 for n in pods_per_request if n > 1)
        + (len(ours) - sum(pods_per_request)),  # pods no request owns
    )
